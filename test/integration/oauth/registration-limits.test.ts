import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { CLIENT_NAME_MAX_LENGTH, MAX_REDIRECT_URIS } from '../../../src/oauth/client-metadata.js';
import { purgeExpiredModels } from '../../../src/db/repositories/oauth-models.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { authorizationRequest, createSignInUser, obtainTokens } from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';

const REDIRECT = 'http://127.0.0.1:40114/callback';
const DAY_MS = 86_400_000;

/**
 * The authorization server's anonymous endpoints (issue 29, point 11): client registrations and
 * authorization requests are limited per client address, and a client nobody approved expires
 * and is purged by the retention sweep. Issue 50, finding 8a: what a client registers is capped.
 */
describe('MCP authorization: registration and authorization limits, unused clients expire', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    // Behind a proxy, so that each test is a client address of its own; limits counted in PostgreSQL.
    api = await startTestApi({ pool, databaseUrl, config: testConfig({ TRUST_PROXY: 'true' }) });
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const register = (from: string, name = 'Registered') =>
    fetch(`${api.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify({
        redirect_uris: [REDIRECT],
        client_name: name,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }),
    });
  /** A registration with these fields over a normal one's, from an address of its own. */
  let from = 0;
  const registerWith = (fields: Record<string, unknown>) =>
    fetch(`${api.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${100 + ++from}` },
      body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'Capped', token_endpoint_auth_method: 'none', ...fields }),
    });
  const refusal = async (res: Response) => {
    assert.equal(res.status, 400);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    return (await res.json()) as { error: string; error_description: string };
  };
  const clientId = async (res: Response) => {
    assert.equal(res.status, 201);
    return ((await res.json()) as { client_id: string }).client_id;
  };
  const clientExpiry = (id: string) =>
    pool.oneFirst(sql.type(z.object({ expires_at: z.string().nullable() }))`
    SELECT expires_at FROM oauth_models WHERE model = 'Client' AND id = ${id}`);

  it(`registrations: ${testConfig().rateLimits.oauthRegistrationsPerHour} an hour per address, then 429 with Retry-After; other addresses still register`, async () => {
    const limit = testConfig().rateLimits.oauthRegistrationsPerHour;
    const statuses = [];
    for (let i = 0; i < limit; i++) statuses.push((await register('198.51.100.10')).status);
    assert.deepEqual(new Set(statuses), new Set([201]));
    const over = await register('198.51.100.10');
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) > 60, 'an hour window');
    assert.equal(((await over.json()) as { error: string }).error, 'rate_limited');
    assert.equal((await register('198.51.100.11')).status, 201);
  });

  it('registrations from the addresses of one IPv6 /64 count as one client address', async () => {
    const limit = testConfig().rateLimits.oauthRegistrationsPerHour;
    for (let i = 1; i <= limit; i++) assert.equal((await register(`2001:db8:29:1::${i.toString(16)}`)).status, 201, `registration ${i}`);
    const over = await register('2001:db8:29:1:ffff:ffff:ffff:ffff');
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) > 60);
    assert.equal((await register('2001:db8:29:2::1')).status, 201, 'another /64');
  });

  it(`authorization requests: ${testConfig().rateLimits.oauthAuthorizationsPerMinute} a minute per address, then 429 with Retry-After`, async () => {
    const id = await clientId(await register('198.51.100.20'));
    const authorize = async (from: string) => {
      const { url } = authorizationRequest(api.url, { clientId: id, redirectUri: REDIRECT, scope: 'projects:read' });
      const res = await fetch(url, { redirect: 'manual', headers: { 'x-forwarded-for': from } });
      await res.arrayBuffer();
      return res;
    };
    const limit = testConfig().rateLimits.oauthAuthorizationsPerMinute;
    for (let i = 0; i < limit; i++) assert.equal((await authorize('198.51.100.21')).status, 303, `request ${i + 1}`);
    const over = await authorize('198.51.100.21');
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    assert.match(over.headers.get('content-type') ?? '', /text\/html/);
    assert.equal((await authorize('198.51.100.22')).status, 303, 'another address');
  });

  it(`registration metadata is capped: a 5,000-character client_name is 400 invalid_client_metadata (${CLIENT_NAME_MAX_LENGTH} at most)`, async () => {
    assert.deepEqual(await refusal(await registerWith({ client_name: 'n'.repeat(5000) })), {
      error: 'invalid_client_metadata',
      error_description: `client_name must be at most ${CLIENT_NAME_MAX_LENGTH} characters`,
    });
    const stored = await pool.oneFirst(
      sql.type(
        z.object({ n: z.number() }),
      )`SELECT count(*)::int AS n FROM oauth_models WHERE model = 'Client' AND payload->>'client_name' LIKE 'nnnn%'`,
    );
    assert.equal(stored, 0, 'nothing stored');
  });

  it(`registration metadata is capped: more than ${MAX_REDIRECT_URIS} redirect URIs, an overlong URI, contacts or scope are 400`, async () => {
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `http://127.0.0.1:40114/callback/${i}`);
    assert.deepEqual(await refusal(await registerWith({ redirect_uris: uris(MAX_REDIRECT_URIS + 1) })), {
      error: 'invalid_client_metadata',
      error_description: `at most ${MAX_REDIRECT_URIS} redirect_uris may be registered`,
    });
    // One redirect URI too long is RFC 7591's invalid_redirect_uri, as oidc-provider names every redirect URI problem.
    assert.deepEqual(await refusal(await registerWith({ redirect_uris: [`${REDIRECT}?${'q'.repeat(3000)}`] })), {
      error: 'invalid_redirect_uri',
      error_description: 'redirect_uris must each be at most 2048 characters',
    });
    assert.deepEqual(await refusal(await registerWith({ client_uri: `https://example.com/${'p'.repeat(3000)}` })), {
      error: 'invalid_client_metadata',
      error_description: 'client_uri must be at most 2048 characters',
    });
    const contacts = Array.from({ length: 6 }, (_, i) => `dev${i}@example.com`);
    assert.equal((await refusal(await registerWith({ contacts }))).error_description, 'at most 5 contacts may be registered');
    assert.equal(
      (await refusal(await registerWith({ scope: 'projects:read '.repeat(100) }))).error_description,
      'scope must be at most 1000 characters',
    );
  });

  it('a registration at every cap is still 201 with what it registered', async () => {
    const name = 'A'.repeat(CLIENT_NAME_MAX_LENGTH);
    const redirects = Array.from({ length: MAX_REDIRECT_URIS }, (_, i) => `http://127.0.0.1:40114/callback/${i}`);
    const res = await registerWith({ client_name: name, redirect_uris: redirects, contacts: ['dev@example.com'] });
    assert.equal(res.status, 201);
    const body = (await res.json()) as { client_id: string; client_name: string; redirect_uris: string[]; contacts: string[] };
    assert.equal(body.client_name, name);
    assert.deepEqual(body.redirect_uris, redirects);
    assert.deepEqual(body.contacts, ['dev@example.com']);
    assert.equal((await (await api.deps.oauth!.forBase(api.url)).provider.Client.find(body.client_id))?.clientName, name);
  });

  it('a client nobody approved expires a day after registration and the retention sweep purges it; an approved one lives as long as its grant', async () => {
    const unused = await clientId(await register('198.51.100.30', 'Never used'));
    const expiry = Date.parse((await clientExpiry(unused))!);
    assert.ok(Math.abs(expiry - Date.now() - DAY_MS) < 60_000, 'a day from now');

    const used = await clientId(await register('198.51.100.30', 'Used'));
    const user = await createSignInUser(pool);
    await obtainTokens(api.url, { clientId: used, redirectUri: REDIRECT, scope: 'projects:read', user });
    assert.ok(Date.parse((await clientExpiry(used))!) > Date.now() + 29 * DAY_MS, 'as long as the grant (30 days)');

    // A day later (moved, not waited for): the unused client is gone for the provider, and the sweep deletes it.
    await pool.query(
      sql.unsafe`UPDATE oauth_models SET expires_at = now() - interval '1 second' WHERE model = 'Client' AND id = ${unused}`,
    );
    assert.equal(await (await api.deps.oauth!.forBase(api.url)).provider.Client.find(unused), undefined);
    const { url } = authorizationRequest(api.url, { clientId: unused, redirectUri: REDIRECT, scope: 'projects:read' });
    const refused = await fetch(url, { redirect: 'manual', headers: { 'x-forwarded-for': '198.51.100.31' } });
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('location'), null);
    assert.match(await refused.text(), /invalid_client/);
    assert.ok((await purgeExpiredModels(pool, 1000)) >= 1);
    const left = await pool.anyFirst(
      sql.type(z.object({ id: z.string() }))`SELECT id FROM oauth_models WHERE model = 'Client' AND id IN (${unused}, ${used})`,
    );
    assert.deepEqual(left, [used]);
  });
});
