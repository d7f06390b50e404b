import { strict as assert } from 'node:assert';
import { createHash, randomBytes } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { MCP_SCOPES } from '../../../src/oauth/provider.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { createTestDatabase } from '../../../harness/stack.js';

/**
 * The authorization server as the API mounts it: discovery, dynamic registration of a native
 * public client as MCP clients send it, and the refusals that need no sign-in (no PKCE, plain
 * PKCE, a token for another resource).
 */
describe('MCP authorization server (oidc-provider): discovery, registration, early refusals', function () {
  this.timeout(30_000);
  let pool: DatabasePool;
  let api: TestApi;
  let issuer: string;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool });
    issuer = api.url;
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const register = (body: Record<string, unknown>) =>
    fetch(`${issuer}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  /** What the MCP TypeScript SDK sends to register (src/client/auth.ts registerClient). */
  const sdkClient = (redirect: string) => ({
    redirect_uris: [redirect],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    client_name: 'Test MCP client',
    scope: MCP_SCOPES.join(' '),
  });

  it('publishes RFC 8414 metadata: S256 only, registration, revocation, the MCP scopes; the issuer exactly as configured', async () => {
    const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
    assert.equal(res.status, 200);
    const m = (await res.json()) as Record<string, unknown>;
    assert.equal(m.issuer, issuer);
    assert.equal(m.authorization_endpoint, `${issuer}/oauth/authorize`);
    assert.equal(m.token_endpoint, `${issuer}/oauth/token`);
    assert.equal(m.registration_endpoint, `${issuer}/oauth/register`);
    assert.equal(m.revocation_endpoint, `${issuer}/oauth/revoke`);
    assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(m.response_types_supported, ['code']);
    for (const s of MCP_SCOPES) assert.ok((m.scopes_supported as string[]).includes(s), s);
    assert.ok((m.token_endpoint_auth_methods_supported as string[]).includes('none'));
  });

  it('registers a public native client as MCP clients do, and stores it (every replica sees it)', async () => {
    const res = await register(sdkClient('http://127.0.0.1:33418/callback'));
    assert.equal(res.status, 201, await res.clone().text());
    const client = (await res.json()) as Record<string, unknown>;
    assert.equal(typeof client.client_id, 'string');
    assert.equal(client.client_secret, undefined, 'a public client gets no secret');
    assert.equal(client.application_type, 'native');
    assert.equal(client.token_endpoint_auth_method, 'none');
    const stored = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM oauth_models WHERE model = 'Client' AND id = ${client.client_id as string}`);
    assert.equal(stored, 1);
  });

  it('refuses to register a client asking for a scope the server does not have', async () => {
    const res = await register({ ...sdkClient('http://127.0.0.1:33418/callback'), scope: 'admin' });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: string }).error, 'invalid_client_metadata');
  });

  describe('authorization requests refused before any sign-in', () => {
    let clientId: string;
    const redirect = 'http://127.0.0.1:40111/callback';
    before(async () => {
      clientId = ((await (await register(sdkClient(redirect))).json()) as { client_id: string }).client_id;
    });
    const authorize = (params: Record<string, string>) =>
      fetch(
        `${issuer}/oauth/authorize?${new URLSearchParams({
          client_id: clientId,
          response_type: 'code',
          redirect_uri: redirect,
          scope: 'sessions:upload',
          state: 'st',
          ...params,
        }).toString()}`,
        { redirect: 'manual' },
      );
    /** A client nobody approved gets no error redirect (redirects.test.ts): the user sees the error on this server's page. */
    const errorOf = async (res: Response) => {
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null);
      return /\((\w+)\)\. Start again/.exec(await res.text())?.[1];
    };
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');

    it('without PKCE, or with the plain method: invalid_request', async () => {
      assert.equal(await errorOf(await authorize({})), 'invalid_request');
      assert.equal(await errorOf(await authorize({ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' })), 'invalid_request');
    });

    it('for another resource than the MCP endpoint: invalid_target', async () => {
      const res = await authorize({ code_challenge: challenge, code_challenge_method: 'S256', resource: `${issuer}/v3/rest` });
      assert.equal(await errorOf(res), 'invalid_target');
    });

    it('a valid request goes to the sign-in page (an interaction of its own)', async () => {
      const res = await authorize({ code_challenge: challenge, code_challenge_method: 'S256', resource: `${issuer}/mcp` });
      assert.equal(res.status, 303);
      assert.match(res.headers.get('location') ?? '', /^\/oauth\/interaction\/[\w-]+$/);
      const cookies = res.headers.getSetCookie();
      assert.ok(cookies.length > 0);
      for (const c of cookies) assert.match(c, /httponly/i);
      for (const c of cookies) assert.match(c, /samesite=lax/i);
    });
  });
});
