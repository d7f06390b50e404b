import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { UPSTREAM_CALLBACK_PATH } from '../../../src/oauth/server.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, createTestUser } from '../../../harness/fixtures.js';
import { authorizationRequest, Browser, csrfOf, mcpCall, registerClient, tokenRequest } from '../../../harness/oauth-browser.js';
import { startTestIdp, type TestIdp } from '../../helpers/oidc-idp.js';
import { createTestDatabase } from '../../../harness/stack.js';

const REDIRECT = 'http://127.0.0.1:40116/callback';

/**
 * Upstream OpenID Connect sign-in (OIDC_ISSUER): the sign-in page offers the company's provider;
 * the identity signs in as the Intake user with its verified e-mail address, and afterwards by its
 * subject. oidc-provider plays the company's provider.
 */
describe("MCP authorization: sign-in at a company's OpenID Connect provider", function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let idp: TestIdp;
  let api: TestApi;
  let clientId: string;
  /** The organizations the provider serves (OIDC_ORGANIZATIONS). */
  let orgs: Awaited<ReturnType<typeof createTestOrg>>[];

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    idp = await startTestIdp();
    orgs = [await createTestOrg(pool), await createTestOrg(pool)];
    api = await startTestApi({
      pool,
      config: testConfig({
        OIDC_ISSUER: idp.issuer,
        OIDC_CLIENT_ID: idp.clientId,
        OIDC_CLIENT_SECRET: idp.clientSecret,
        OIDC_DISPLAY_NAME: 'Example Corp',
        OIDC_ORGANIZATIONS: orgs.map((o) => o.organizationId).join(','),
      }),
    });
    idp.register(`${api.url}${UPSTREAM_CALLBACK_PATH}`);
    const reg = await registerClient(api.url, { redirect_uris: [REDIRECT], client_name: 'SSO client' });
    clientId = reg.body.client_id as string;
  });
  after(async () => {
    await api?.close();
    await idp?.close();
    await pool?.end();
  });

  const identities = (userId: string) =>
    pool.any(sql.type(z.object({ issuer: z.string(), subject: z.string() }))`
    SELECT issuer, subject FROM user_identities WHERE user_id = ${userId}`);

  /** From the client's authorization request through "Sign in with Example Corp" and the provider, back to Intake. */
  async function signInUpstream() {
    const request = authorizationRequest(api.url, { clientId, redirectUri: REDIRECT, scope: 'projects:read' });
    const browser = new Browser(api.url);
    const login = await browser.follow(await browser.go(request.url.pathname + request.url.search));
    const html = await login.text();
    const uid = new URL(login.url).pathname.split('/').pop()!;
    const back = await browser.follow(await browser.post(`/oauth/interaction/${uid}/upstream`, { csrf: csrfOf(html) }), [idp.issuer]);
    return { browser, request, login: html, page: back, html: await back.clone().text() };
  }

  it('signs in a user who has no password through the provider, by the verified e-mail address; the token works on /mcp', async () => {
    const user = await createTestUser(pool, orgs[0]!.organizationId);
    idp.accounts.set('alice-at-corp', { email: user.email.toUpperCase(), email_verified: true });
    idp.signInAs = 'alice-at-corp';
    const flow = await signInUpstream();
    assert.match(flow.login, /<button type="submit">Sign in with Example Corp<\/button>/);
    assert.equal(flow.page.status, 200, flow.html);
    assert.match(flow.html, /Approve access/);
    assert.match(flow.html, new RegExp(`<strong>${user.email.replace(/[.+]/g, '\\$&')}</strong>`));
    const uid = new URL(flow.page.url).pathname.split('/').pop()!;
    const approved = await flow.browser.follow(
      await flow.browser.post(`/oauth/interaction/${uid}/confirm`, { csrf: csrfOf(flow.html), decision: 'approve' }),
    );
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    const tokens = await tokenRequest(api.url, clientId, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: flow.request.verifier,
      resource: `${api.url}/mcp`,
    });
    assert.equal(tokens.status, 200, await tokens.clone().text());
    const { access_token } = (await tokens.json()) as { access_token: string };
    assert.equal((await mcpCall(api.url, access_token)).status, 200);
    assert.equal(((await (await api.deps.oauth!.forBase(api.url)).verify(access_token)) as { userId: string }).userId, user.userId);
    assert.deepEqual(await identities(user.userId), [{ issuer: idp.issuer, subject: 'alice-at-corp' }]);

    // Linked: the subject decides from now on, even when the provider's address changes.
    idp.accounts.set('alice-at-corp', { email: 'alice.renamed@corp.example', email_verified: true });
    const again = await signInUpstream();
    assert.equal(again.page.status, 200, again.html);
    assert.match(again.html, /Approve access/);

    // The address given to someone else at the provider does not take the linked account over.
    idp.accounts.set('new-hire', { email: user.email, email_verified: true });
    idp.signInAs = 'new-hire';
    const takeover = await signInUpstream();
    assert.equal(takeover.page.status, 403);
    assert.match(takeover.html, /This Intake account signs in with another Example Corp identity/);
    assert.deepEqual(await identities(user.userId), [{ issuer: idp.issuer, subject: 'alice-at-corp' }]);
  });

  it('matches only users of the organizations it serves; takes `email_verified: "true"` as sent by some providers', async () => {
    const outside = await createTestOrg(pool);
    const stranger = await createTestUser(pool, outside.organizationId);
    idp.accounts.set('other-tenant', { email: stranger.email, email_verified: true });
    idp.signInAs = 'other-tenant';
    const refused = await signInUpstream();
    assert.equal(refused.page.status, 403);
    assert.match(refused.html, /No Intake account uses/);
    assert.deepEqual(await identities(stranger.userId), []);

    const member = await createTestUser(pool, orgs[1]!.organizationId);
    idp.accounts.set('string-flag', { email: member.email, email_verified: 'true' });
    idp.signInAs = 'string-flag';
    const signedIn = await signInUpstream();
    assert.equal(signedIn.page.status, 200, signedIn.html);
    assert.deepEqual(await identities(member.userId), [{ issuer: idp.issuer, subject: 'string-flag' }]);
  });

  it('refuses an address that no Intake user has, one the provider did not verify, and one of several users; nothing is linked', async () => {
    idp.accounts.set('stranger', { email: 'nobody-here@corp.example', email_verified: true });
    idp.signInAs = 'stranger';
    const unknown = await signInUpstream();
    assert.equal(unknown.page.status, 403);
    assert.match(unknown.html, /No Intake account uses nobody-here@corp\.example\. Ask your administrator to create one\./);
    assert.match(unknown.html, /name="password"/, 'back on the sign-in page');

    const user = await createTestUser(pool, orgs[0]!.organizationId);
    idp.accounts.set('unverified', { email: user.email, email_verified: false });
    idp.signInAs = 'unverified';
    const unverified = await signInUpstream();
    assert.equal(unverified.page.status, 403);
    assert.match(unverified.html, /Example Corp did not confirm an e-mail address for this account/);

    const shared = 'shared-address@corp.example';
    for (const o of orgs) {
      await pool.query(sql.unsafe`INSERT INTO users (organization_id, email, role) VALUES (${o.organizationId}, ${shared}, 'member')`);
    }
    idp.accounts.set('shared', { email: shared, email_verified: true });
    idp.signInAs = 'shared';
    const ambiguous = await signInUpstream();
    assert.equal(ambiguous.page.status, 403);
    assert.match(ambiguous.html, /belongs to several Intake accounts/);
    const linked = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM user_identities WHERE subject IN ('stranger', 'unverified', 'shared')`);
    assert.equal(linked, 0);
  });

  it("a cancelled sign-in at the provider returns to the sign-in page; a callback without this browser's state, or a forged state, is refused", async () => {
    idp.signInAs = undefined;
    const cancelled = await signInUpstream();
    assert.equal(cancelled.page.status, 401);
    assert.match(cancelled.html, /The sign-in at Example Corp was cancelled or refused/);

    const stranger = await fetch(`${api.url}${UPSTREAM_CALLBACK_PATH}?code=abc&state=xyz`, { redirect: 'manual' });
    assert.equal(stranger.status, 400);
    assert.match(await stranger.text(), /not started in this browser/);

    // The browser's own state, but a code and state that are not the provider's answer to it.
    const user = await createTestUser(pool, orgs[0]!.organizationId);
    idp.accounts.set('bob', { email: user.email, email_verified: true });
    idp.signInAs = 'bob';
    const request = authorizationRequest(api.url, { clientId, redirectUri: REDIRECT, scope: 'projects:read' });
    const browser = new Browser(api.url);
    const login = await browser.follow(await browser.go(request.url.pathname + request.url.search));
    const uid = new URL(login.url).pathname.split('/').pop()!;
    const toIdp = await browser.post(`/oauth/interaction/${uid}/upstream`, { csrf: csrfOf(await login.text()) });
    assert.equal(toIdp.status, 303);
    assert.ok(toIdp.headers.get('location')!.startsWith(`${idp.issuer}/`));
    const forged = await browser.follow(
      await browser.go(`${UPSTREAM_CALLBACK_PATH}?code=forged&state=not-the-state&iss=${encodeURIComponent(idp.issuer)}`),
    );
    assert.equal(forged.status, 403);
    assert.match(await forged.text(), /did not complete|could not be checked/);
    assert.deepEqual(await identities(user.userId), []);
  });

  it('without OIDC_ISSUER the sign-in page offers e-mail and password only', async () => {
    const plain = await startTestApi({ pool });
    try {
      const reg = await registerClient(plain.url, { redirect_uris: [REDIRECT], client_name: 'Plain' });
      const request = authorizationRequest(plain.url, {
        clientId: reg.body.client_id as string,
        redirectUri: REDIRECT,
        scope: 'projects:read',
      });
      const browser = new Browser(plain.url);
      const login = await browser.follow(await browser.go(request.url.pathname + request.url.search));
      const html = await login.text();
      assert.match(html, /name="password"/);
      assert.doesNotMatch(html, /Sign in with/);
      const uid = new URL(login.url).pathname.split('/').pop()!;
      const refused = await browser.post(`/oauth/interaction/${uid}/upstream`, { csrf: csrfOf(html) });
      assert.equal(refused.status, 404);
    } finally {
      await plain.close();
    }
  });

  it('a provider that cannot be reached: 502 on the sign-in page, which still offers the password', async () => {
    const down = await startTestApi({
      pool,
      config: testConfig({
        OIDC_ISSUER: 'http://127.0.0.1:9/',
        OIDC_CLIENT_ID: 'intake',
        OIDC_CLIENT_SECRET: 'secret',
        OIDC_DISPLAY_NAME: 'Down Corp',
        OIDC_ORGANIZATIONS: orgs[0]!.organizationId,
      }),
    });
    try {
      const reg = await registerClient(down.url, { redirect_uris: [REDIRECT], client_name: 'Down' });
      const request = authorizationRequest(down.url, {
        clientId: reg.body.client_id as string,
        redirectUri: REDIRECT,
        scope: 'projects:read',
      });
      const browser = new Browser(down.url);
      const login = await browser.follow(await browser.go(request.url.pathname + request.url.search));
      const uid = new URL(login.url).pathname.split('/').pop()!;
      const res = await browser.post(`/oauth/interaction/${uid}/upstream`, { csrf: csrfOf(await login.text()) });
      assert.equal(res.status, 502);
      const html = await res.text();
      assert.match(html, /Down Corp could not be reached\. Try again, or sign in with your e-mail address and password\./);
      assert.match(html, /name="password"/);
      assert.doesNotMatch(html, /ECONNREFUSED|127\.0\.0\.1:9/, 'no internals');
    } finally {
      await down.close();
    }
  });
});
