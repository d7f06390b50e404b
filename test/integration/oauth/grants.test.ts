import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { runIntake, runIntakeWithInput } from '../../helpers/cli.js';
import { TEST_SIGNING_SECRET } from '../../../harness/config.js';
import {
  authorizationRequest,
  Browser,
  csrfOf,
  mcpCall,
  obtainTokens,
  registerClient,
  tokenRequest,
  createSignInUser,
  TEST_PASSWORD,
} from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { createTestOrg } from '../../../harness/fixtures.js';

const PASSWORD = TEST_PASSWORD;
const REDIRECT = 'http://127.0.0.1:40112/callback';
const ACCESS_TOKEN_SECONDS = 2;

/** A user's grants, listed and revoked with `intake grant`; and tokens that expire. */
describe('MCP authorization: grants revoked by the operator, expired tokens', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  /** The same authorization server with access tokens of ACCESS_TOKEN_SECONDS. */
  let shortLived: TestApi;
  let env: Record<string, string>;
  let user: { userId: string; email: string; password: string };

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool });
    shortLived = await startTestApi({ pool, oauthAccessTokenSeconds: ACCESS_TOKEN_SECONDS });
    env = { DATABASE_URL: databaseUrl, SIGNING_SECRET: TEST_SIGNING_SECRET, LOG_LEVEL: 'silent' };
    user = await createSignInUser(pool);
  });
  after(async () => {
    await api?.close();
    await shortLived?.close();
    await pool?.end();
  });

  const client = async (name: string, on = api) => {
    const reg = await registerClient(on.url, { redirect_uris: [REDIRECT], client_name: name });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    return reg.body.client_id as string;
  };

  it('`intake grant list` shows each approved client with its scopes; `grant revoke` stops its access and refresh tokens at once', async () => {
    const editor = await client('Editor');
    const reader = await client('Reader');
    const editorTokens = await obtainTokens(api.url, {
      clientId: editor,
      redirectUri: REDIRECT,
      scope: 'sessions:upload sessions:associate',
      user,
    });
    const readerTokens = await obtainTokens(api.url, { clientId: reader, redirectUri: REDIRECT, scope: 'projects:read', user });
    assert.equal((await mcpCall(api.url, editorTokens.access_token)).status, 200);

    const listed = await runIntake(env, 'grant', 'list', '--user', user.userId);
    assert.equal(listed.code, 0, listed.stderr);
    type Listed = { grantId: string; clientId: string; clientName: string; scopes: string[]; grantedAt: string; expiresAt: string };
    // Oldest first; both were given within the same second here.
    const grants = (listed.json.grants as Listed[]).sort((a, b) => a.clientName.localeCompare(b.clientName));
    assert.deepEqual(
      grants.map((g) => [g.clientName, g.clientId, g.scopes]),
      [
        ['Editor', editor, ['sessions:associate', 'sessions:upload']],
        ['Reader', reader, ['projects:read']],
      ],
    );
    for (const g of grants) assert.ok(Date.parse(g.expiresAt) > Date.parse(g.grantedAt));

    const revoked = await runIntake(env, 'grant', 'revoke', '--user', user.userId, '--grant', grants[0]!.grantId);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(revoked.json, { userId: user.userId, revokedGrantIds: [grants[0]!.grantId] });
    // The revoked client's tokens are refused at once; the other client's still work.
    const refused = await mcpCall(api.url, editorTokens.access_token);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const refresh = await tokenRequest(api.url, editor, {
      grant_type: 'refresh_token',
      refresh_token: editorTokens.refresh_token,
      resource: `${api.url}/mcp`,
    });
    assert.equal(refresh.status, 400);
    assert.equal(((await refresh.json()) as { error: string }).error, 'invalid_grant');
    assert.equal((await mcpCall(api.url, readerTokens.access_token)).status, 200);
    assert.deepEqual(
      (await runIntake(env, 'grant', 'list', '--user', user.userId)).json.grants.map((g: { clientName: string }) => g.clientName),
      ['Reader'],
    );

    // Another user's grant, or one already revoked, is not found; the command needs one of its forms.
    const again = await runIntake(env, 'grant', 'revoke', '--user', user.userId, '--grant', grants[0]!.grantId);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not found/);
    const neither = await runIntake(env, 'grant', 'revoke', '--user', user.userId);
    assert.equal(neither.code, 2);

    // A browser the user signed in with: its session approves a client without the password again.
    const browser = new Browser(api.url);
    const request = authorizationRequest(api.url, { clientId: reader, redirectUri: REDIRECT, scope: 'projects:read' });
    const login = await browser.follow(await browser.go(request.url.pathname + request.url.search));
    const uid = new URL(login.url).pathname.split('/').pop()!;
    const consent = await browser.follow(
      await browser.post(`/oauth/interaction/${uid}/login`, { csrf: csrfOf(await login.text()), email: user.email, password: PASSWORD }),
    );
    assert.match(await consent.text(), /Approve access/);
    const withSession = await browser.follow(await browser.go(request.url.pathname + request.url.search));
    assert.match(await withSession.text(), /Approve access/, 'signed in: straight to the approval');

    // Revoking every token the user holds takes the OAuth grants and the sign-in sessions too.
    const all = await runIntake(env, 'token', 'revoke', '--user', user.userId);
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(all.json.revokedGrantIds, [grants[1]!.grantId]);
    assert.ok(all.json.endedSessions >= 1, JSON.stringify(all.json));
    const afterRevocation = await browser.follow(await browser.go(request.url.pathname + request.url.search));
    assert.match(await afterRevocation.text(), /name="password"/, 'the session cookie no longer signs the user in');
    assert.equal((await mcpCall(api.url, readerTokens.access_token)).status, 401);
    assert.deepEqual((await runIntake(env, 'grant', 'list', '--user', user.userId)).json.grants, []);
  });

  it('`intake user set-password` ends what the old password opened: sign-in sessions, grants, access and refresh tokens', async () => {
    const owner = await createSignInUser(pool);
    const id = await client('Before the reset');
    const tokens = await obtainTokens(api.url, { clientId: id, redirectUri: REDIRECT, scope: 'projects:read', user: owner });
    // A browser signed in with the old password.
    const browser = new Browser(api.url);
    const request = authorizationRequest(api.url, { clientId: id, redirectUri: REDIRECT, scope: 'projects:read' });
    const login = await browser.follow(await browser.go(request.url.pathname + request.url.search));
    const uid = new URL(login.url).pathname.split('/').pop()!;
    assert.match(
      await (
        await browser.follow(
          await browser.post(`/oauth/interaction/${uid}/login`, {
            csrf: csrfOf(await login.text()),
            email: owner.email,
            password: PASSWORD,
          }),
        )
      ).text(),
      /Approve access/,
    );
    assert.equal((await mcpCall(api.url, tokens.access_token)).status, 200);

    const reset = await runIntakeWithInput(
      env,
      'a brand new passphrase',
      'user',
      'set-password',
      '--user',
      owner.userId,
      '--password-stdin',
    );
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal((reset.json.revokedGrantIds as string[]).length, 1);
    assert.ok((reset.json.endedSessions as number) >= 1, JSON.stringify(reset.json));

    assert.equal((await mcpCall(api.url, tokens.access_token)).status, 401, 'the access token is refused at once');
    const refresh = await tokenRequest(api.url, id, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      resource: `${api.url}/mcp`,
    });
    assert.equal(refresh.status, 400, 'the refresh token is gone');
    const afterReset = await browser.follow(await browser.go(request.url.pathname + request.url.search));
    assert.match(await afterReset.text(), /name="password"/, 'the session no longer signs the user in');
    assert.deepEqual((await runIntake(env, 'grant', 'list', '--user', owner.userId)).json.grants, []);
  });

  it('an expired access token is refused with invalid_token; its refresh token gets a new one that works', async () => {
    const id = await client('Short-lived', shortLived);
    const tokens = await obtainTokens(shortLived.url, { clientId: id, redirectUri: REDIRECT, scope: 'projects:read', user });
    assert.equal(tokens.expires_in, ACCESS_TOKEN_SECONDS);
    assert.equal((await mcpCall(shortLived.url, tokens.access_token)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, (ACCESS_TOKEN_SECONDS + 1) * 1000));
    const expired = await mcpCall(shortLived.url, tokens.access_token);
    assert.equal(expired.status, 401);
    assert.match(expired.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const body = (await expired.json()) as { errorCode: string; message: string };
    assert.equal(body.errorCode, 'invalid_credentials');

    const refreshed = await tokenRequest(shortLived.url, id, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      resource: `${shortLived.url}/mcp`,
    });
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
    const next = (await refreshed.json()) as { access_token: string };
    assert.equal((await mcpCall(shortLived.url, next.access_token)).status, 200);
  });

  it('a signed-in user lists and revokes their own grants over REST (GET|DELETE /v3/rest/me/grants); nobody else can', async () => {
    const me = await createSignInUser(pool);
    const other = await createSignInUser(pool);
    const viewer = await client('Viewer');
    const tokens = await obtainTokens(api.url, { clientId: viewer, redirectUri: REDIRECT, scope: 'projects:read', user: me });
    const othersTokens = await obtainTokens(api.url, { clientId: viewer, redirectUri: REDIRECT, scope: 'projects:read', user: other });
    const as = (u: { accessToken: string }) => ({ Authorization: `Bearer ${u.accessToken}` });

    const listed = await api.request('/v3/rest/me/grants', { headers: as(me) });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.equal(listed.body.grants.length, 1);
    const [grant] = listed.body.grants as { grantId: string; clientId: string; clientName: string; scopes: string[] }[];
    assert.deepEqual([grant!.clientId, grant!.clientName, grant!.scopes], [viewer, 'Viewer', ['projects:read']]);

    // Another user's grant is not theirs to see or revoke.
    const othersGrant = ((await api.request('/v3/rest/me/grants', { headers: as(other) })).body.grants as { grantId: string }[])[0]!;
    assert.notEqual(othersGrant.grantId, grant!.grantId);
    const foreign = await api.request(`/v3/rest/me/grants/${othersGrant.grantId}`, { method: 'DELETE', headers: as(me) });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, { message: 'Grant not found.', errorCode: 'not_found', resource: 'Grant' });
    assert.equal((await mcpCall(api.url, othersTokens.access_token)).status, 200);

    const revoked = await api.request(`/v3/rest/me/grants/${grant!.grantId}`, { method: 'DELETE', headers: as(me) });
    assert.equal(revoked.status, 204);
    assert.equal((await mcpCall(api.url, tokens.access_token)).status, 401, 'the access token stops at once');
    const refresh = await tokenRequest(api.url, viewer, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    assert.equal(refresh.status, 400, 'and the refresh token');
    assert.deepEqual((await api.request('/v3/rest/me/grants', { headers: as(me) })).body, { grants: [] });
    const again = await api.request(`/v3/rest/me/grants/${grant!.grantId}`, { method: 'DELETE', headers: as(me) });
    assert.equal(again.status, 404);

    // Users only: an API key has no grants of its own.
    const key = await api.request('/v3/rest/me/grants', { headers: { 'X-Service-Api-Key': (await createTestOrg(pool)).apiKey } });
    assert.equal(key.status, 401);
    assert.equal(key.body.errorCode, 'unauthenticated');
  });

  it('the consent page links to "connected applications", where the user signs in, sees and revokes what they approved', async () => {
    const me = await createSignInUser(pool);
    const notes = await client('Notes <b>app</b>');
    const tokens = await obtainTokens(api.url, { clientId: notes, redirectUri: REDIRECT, scope: 'projects:read', user: me });
    const browser = new Browser(api.url);

    // The consent page names the page.
    const { url } = authorizationRequest(api.url, { clientId: notes, redirectUri: REDIRECT, scope: 'projects:read' });
    const login = await browser.follow(await browser.go(url.pathname + url.search));
    const uid = new URL(login.url).pathname.split('/').pop()!;
    const consent = await browser.follow(
      await browser.post(`/oauth/interaction/${uid}/login`, { csrf: csrfOf(await login.text()), email: me.email, password: PASSWORD }),
    );
    assert.match(await consent.text(), /revoke this access at any time on the <a href="\/oauth\/grants">connected applications<\/a> page/);

    // Its own sign-in; a wrong password is refused on the page.
    const signIn = await browser.go('/oauth/grants');
    assert.equal(signIn.status, 200);
    assert.equal(signIn.headers.get('cache-control'), 'no-store');
    assert.match(signIn.headers.get('content-security-policy') ?? '', /form-action 'self'; frame-ancestors 'none'/);
    const signInHtml = await signIn.text();
    assert.match(signInHtml, /Sign in to see the applications you allowed/);
    const wrong = await browser.post('/oauth/grants/sign-in', { csrf: csrfOf(signInHtml), email: me.email, password: 'wrong password!' });
    assert.equal(wrong.status, 401);
    const wrongHtml = await wrong.text();
    assert.match(wrongHtml, /The e-mail address or the password is wrong/);
    // A form without the page's token is refused.
    const forged = await browser.post('/oauth/grants/sign-in', { csrf: 'forged', email: me.email, password: PASSWORD });
    assert.equal(forged.status, 403);

    const again = await browser.go('/oauth/grants');
    const signedIn = await browser.follow(
      await browser.post('/oauth/grants/sign-in', { csrf: csrfOf(await again.text()), email: me.email, password: PASSWORD }),
    );
    assert.equal(signedIn.status, 200);
    const listHtml = await signedIn.text();
    assert.match(listHtml, new RegExp(`Signed in as <strong>${me.email.replace(/[.]/g, '\\.')}</strong>`));
    assert.match(listHtml, /<strong>Notes &lt;b&gt;app&lt;\/b&gt;<\/strong>, approved \d{4}-\d{2}-\d{2}:/, 'names escaped');
    const grantId = /name="grant" value="([^"]+)"/.exec(listHtml)?.[1];
    assert.ok(grantId);

    // Another user's grant cannot be revoked from this session: nothing happens to it.
    const other = await createSignInUser(pool);
    const othersTokens = await obtainTokens(api.url, { clientId: notes, redirectUri: REDIRECT, scope: 'projects:read', user: other });
    const othersGrant = (
      (await api.request('/v3/rest/me/grants', { headers: { Authorization: `Bearer ${other.accessToken}` } })).body.grants as {
        grantId: string;
      }[]
    )[0]!.grantId;
    await browser.follow(await browser.post('/oauth/grants/revoke', { csrf: csrfOf(listHtml), grant: othersGrant }));
    assert.equal((await mcpCall(api.url, othersTokens.access_token)).status, 200);

    // Revoke: the client's token stops at once, and the page says nothing is left.
    assert.equal((await mcpCall(api.url, tokens.access_token)).status, 200);
    const afterRevoke = await browser.follow(await browser.post('/oauth/grants/revoke', { csrf: csrfOf(listHtml), grant: grantId }));
    assert.equal(afterRevoke.status, 200);
    assert.match(await afterRevoke.text(), /No application may act as you/);
    assert.equal((await mcpCall(api.url, tokens.access_token)).status, 401);

    // Signing out ends the page's session.
    await browser.follow(await browser.post('/oauth/grants/sign-out', { csrf: csrfOf(listHtml) }));
    assert.match(await (await browser.go('/oauth/grants')).text(), /Sign in to see the applications/);
  });
});
