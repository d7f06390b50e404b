import { strict as assert } from 'node:assert';
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { TOOL_SCOPES } from '../../../src/oauth/server.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TestClientProvider } from '../../helpers/mcp-client.js';
import { authorizeInBrowser, createSignInUser, TEST_PASSWORD } from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, createTestUser } from '../../../harness/fixtures.js';

const PASSWORD = TEST_PASSWORD;
const REDIRECT = 'http://127.0.0.1:48213/callback';

/**
 * The official MCP TypeScript SDK client against the API: discovery from the 401, dynamic
 * registration, authorization (sign-in and consent as forms), token exchange, a tool call; then
 * what the token may not do.
 */
describe('MCP over OAuth: a standard client connects with no token pasted anywhere', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let user: { userId: string; email: string };

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool, databaseUrl });
    user = await createSignInUser(pool);
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const rpc = (token: string, body: unknown) =>
    fetch(`${api.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(body),
    });

  it('discovers, registers, signs the user in with their approval, and calls a tool; the token opens nothing else', async () => {
    const provider = new TestClientProvider(REDIRECT);
    const first = new Client({ name: 'sdk-test', version: '1.0.0' });
    await assert.rejects(
      first.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: provider })),
      UnauthorizedError,
    );
    assert.ok(provider.info?.client_id, 'registered dynamically');
    const authorizationUrl = provider.authorizationUrl!;
    assert.equal(`${authorizationUrl.origin}${authorizationUrl.pathname}`, `${api.url}/oauth/authorize`);
    assert.equal(authorizationUrl.searchParams.get('resource'), `${api.url}/mcp`);
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');

    const back = await authorizeInBrowser(api.url, authorizationUrl, { email: user.email, password: PASSWORD });
    const code = back.searchParams.get('code');
    assert.ok(code, back.toString());
    const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: provider });
    await transport.finishAuth(code);
    assert.ok(provider.saved?.access_token);
    assert.ok(provider.saved.refresh_token);

    const client = new Client({ name: 'sdk-test', version: '1.0.0' });
    await client.connect(transport);
    // Every tool has its scope: a new tool cannot slip past the consent the user gave.
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), Object.keys(TOOL_SCOPES).sort());
    const created = (await client.callTool({ name: 'create-project', arguments: { name: 'Connected over OAuth' } })) as CallToolResult;
    assert.notEqual(created.isError, true, JSON.stringify(created));
    assert.equal((created.structuredContent as { name: string }).name, 'Connected over OAuth');
    await client.close();

    // Issued for the MCP resource: the REST API does not take it.
    const rest = await fetch(`${api.url}/v3/rest/recordings`, { headers: { authorization: `Bearer ${provider.saved.access_token}` } });
    assert.equal(rest.status, 401);

    // Revoked (RFC 7009): refused at once.
    const revoke = await fetch(`${api.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: provider.saved.access_token, client_id: provider.info.client_id }).toString(),
    });
    assert.equal(revoke.status, 200);
    const afterRevoke = await rpc(provider.saved.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(afterRevoke.status, 401);
    assert.match(afterRevoke.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  it('works through either loopback name without PUBLIC_BASE_URL: each is its own issuer, and a token is for the name it was issued at (issue 29.2)', async () => {
    for (const host of ['localhost', '127.0.0.1']) {
      const base = api.url.replace('127.0.0.1', host);
      const provider = new TestClientProvider(REDIRECT);
      const probe = new Client({ name: 'sdk-test', version: '1.0.0' });
      await assert.rejects(
        probe.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider })),
        UnauthorizedError,
      );
      assert.equal(provider.authorizationUrl!.origin, base);
      const back = await authorizeInBrowser(base, provider.authorizationUrl!, { email: user.email, password: PASSWORD });
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
      await transport.finishAuth(back.searchParams.get('code')!);
      const client = new Client({ name: 'sdk-test', version: '1.0.0' });
      await client.connect(transport);
      const listed = (await client.callTool({ name: 'create-project', arguments: { name: `Through ${host}` } })) as CallToolResult;
      assert.notEqual(listed.isError, true, JSON.stringify(listed));
      await client.close();
      // Issued for <base>/mcp: the other loopback name is another resource.
      const other = host === 'localhost' ? api.url : api.url.replace('127.0.0.1', 'localhost');
      const elsewhere = await fetch(`${other}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${provider.saved!.access_token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(elsewhere.status, 401);
    }
  });

  it("a token without a tool's scope gets 403 insufficient_scope naming it; with it, the call goes through", async () => {
    const reg = (await (
      await fetch(`${api.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          client_name: 'Reader',
        }),
      })
    ).json()) as { client_id: string };
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(
      `${api.url}/oauth/authorize?${new URLSearchParams({
        client_id: reg.client_id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'projects:read',
        resource: `${api.url}/mcp`,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString()}`,
    );
    const code = (await authorizeInBrowser(api.url, url, { email: user.email, password: PASSWORD })).searchParams.get('code')!;
    const tokens = (await (
      await fetch(`${api.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          client_id: reg.client_id,
          resource: `${api.url}/mcp`,
        }).toString(),
      })
    ).json()) as { access_token: string; scope: string };
    assert.equal(tokens.scope, 'projects:read');
    const upload = await rpc(tokens.access_token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'create-project', arguments: { name: 'Not allowed' } },
    });
    assert.equal(upload.status, 403);
    assert.deepEqual(await upload.json(), {
      message: 'The tool create-project needs the scope sessions:associate, which this token was not granted.',
      errorCode: 'insufficient_scope',
    });
    assert.match(upload.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="sessions:associate"/);
    const read = await rpc(tokens.access_token, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'get-project', arguments: { publicId: 'missing' } },
    });
    assert.equal(read.status, 200);
  });

  it("refuses the CLI's user access tokens (no approval, no scopes): 401 with the challenge; MCP_ACCEPT_CLI_TOKENS takes them in development, never in production", async () => {
    const cliUser = await createTestUser(pool, (await createTestOrg(pool)).organizationId);
    const refused = await rpc(cliUser.accessToken, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(refused.status, 401);
    assert.match(
      refused.headers.get('www-authenticate') ?? '',
      new RegExp(
        `^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="${api.url}/\\.well-known/oauth-protected-resource/mcp", scope="projects:read sessions:upload sessions:associate"$`,
      ),
    );
    assert.equal(((await refused.json()) as { errorCode: string }).errorCode, 'invalid_credentials');

    const dev = await startTestApi({ pool, config: testConfig({ NODE_ENV: 'development', MCP_ACCEPT_CLI_TOKENS: 'true' }) });
    try {
      const res = await fetch(`${dev.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${cliUser.accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(res.status, 200, 'the development switch');
    } finally {
      await dev.close();
    }
    assert.throws(
      () => testConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://intake.example.com', MCP_ACCEPT_CLI_TOKENS: 'true' }),
      /MCP_ACCEPT_CLI_TOKENS: development only/,
    );
  });

  it('announces the authorization server: protected-resource metadata with scopes, and a 401 naming it', async () => {
    const prm = (await (await fetch(`${api.url}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    assert.equal(prm.resource, `${api.url}/mcp`);
    assert.deepEqual(prm.authorization_servers, [api.url]);
    assert.deepEqual(prm.scopes_supported, ['projects:read', 'sessions:upload', 'sessions:associate']);
    const as = (await (await fetch(`${api.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(as.issuer, api.url);
    const none = await fetch(`${api.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(none.status, 401);
    assert.equal(
      none.headers.get('www-authenticate'),
      `Bearer resource_metadata="${api.url}/.well-known/oauth-protected-resource/mcp", scope="projects:read sessions:upload sessions:associate"`,
    );
  });
});
