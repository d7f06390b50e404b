import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import {
  authorizationRequest,
  authorizeInBrowser,
  Browser,
  csrfOf,
  registerClient,
  tokenRequest,
  createSignInUser,
  TEST_PASSWORD,
} from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';

const PASSWORD = TEST_PASSWORD;

/**
 * Redirect URIs as the issue asks (loopback on any port and custom schemes for native clients,
 * exact match for web clients), consent remembered per user and client, and cookies that are
 * Secure behind TLS.
 */
describe('MCP authorization: redirect URIs, remembered consent, cookies', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let user: { userId: string; email: string; password: string };

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool });
    user = await createSignInUser(pool);
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  /** Signs in; returns the consent page's HTML, or where the browser was sent when there was none. */
  async function signIn(url: URL): Promise<{ browser: Browser; consent?: { uid: string; html: string }; redirectedTo?: string }> {
    const browser = new Browser(api.url);
    const login = await browser.follow(await browser.go(url.pathname + url.search));
    assert.equal(login.status, 200, await login.clone().text());
    const uid = new URL(login.url).pathname.split('/').pop()!;
    const next = await browser.follow(
      await browser.post(`/oauth/interaction/${uid}/login`, { csrf: csrfOf(await login.text()), email: user.email, password: PASSWORD }),
    );
    if (next.status >= 300 && next.status < 400) return { browser, redirectedTo: next.headers.get('location')! };
    assert.equal(next.status, 200);
    return { browser, consent: { uid: new URL(next.url).pathname.split('/').pop()!, html: await next.text() } };
  }

  it('native clients: a loopback redirect on any port, and a custom-scheme redirect, get their code', async () => {
    const loopback = await registerClient(api.url, { redirect_uris: ['http://127.0.0.1:40113/callback'], client_name: 'Loopback' });
    assert.equal(loopback.status, 201, JSON.stringify(loopback.body));
    assert.equal(loopback.body.application_type, 'native');
    // RFC 8252 §7.3: the port of a loopback redirect is the one the client listens on now.
    const otherPort = 'http://127.0.0.1:51234/callback';
    const { url, verifier } = authorizationRequest(api.url, {
      clientId: loopback.body.client_id as string,
      redirectUri: otherPort,
      scope: 'projects:read',
    });
    const back = await authorizeInBrowser(api.url, url, user);
    assert.equal(`${back.origin}${back.pathname}`, otherPort);
    const exchanged = await tokenRequest(api.url, loopback.body.client_id as string, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: otherPort,
      code_verifier: verifier,
      resource: `${api.url}/mcp`,
    });
    assert.equal(exchanged.status, 200, await exchanged.clone().text());

    const scheme = 'com.example.intake-client:/oauth/callback';
    const custom = await registerClient(api.url, { redirect_uris: [scheme], client_name: 'Desktop app' });
    assert.equal(custom.status, 201, JSON.stringify(custom.body));
    const request = authorizationRequest(api.url, {
      clientId: custom.body.client_id as string,
      redirectUri: scheme,
      scope: 'projects:read',
    });
    const flow = await signIn(request.url);
    assert.match(flow.consent!.html, /returning to <strong>com\.example\.intake-client:\/oauth\/callback<\/strong>/);
    const returned = await flow.browser.go(`/oauth/interaction/${flow.consent!.uid}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(flow.consent!.html), decision: 'approve' }).toString(),
    });
    const location = (await flow.browser.follow(returned)).headers.get('location')!;
    assert.ok(location.startsWith(`${scheme}?code=`), location);
  });

  it('web clients: only the exact registered redirect URI; an approval is remembered, so the next sign-in returns straight away', async () => {
    const registered = 'https://app.example.test/oauth/callback';
    const web = await registerClient(api.url, { application_type: 'web', redirect_uris: [registered], client_name: 'Web app' });
    assert.equal(web.status, 201, JSON.stringify(web.body));
    const clientId = web.body.client_id as string;
    for (const almost of [
      `${registered}?next=/evil`,
      `${registered}/more`,
      'https://app.example.test:8443/oauth/callback',
      'https://evil.example.test/oauth/callback',
    ]) {
      const { url } = authorizationRequest(api.url, { clientId, redirectUri: almost, scope: 'projects:read' });
      const res = await fetch(url, { redirect: 'manual' });
      assert.equal(res.status, 400, almost);
      assert.equal(res.headers.get('location'), null, `never redirected to ${almost}`);
      const html = await res.text();
      assert.match(html, /redirect_uri did not match any of the client&#39;s registered redirect_uris \(invalid_redirect_uri\)/);
      assert.doesNotMatch(html, /https?:\/\/(?!app\.example)/, 'no external asset');
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    }

    const first = await signIn(authorizationRequest(api.url, { clientId, redirectUri: registered, scope: 'projects:read' }).url);
    assert.ok(first.consent, 'asked the first time');
    assert.doesNotMatch(first.consent.html, /approved this application before/);
    const approved = await first.browser.follow(
      await first.browser.post(`/oauth/interaction/${first.consent.uid}/confirm`, {
        csrf: csrfOf(first.consent.html),
        decision: 'approve',
      }),
    );
    assert.ok(approved.headers.get('location')!.startsWith(`${registered}?code=`));

    // Another browser, another day: the user signs in, and the remembered grant returns the code.
    const second = await signIn(authorizationRequest(api.url, { clientId, redirectUri: registered, scope: 'projects:read' }).url);
    assert.equal(second.consent, undefined, 'not asked again');
    assert.ok(second.redirectedTo!.startsWith(`${registered}?code=`), second.redirectedTo);
    // A scope not granted yet is asked for.
    const wider = await signIn(
      authorizationRequest(api.url, { clientId, redirectUri: registered, scope: 'projects:read sessions:upload' }).url,
    );
    assert.ok(wider.consent);
    assert.match(wider.consent.html, /<code>sessions:upload<\/code>/);
  });

  it('native clients are asked to confirm each time, and the page says they were approved before', async () => {
    const redirect = 'http://127.0.0.1:40114/callback';
    const native = await registerClient(api.url, { redirect_uris: [redirect], client_name: 'Native again' });
    const clientId = native.body.client_id as string;
    await authorizeInBrowser(api.url, authorizationRequest(api.url, { clientId, redirectUri: redirect, scope: 'projects:read' }).url, user);
    const again = await signIn(authorizationRequest(api.url, { clientId, redirectUri: redirect, scope: 'projects:read' }).url);
    assert.ok(again.consent);
    assert.match(again.consent.html, /You approved this application before/);
    assert.match(again.consent.html, /<code>projects:read<\/code>/);
  });

  it('cookies are HttpOnly and SameSite=Lax, and Secure when the request came over TLS (behind a trusted proxy)', async () => {
    const issuer = 'https://intake.example.test';
    const tls = await startTestApi({ pool, config: testConfig({ PUBLIC_BASE_URL: issuer, TRUST_PROXY: 'true' }) });
    try {
      const reg = await registerClient(tls.url, { redirect_uris: ['http://127.0.0.1:40115/callback'], client_name: 'Behind TLS' });
      assert.equal(reg.status, 201, JSON.stringify(reg.body));
      const { url } = authorizationRequest(issuer, {
        clientId: reg.body.client_id as string,
        redirectUri: 'http://127.0.0.1:40115/callback',
        scope: 'projects:read',
      });
      const overTls = await fetch(new URL(url.pathname + url.search, tls.url), {
        redirect: 'manual',
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'intake.example.test' },
      });
      assert.equal(overTls.status, 303, await overTls.clone().text());
      assert.match(overTls.headers.get('location')!, /^\/oauth\/interaction\/[\w-]+$/);
      const secure = overTls.headers.getSetCookie();
      assert.ok(secure.length >= 2, secure.join('\n'));
      for (const cookie of secure) assert.match(cookie, /; secure(;|$)/i, cookie);
      for (const cookie of secure) assert.match(cookie, /; httponly(;|$)/i, cookie);
      for (const cookie of secure) assert.match(cookie, /; samesite=lax(;|$)/i, cookie);

      const plain = await fetch(new URL(url.pathname + url.search, tls.url), {
        redirect: 'manual',
        headers: { 'x-forwarded-host': 'intake.example.test' },
      });
      for (const cookie of plain.headers.getSetCookie()) assert.doesNotMatch(cookie, /; secure(;|$)/i, cookie);
    } finally {
      await tls.close();
    }
  });
});
