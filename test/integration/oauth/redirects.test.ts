import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { authorizationRequest, Browser, createSignInUser, csrfOf, registerClient } from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';

/** Anyone may register a client, with any https redirect URI: this one stands for an attacker's site. */
const ELSEWHERE = 'https://elsewhere.example/cb';

/**
 * The authorization server is no open redirect (issue 29, point 11): an anonymous registration
 * makes any URI "registered", so an error goes back to a client's redirect URI only when the
 * signed-in user approved that client before (or refused it on the consent page, which names
 * where it returns; flow.test.ts), and there is no logout endpoint to bounce through.
 */
describe('MCP authorization: error redirects only to vouched-for redirect URIs, no logout redirect', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let clientId: string;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool });
    const reg = await registerClient(api.url, {
      redirect_uris: [ELSEWHERE],
      client_name: 'Elsewhere',
      application_type: 'web',
      post_logout_redirect_uris: [ELSEWHERE],
    });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    clientId = reg.body.client_id as string;
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  /** A broken authorization request (no PKCE) for the client, in a browser. */
  const broken = (extra: Record<string, string> = {}) => {
    const url = new URL('/oauth/authorize', api.url);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: ELSEWHERE,
      scope: 'projects:read',
      state: 'st',
      ...extra,
    }).toString();
    return url;
  };
  const leavesForElsewhere = async (res: Response) =>
    (res.headers.get('location') ?? '').startsWith('https://elsewhere.example') || (await res.clone().text()).includes('elsewhere.example');

  it('a broken request for a client nobody approved shows the error here: no redirect, no auto-submitting form', async () => {
    for (const extra of [
      {},
      { response_mode: 'form_post' },
      { response_mode: 'fragment' },
      { prompt: 'none', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' },
    ] as Record<string, string>[]) {
      const res = await fetch(broken(extra), { redirect: 'manual' });
      assert.equal(res.status, 400, JSON.stringify(extra));
      assert.equal(await leavesForElsewhere(res), false, JSON.stringify(extra));
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/, "the server's own error page");
    }
    // An unregistered redirect URI is refused the same way (as before).
    const unregistered = await fetch(broken({ redirect_uri: 'https://other.example/cb' }), { redirect: 'manual' });
    assert.deepEqual([unregistered.status, unregistered.headers.get('location')], [400, null]);
  });

  it('once the signed-in user approved the client, its errors go back to its redirect URI', async () => {
    const user = await createSignInUser(pool);
    const browser = new Browser(api.url);
    const { url } = authorizationRequest(api.url, { clientId, redirectUri: ELSEWHERE, scope: 'projects:read' });
    const login = await browser.follow(await browser.go(url.pathname + url.search));
    const uid = new URL(login.url).pathname.split('/').pop()!;
    const consent = await browser.follow(
      await browser.post(`/oauth/interaction/${uid}/login`, {
        csrf: csrfOf(await login.text()),
        email: user.email,
        password: user.password,
      }),
    );
    assert.equal(consent.status, 200);
    const consentUid = new URL(consent.url).pathname.split('/').pop()!;
    const back = await browser.follow(
      await browser.post(`/oauth/interaction/${consentUid}/confirm`, { csrf: csrfOf(await consent.text()), decision: 'approve' }),
    );
    assert.ok(new URL(back.headers.get('location')!).searchParams.get('code'), 'approved: a code');

    const error = await browser.go(broken().pathname + broken().search);
    assert.equal(error.status, 303);
    const location = new URL(error.headers.get('location')!);
    assert.equal(`${location.origin}${location.pathname}`, ELSEWHERE);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    // The same request from a browser where nobody signed in stays here.
    assert.equal((await fetch(broken(), { redirect: 'manual' })).status, 400);
  });

  it('/oauth/logout is not served: no confirmation page and no redirect to a post-logout URI', async () => {
    const query = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: ELSEWHERE, state: 'st' }).toString();
    for (const res of [
      await fetch(`${api.url}/oauth/logout?${query}`, { redirect: 'manual' }),
      await fetch(`${api.url}/oauth/logout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: query,
      }),
    ]) {
      assert.equal(res.status, 404);
      assert.equal(await leavesForElsewhere(res), false);
      assert.doesNotMatch(await res.text(), /<form|<script/);
    }
    const metadata = (await (await fetch(`${api.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(metadata.end_session_endpoint, undefined);
  });
});
