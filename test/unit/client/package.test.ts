import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/paths.js';

const read = (file: string) =>
  JSON.parse(readFileSync(path.join(PROJECT_ROOT, file), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };

describe('the typed client package (clients/typescript/package.json)', () => {
  it("pins each of its dependencies to the exact version the root installs (CI's `npm ci` runs at the root only)", () => {
    const root = read('package.json');
    const client = read('clients/typescript/package.json');
    const rootVersions = { ...root.dependencies, ...root.devDependencies };
    for (const [name, version] of Object.entries({ ...client.dependencies, ...client.devDependencies })) {
      assert.match(version, /^\d+\.\d+\.\d+$/, `${name}: an exact version`);
      assert.equal(rootVersions[name], version, `${name}: the root's version`);
    }
  });
});
