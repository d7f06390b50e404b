import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { createTestOrg } from '../../../harness/fixtures.js';

/** Links the API builds (upload URLs, MCP metadata) never come from headers a client may forge: only a trusted proxy's, or PUBLIC_BASE_URL. */
describe('public base URL and forwarded headers', () => {
  let pool: DatabasePool;
  const apis: TestApi[] = [];
  const start = async (env: Record<string, string>) => {
    const api = await startTestApi({ pool, config: testConfig(env) });
    apis.push(api);
    return api;
  };
  const resource = async (api: TestApi, headers: Record<string, string>) =>
    (await api.request('/.well-known/oauth-protected-resource', { headers })).body.resource as string;
  const forged = { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' };

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
  });
  after(async () => {
    for (const api of apis) await api.close();
    await pool?.end();
  });

  it('ignores X-Forwarded-Host and -Proto by default', async () => {
    const api = await start({});
    assert.equal(await resource(api, forged), `${api.url}/mcp`);
  });

  it('believes them with TRUST_PROXY (a proxy the operator runs sets them) for links, the MCP resource and its authorization server alike', async () => {
    const api = await start({ TRUST_PROXY: 'true' });
    const org = await createTestOrg(pool);
    const key = { 'X-Service-Api-Key': org.apiKey };
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: key,
      json: { record: { externalId: 'fwd-1' }, name: 'Call' },
    });
    assert.equal(created.status, 201);
    const upload = await api.request(`/v3/rest/recordings/${created.body.id as string}/uploads`, {
      method: 'POST',
      headers: { ...key, ...forged },
      json: { fileName: 'a.flac', fileSize: 10 },
    });
    assert.equal(upload.status, 201);
    assert.match(upload.body.uploadUrl as string, /^https:\/\/evil\.example\//);
    // Without PUBLIC_BASE_URL each base URL is an issuer of its own (issue 29.2): the resource and the
    // authorization server it names are that base's, so a token is for the base it was issued at.
    const metadata = (await api.request('/.well-known/oauth-protected-resource', { headers: forged })).body as {
      resource: string;
      authorization_servers: string[];
    };
    assert.deepEqual([metadata.resource, metadata.authorization_servers], ['https://evil.example/mcp', ['https://evil.example']]);
    const server = (await api.request('/.well-known/oauth-authorization-server', { headers: forged })).body as { issuer: string };
    assert.equal(server.issuer, 'https://evil.example');
  });

  it('uses PUBLIC_BASE_URL whatever the headers say', async () => {
    const api = await start({ PUBLIC_BASE_URL: 'https://intake.example.com', TRUST_PROXY: 'true' });
    assert.equal(await resource(api, { ...forged, Host: 'other.example' }), 'https://intake.example.com/mcp');
  });
});
