import { strict as assert } from 'node:assert';
import { createHash, randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS } from '../../../src/oauth/interactions.js';
import { MCP_SCOPES } from '../../../src/oauth/provider.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { Browser, createSignInUser, csrfOf, TEST_PASSWORD } from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';

const PASSWORD = TEST_PASSWORD;
const REDIRECT = 'http://127.0.0.1:40111/callback';

/** Sign-in, consent, code and tokens: the authorization server with its pages, as the API mounts them. */
describe('MCP authorization: sign-in, consent, code with PKCE, tokens', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let base: string;
  let user: { userId: string; email: string };
  let clientId: string;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    // With a database URL the sign-in limits are counted, as in production.
    api = await startTestApi({ pool, databaseUrl });
    base = api.url;
    user = await createSignInUser(pool);
    const reg = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        client_name: 'Test MCP client',
        scope: MCP_SCOPES.join(' '),
      }),
    });
    clientId = ((await reg.json()) as { client_id: string }).client_id;
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  /** Starts an authorization request in a new browser; returns the browser, the verifier and the sign-in page. */
  async function start(scope = 'sessions:upload projects:read') {
    const browser = new Browser(base);
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope,
      state: 'st-1',
      resource: `${base}/mcp`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const page = await browser.follow(await browser.go(`/oauth/authorize?${query.toString()}`));
    return { browser, verifier, page, html: await page.text(), uid: new URL(page.url).pathname.split('/').pop()! };
  }

  async function signIn(flow: Awaited<ReturnType<typeof start>>): Promise<{ res: Response; html: string }> {
    const res = await flow.browser.follow(
      await flow.browser.post(`/oauth/interaction/${flow.uid}/login`, {
        csrf: csrfOf(flow.html),
        email: user.email.toUpperCase(),
        password: PASSWORD,
      }),
    );
    return { res, html: await res.clone().text() };
  }

  const token = (form: Record<string, string>) =>
    fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, ...form }).toString(),
    });

  it('signs in, shows the consent page, and on approval returns a code that PKCE exchanges for tokens of the MCP resource alone', async () => {
    const flow = await start();
    assert.equal(flow.page.status, 200);
    assert.match(flow.html, /<input id="email" name="email" type="email"/);
    assert.match(flow.html, /<input id="password" name="password" type="password"/);
    assert.match(flow.html, /Test MCP client/);
    assert.match(flow.page.headers.get('content-security-policy') ?? '', /default-src 'none'/);

    const consent = await signIn(flow);
    assert.equal(consent.res.status, 200);
    assert.match(consent.html, /Approve access/);
    assert.match(consent.html, /Test MCP client<\/strong> \(returning to <strong>127\.0\.0\.1:40111<\/strong>\)/);
    assert.match(consent.html, /Upload coding-agent sessions/);
    assert.match(consent.html, /name="decision" value="approve"/);
    assert.match(consent.html, /name="decision" value="deny"/);
    const uid = new URL(consent.res.url).pathname.split('/').pop()!;
    const back = await flow.browser.follow(
      await flow.browser.post(`/oauth/interaction/${uid}/confirm`, { csrf: csrfOf(consent.html), decision: 'approve' }),
    );
    const callback = new URL(back.headers.get('location')!);
    assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT);
    assert.equal(callback.searchParams.get('state'), 'st-1');
    assert.equal(callback.searchParams.get('iss'), base);
    const code = callback.searchParams.get('code')!;

    const wrongVerifier = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: randomBytes(32).toString('base64url'),
      resource: `${base}/mcp`,
    });
    assert.equal(wrongVerifier.status, 400);
    assert.equal(((await wrongVerifier.json()) as { error: string }).error, 'invalid_grant');

    // A code is refused once tried: start again for the exchange.
    const again = await start();
    const consent2 = await signIn(again);
    const uid2 = new URL(consent2.res.url).pathname.split('/').pop()!;
    const back2 = await again.browser.follow(
      await again.browser.post(`/oauth/interaction/${uid2}/confirm`, { csrf: csrfOf(consent2.html), decision: 'approve' }),
    );
    const code2 = new URL(back2.headers.get('location')!).searchParams.get('code')!;
    const res = await token({
      grant_type: 'authorization_code',
      code: code2,
      redirect_uri: REDIRECT,
      code_verifier: again.verifier,
      resource: `${base}/mcp`,
    });
    assert.equal(res.status, 200, await res.clone().text());
    const tokens = (await res.json()) as {
      access_token: string;
      refresh_token: string;
      token_type: string;
      expires_in: number;
      scope: string;
    };
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(tokens.expires_in, 900);
    assert.equal(typeof tokens.refresh_token, 'string');
    // Opaque and stored: whose, for which resource, with the scopes asked for and approved.
    assert.match(tokens.access_token, /^[\w-]{32,128}$/);
    const stored = await (await api.deps.oauth!.forBase(api.url)).provider.AccessToken.find(tokens.access_token);
    assert.equal(stored?.accountId, user.userId);
    assert.equal(stored?.aud, `${base}/mcp`);
    assert.deepEqual(String(stored?.scope).split(' ').sort(), ['projects:read', 'sessions:upload']);

    // Refresh tokens rotate: the new one works, the used one is refused.
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, resource: `${base}/mcp` });
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
    const next = (await refreshed.json()) as { refresh_token: string };
    assert.notEqual(next.refresh_token, tokens.refresh_token);
    const replayed = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, resource: `${base}/mcp` });
    assert.equal(replayed.status, 400);

    // A code used twice is refused, and everything issued from it is revoked with its grant.
    const reused = await token({
      grant_type: 'authorization_code',
      code: code2,
      redirect_uri: REDIRECT,
      code_verifier: again.verifier,
      resource: `${base}/mcp`,
    });
    assert.equal(reused.status, 400);
    assert.equal(((await reused.json()) as { error: string }).error, 'invalid_grant');
    const afterRevocation = await token({ grant_type: 'refresh_token', refresh_token: next.refresh_token, resource: `${base}/mcp` });
    assert.equal(afterRevocation.status, 400);
  });

  it('denied consent returns access_denied to the client', async () => {
    const flow = await start();
    const consent = await signIn(flow);
    const uid = new URL(consent.res.url).pathname.split('/').pop()!;
    const back = await flow.browser.follow(
      await flow.browser.post(`/oauth/interaction/${uid}/confirm`, { csrf: csrfOf(consent.html), decision: 'deny' }),
    );
    const callback = new URL(back.headers.get('location')!);
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('code'), null);
  });

  it('refuses a wrong password (401, nothing said about which part), a form without its token (403), and an unknown interaction (400)', async () => {
    const flow = await start();
    const wrong = await flow.browser.post(`/oauth/interaction/${flow.uid}/login`, {
      csrf: csrfOf(flow.html),
      email: user.email,
      password: 'not the password at all',
    });
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /The e-mail address or the password is wrong/);
    const noCsrf = await flow.browser.post(`/oauth/interaction/${flow.uid}/login`, { email: user.email, password: PASSWORD });
    assert.equal(noCsrf.status, 403);
    const otherBrowser = await new Browser(base).go(`/oauth/interaction/${flow.uid}`);
    assert.equal(otherBrowser.status, 400, 'the interaction belongs to the browser that started it');
  });

  it('limits sign-in attempts per account and address: past the limit even the right password waits there (429, Retry-After)', async () => {
    const target = await createSignInUser(pool);
    const flow = await start();
    for (let i = 0; i < LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS; i++) {
      const res = await flow.browser.post(`/oauth/interaction/${flow.uid}/login`, {
        csrf: csrfOf(flow.html),
        email: target.email,
        password: `guess number ${i} of many`,
      });
      assert.equal(res.status, 401);
    }
    const limited = await flow.browser.post(`/oauth/interaction/${flow.uid}/login`, {
      csrf: csrfOf(flow.html),
      email: target.email,
      password: PASSWORD,
    });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.match(await limited.text(), /Too many sign-in attempts/);
  });
});
