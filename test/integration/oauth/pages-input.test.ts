import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { authorizationRequest, Browser, createSignInUser, csrfOf, registerClient } from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';

const REDIRECT = 'http://127.0.0.1:48213/callback';

/**
 * Forms of the sign-in pages that reached PostgreSQL or oidc-provider unchecked and answered 500:
 * a consent posted before anyone signed in, and NUL in the e-mail address (issue 29.5).
 */
describe('sign-in pages: malformed posts are 4xx, never 500', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool, databaseUrl });
    await createSignInUser(pool);
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  /** A browser on the sign-in page of a fresh authorization request. */
  async function signInPage(): Promise<{ browser: Browser; uid: string; csrf: string }> {
    const client = await registerClient(api.url, {
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    });
    const { url } = authorizationRequest(api.url, {
      clientId: client.body.client_id as string,
      redirectUri: REDIRECT,
      scope: 'projects:read',
    });
    const browser = new Browser(api.url);
    const login = await browser.follow(await browser.go(url.pathname + url.search));
    assert.equal(login.status, 200);
    return { browser, uid: new URL(login.url).pathname.split('/').pop()!, csrf: csrfOf(await login.text()) };
  }

  it('a consent posted before signing in is 400 login_required', async () => {
    const { browser, uid, csrf } = await signInPage();
    const res = await browser.post(`/oauth/interaction/${uid}/confirm`, { csrf, decision: 'approve' });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /login_required/);
  });

  it('NUL in the e-mail address or password is 400 invalid_request, and the page is shown again', async () => {
    const { browser, uid, csrf } = await signInPage();
    const nul = await browser.post(`/oauth/interaction/${uid}/login`, { csrf, email: 'ada\u0000@example.com', password: 'x' });
    assert.equal(nul.status, 400);
    const html = await nul.text();
    assert.match(html, /invalid_request/);
    assert.match(html, /name="password"/);
    const inPassword = await browser.post(`/oauth/interaction/${uid}/login`, { csrf, email: 'ada@example.com', password: 'x\u0000y' });
    assert.equal(inPassword.status, 400);
  });
});
