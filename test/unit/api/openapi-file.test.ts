import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { CLIENT_SCHEMA_FILE, generatedOpenApiFiles, OPENAPI_FILE } from '../../../src/cli/openapi.js';
import { openApiDocument } from './openapi-document.js';

describe('the OpenAPI document in the repository (openapi/intake.openapi.json) and the typed client generated from it', () => {
  let generated: { document: string; schema: string };
  before(async function () {
    this.timeout(60_000);
    generated = await generatedOpenApiFiles();
  });

  it('is the document the API serves: `npm run openapi` after changing a route', () => {
    assert.equal(readFileSync(OPENAPI_FILE, 'utf8'), generated.document, '`npm run openapi` rewrites openapi/intake.openapi.json');
  });

  it("has the typed client's types generated from it: `npm run openapi` writes clients/typescript/src/schema.d.ts", () => {
    assert.equal(
      readFileSync(CLIENT_SCHEMA_FILE, 'utf8'),
      generated.schema,
      '`npm run openapi` rewrites clients/typescript/src/schema.d.ts',
    );
  });

  it('differs from /openapi.json only in its fixed server URL and key order', async () => {
    const served = await openApiDocument();
    const written = JSON.parse(generated.document) as Record<string, unknown>;
    assert.deepEqual(written.servers, [{ url: 'http://localhost:8080' }]);
    assert.deepEqual({ ...written, servers: [] }, JSON.parse(JSON.stringify({ ...served, servers: [] })));
  });
});
