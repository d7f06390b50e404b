import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CLIENT_SCHEMA_FILE, generatedOpenApiFiles, OPENAPI_FILE } from '../../../src/cli/openapi.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { openApiDocument } from './openapi-document.js';

/** Fails, naming the first line that differs (not a diff of 300 KB), unless `file` holds exactly `expected`. */
function assertFresh(file: string, expected: string): void {
  const actual = readFileSync(file, 'utf8');
  if (actual === expected) return;
  const [a, e] = [actual.split('\n'), expected.split('\n')];
  const line = a.findIndex((l, i) => l !== e[i]);
  const at = line < 0 ? a.length : line;
  assert.fail(
    `${path.relative(PROJECT_ROOT, file)} is stale: run \`npm run openapi\`. First difference at line ${at + 1}:\n` +
      `  file:      ${a[at] ?? '(end)'}\n  generated: ${e[at] ?? '(end)'}`,
  );
}

describe('the OpenAPI document in the repository (openapi/intake.openapi.json) and the typed client generated from it', () => {
  let generated: { document: string; schema: string };
  before(async function () {
    this.timeout(60_000);
    generated = await generatedOpenApiFiles();
  });

  it('is the document the API serves: `npm run openapi` after changing a route', () => {
    assertFresh(OPENAPI_FILE, generated.document);
  });

  it("has the typed client's types generated from it: `npm run openapi` writes clients/typescript/src/schema.d.ts", () => {
    assertFresh(CLIENT_SCHEMA_FILE, generated.schema);
  });

  it('differs from /openapi.json only in its fixed server URL and key order', async () => {
    const served = await openApiDocument();
    const written = JSON.parse(generated.document) as Record<string, unknown>;
    assert.deepEqual(written.servers, [{ url: 'http://localhost:8080' }]);
    assert.deepEqual({ ...written, servers: [] }, JSON.parse(JSON.stringify({ ...served, servers: [] })));
  });
});
