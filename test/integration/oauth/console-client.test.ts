import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { CONSOLE_CALLBACK_PATH, CONSOLE_CLIENT_ID } from '../../../src/oauth/console-client.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import {
  consoleAuthorizationRequest,
  consoleSignIn,
  createSignInUser,
  mcpAccessToken,
  mcpCall,
  tokenRequest,
  type TokenSet,
} from '../../../harness/oauth-browser.js';
import { createTestKey } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';

/**
 * The console's client (decision 0205): Intake's own public client, configured rather than
 * registered, whose tokens act in the REST API as the signed-in user, and nowhere else.
 */
describe('the console client: OAuth tokens for the REST API', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let admin: Awaited<ReturnType<typeof createSignInUser>>;
  let member: Awaited<ReturnType<typeof createSignInUser>>;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool, databaseUrl });
    admin = await createSignInUser(pool, undefined, 'admin');
    member = await createSignInUser(pool, admin.organizationId);
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const rest = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${api.url}/v3/rest${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });

  it('signs in without a consent page and gets tokens for the REST API that act with the role of the user', async () => {
    const { tokens, callback } = await consoleSignIn(api.url, admin);
    assert.equal(`${callback.origin}${callback.pathname}`, `${api.url}${CONSOLE_CALLBACK_PATH}`);
    assert.equal(callback.searchParams.get('state'), 'console-st');
    assert.equal(callback.searchParams.get('iss'), api.url);
    assert.equal(tokens.scope, 'console');
    assert.equal(tokens.expires_in, 900);
    assert.equal(typeof tokens.refresh_token, 'string');
    const stored = await (await api.deps.oauth!.forBase(api.url)).provider.AccessToken.find(tokens.access_token);
    assert.equal(stored?.aud, `${api.url}/v3/rest`);
    assert.equal(stored?.clientId, CONSOLE_CLIENT_ID);

    const org = await rest(tokens.access_token, '/organization');
    assert.equal(org.status, 200, await org.clone().text());
    assert.equal(((await org.json()) as { organizationId: string }).organizationId, admin.organizationId);
    // An admin may do what admins may: create an agent application.
    const created = await rest(tokens.access_token, '/agent-applications', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Made in the console', agentKey: 'console-made' }),
    });
    assert.equal(created.status, 201, await created.clone().text());
  });

  it("a member's console token has the member's scopes: 403 insufficient_scope on an admin route", async () => {
    const { tokens } = await consoleSignIn(api.url, member);
    const listed = await rest(tokens.access_token, '/agent-conversations/sessions');
    assert.equal(listed.status, 200);
    const keys = await rest(tokens.access_token, '/api-keys');
    assert.equal(keys.status, 403);
    assert.deepEqual(await keys.json(), {
      errorCode: 'insufficient_scope',
      message: "The credential lacks the 'admin' scope.",
      requiredScope: 'admin',
    });
  });

  it("GET /organization says what the caller may do (the console shows a member no admin page): a user's role and scopes, a key's scopes", async () => {
    const caller = async (user: typeof member) => {
      const { tokens } = await consoleSignIn(api.url, user);
      const res = await rest(tokens.access_token, '/organization');
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()) as { caller: { kind: string; role: string | null; scopes: string[] } }).caller;
    };
    assert.deepEqual(await caller(member), {
      kind: 'user',
      role: 'member',
      scopes: ['feedback:write', 'feedback:read', 'recordings:read', 'recordings:write', 'agents:read', 'agents:write', 'signals:read'],
    });
    const asAdmin = await caller(admin);
    assert.equal(asAdmin.role, 'admin');
    assert.ok(asAdmin.scopes.includes('admin') && asAdmin.scopes.includes('webhooks:manage'), asAdmin.scopes.join());
    const key = await createTestKey(pool, admin.organizationId, ['agents:read']);
    const byKey = await fetch(`${api.url}/v3/rest/organization`, { headers: { 'X-Service-Api-Key': key.apiKey } });
    assert.deepEqual(((await byKey.json()) as { caller: unknown }).caller, { kind: 'apiKey', role: null, scopes: ['agents:read'] });
  });

  it('the refresh token gives a new REST token; revoking the grant (GET/DELETE /me/grants) ends both', async () => {
    const { tokens } = await consoleSignIn(api.url, member);
    const refreshed = await tokenRequest(api.url, CONSOLE_CLIENT_ID, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
    const next = (await refreshed.json()) as TokenSet;
    assert.equal((await rest(next.access_token, '/organization')).status, 200);

    const grants = (await (await rest(next.access_token, '/me/grants')).json()) as {
      grants: { grantId: string; clientId: string; clientName: string; scopes: string[] }[];
    };
    const grant = grants.grants.find((g) => g.clientId === CONSOLE_CLIENT_ID);
    assert.ok(grant, JSON.stringify(grants));
    assert.equal(grant.clientName, 'Intake console');
    assert.deepEqual(grant.scopes, ['console']);
    assert.equal((await rest(next.access_token, `/me/grants/${grant.grantId}`, { method: 'DELETE' })).status, 204);
    const after = await rest(next.access_token, '/organization');
    assert.equal(after.status, 401);
    assert.deepEqual(await after.json(), { errorCode: 'invalid_credentials', message: 'The access token is not valid.' });
    const refreshAgain = await tokenRequest(api.url, CONSOLE_CLIENT_ID, { grant_type: 'refresh_token', refresh_token: next.refresh_token });
    assert.equal(refreshAgain.status, 400);
  });

  it('keeps the two resources apart: a console token is refused on /mcp, an MCP client token on the REST API', async () => {
    const { tokens } = await consoleSignIn(api.url, member);
    assert.equal((await mcpCall(api.url, tokens.access_token)).status, 401);
    const mcpToken = await mcpAccessToken(api.url, member);
    assert.equal((await mcpCall(api.url, mcpToken)).status, 200);
    const onRest = await rest(mcpToken, '/organization');
    assert.equal(onRest.status, 401);
    assert.deepEqual(await onRest.json(), { errorCode: 'invalid_credentials', message: 'The access token is not valid.' });
  });

  it('refuses the console client another resource, and a redirect URI that is not the console (no redirect there)', async () => {
    const other = consoleAuthorizationRequest(api.url);
    other.url.searchParams.set('resource', `${api.url}/mcp`);
    const invalidTarget = await fetch(other.url, { redirect: 'manual' });
    // No signed-in user vouches for the redirect: the error is a page here, not a redirect.
    assert.equal(invalidTarget.status, 400);
    assert.match(await invalidTarget.text(), /invalid_target|tokens of this client are issued for/);

    const elsewhere = consoleAuthorizationRequest(api.url);
    elsewhere.url.searchParams.set('redirect_uri', 'https://attacker.example/console/callback');
    const res = await fetch(elsewhere.url, { redirect: 'manual' });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('location'), null);
  });

  // (A preflight is answered for any origin: the client, and so the check, is known from the request's form.)
  it("answers CORS on the token endpoint only to the origin of the client's own redirect URI", async () => {
    const form = (origin: string) =>
      fetch(`${api.url}/oauth/token`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: CONSOLE_CLIENT_ID, grant_type: 'refresh_token', refresh_token: 'nope' }).toString(),
      });
    const own = await form(api.url);
    assert.equal(own.headers.get('access-control-allow-origin'), api.url);
    for (const origin of ['https://attacker.example', 'null']) {
      const res = await form(origin);
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('access-control-allow-origin'), null, `${origin}: no CORS`);
    }
  });
});
