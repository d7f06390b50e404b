import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ENV_VARIABLES } from '../../src/config.js';
import { PROJECT_ROOT } from '../../src/paths.js';

describe('README', () => {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');

  it('documents every environment variable the service reads', () => {
    const missing = ENV_VARIABLES.filter((name) => !readme.includes(`\`${name}\``));
    assert.deepEqual(missing, []);
  });

  it('shows the two commands and the test command', () => {
    assert.ok(readme.includes('npm install') && readme.includes('npm start') && readme.includes('npm test'));
  });
});
