import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
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
 * and is purged by the retention sweep.
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
