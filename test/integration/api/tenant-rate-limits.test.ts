import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { createRateLimitStore } from '../../../src/rate-limit.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { createTestAgentApp, sessionRequest, userMessage, type TestAgentApp } from '../../../harness/agents.js';
import { testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { createTestEndpoint } from '../../../harness/webhooks.js';

/**
 * Per-organization limits where one tenant could starve the others: agent ingest, recording
 * creates, webhook test events and redeliveries, and management (API keys, webhook endpoints, the
 * export), counted in PostgreSQL across API replicas, with the feedback area's headers.
 */
describe('per-organization rate limits', () => {
  let databaseUrl: string;
  let pool: DatabasePool;
  let api: TestApi;
  let replica: TestApi;
  let org: TestOrg;
  let other: TestOrg;

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    const config = testConfig({
      AGENT_INGEST_RATE_LIMIT_PER_MINUTE: '30',
      RECORDING_CREATE_RATE_LIMIT_PER_MINUTE: '3',
      WEBHOOK_TEST_RATE_LIMIT_PER_MINUTE: '5',
      MANAGEMENT_RATE_LIMIT_PER_MINUTE: '7',
    });
    api = await startTestApi({ pool, databaseUrl, config });
    replica = await startTestApi({ pool, databaseUrl, config });
    org = await createTestOrg(pool, { credits: 100 });
    other = await createTestOrg(pool, { credits: 100 });
  });
  after(async () => {
    await replica?.close();
    await api?.close();
    await pool?.end();
  });

  let apps = 0;
  async function newApp(owner: TestOrg): Promise<TestAgentApp> {
    return createTestAgentApp(pool, owner, `limited-${++apps}`);
  }
  const ingest = (target: TestApi, app: TestAgentApp, n: number) =>
    target.request('/v3/rest/agent-conversations/ingest', {
      method: 'POST',
      headers: { 'X-Service-Agent-Key': app.secret },
      json: sessionRequest(app, [userMessage(1, `hello ${n}`)], { externalSessionId: `s-${n}` }),
    });

  it('limits agent ingest per organization, across its applications and the replicas, with RateLimit headers and 429', async () => {
    const [a, b] = [await newApp(org), await newApp(org)];
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await ingest(api, i % 2 ? a : b, i);
      statuses.push(res.status);
      assert.equal(res.headers.get('ratelimit-limit'), '30');
      assert.equal(Number(res.headers.get('ratelimit-remaining')), 29 - i);
    }
    assert.deepEqual(statuses, Array(30).fill(202));
    // The 31st, on either replica and for either application, is refused and stores nothing.
    for (const target of [api, replica]) {
      const limited = await ingest(target, a, 100);
      assert.equal(limited.status, 429);
      assert.equal(limited.body.errorCode, 'rate_limited');
      assert.match(limited.body.message, /Rate limit of 30 requests a minute exceeded; retry in \d+ s\./);
      const retryAfter = Number(limited.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(limited.body.retryAfterSeconds, retryAfter);
    }
    const stored = await pool.oneFirst(sqlCount(org.organizationId));
    assert.equal(stored, 30, 'the refused ingests stored no session');
    // Another organization is not held back.
    const elsewhere = await ingest(replica, await newApp(other), 0);
    assert.equal(elsewhere.status, 202);
    assert.equal(elsewhere.headers.get('ratelimit-remaining'), '29');
  });

  it('limits recording creates per organization, whatever the credential', async () => {
    const user = await createTestUser(pool, org.organizationId);
    const create = (target: TestApi, headers: Record<string, string>, id: string) =>
      target.request('/v3/rest/recordings', { method: 'POST', headers, json: { record: { externalId: id } } });
    const byKey = { 'X-Service-Api-Key': org.apiKey };
    const byUser = { Authorization: `Bearer ${user.accessToken}` };
    assert.equal((await create(api, byKey, 'r1')).status, 201);
    assert.equal((await create(replica, byUser, 'r2')).status, 201);
    const third = await create(api, byUser, 'r3');
    assert.equal(third.status, 201);
    assert.equal(third.headers.get('ratelimit-remaining'), '0');
    const limited = await create(replica, byKey, 'r4');
    assert.equal(limited.status, 429);
    assert.match(limited.body.message, /Rate limit of 3 requests a minute exceeded/);
    const listed = await api.request('/v3/rest/recordings?limit=50', { headers: byKey });
    assert.equal(listed.status, 200, 'reads are not limited');
    assert.equal((await create(api, { 'X-Service-Api-Key': other.apiKey }, 'r1')).status, 201);
  });

  /** The 429 of a limit of `limit` a minute, as every limited route answers it. */
  function assertLimited(res: { status: number; headers: Headers; body: Record<string, unknown> }, limit: number) {
    assert.equal(res.status, 429);
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.deepEqual(res.body, {
      errorCode: 'rate_limited',
      message: `Rate limit of ${limit} requests a minute exceeded; retry in ${retryAfter} s.`,
      retryAfterSeconds: retryAfter,
    });
    assert.deepEqual(
      ['ratelimit-limit', 'ratelimit-remaining'].map((h) => res.headers.get(h)),
      [String(limit), '0'],
    );
  }

  it('limits webhook test events and redeliveries per organization, together, across the replicas (issue 50)', async () => {
    const endpoint = await createTestEndpoint(pool, org.organizationId, { url: 'https://hooks.example.com/intake' });
    const byKey = { 'X-Service-Api-Key': org.apiKey };
    const send = (target: TestApi, path: string, headers: Record<string, string> = byKey) =>
      target.request(`/v3/rest/webhook-endpoints/${endpoint.id}${path}`, { method: 'POST', headers });
    const sent = [];
    for (let i = 0; i < 4; i++) {
      const res = await send(i % 2 ? replica : api, '/test');
      assert.equal(res.status, 202);
      assert.deepEqual(
        ['ratelimit-limit', 'ratelimit-remaining'].map((h) => res.headers.get(h)),
        ['5', String(4 - i)],
      );
      const reset = Number(res.headers.get('ratelimit-reset'));
      assert.ok(reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
      sent.push(res.body.id as string);
    }
    // A redelivery counts with them, by a user as by a key.
    const user = await createTestUser(pool, org.organizationId, 'admin');
    const again = await send(replica, `/deliveries/${sent[0]}/redeliver`, { Authorization: `Bearer ${user.accessToken}` });
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('ratelimit-remaining'), '0');
    // The sixth is refused, on either replica, and makes no delivery.
    assertLimited(await send(api, '/test'), 5);
    assertLimited(await send(replica, `/deliveries/${sent[1]}/redeliver`), 5);
    const deliveries = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}`);
    assert.equal(deliveries, 4);
    // Reading the deliveries is not this limit's, and another organization is not held back.
    assert.equal((await api.request(`/v3/rest/webhook-endpoints/${endpoint.id}/deliveries`, { headers: byKey })).status, 200);
    const theirs = await createTestEndpoint(pool, other.organizationId, { url: 'https://hooks.example.com/other' });
    const elsewhere = await api.request(`/v3/rest/webhook-endpoints/${theirs.id}/test`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': other.apiKey },
    });
    assert.equal(elsewhere.status, 202);
    assert.equal(elsewhere.headers.get('ratelimit-remaining'), '4');
  });

  it('limits API keys, webhook endpoints and the export per organization, one count across them (issue 50)', async () => {
    const owner = await createTestOrg(pool);
    const byKey = { 'X-Service-Api-Key': owner.apiKey };
    const call = (target: TestApi, method: string, path: string, json?: unknown, headers: Record<string, string> = byKey) =>
      target.request(path, { method, headers, json });
    const answers = [
      await call(api, 'POST', '/v3/rest/api-keys', { name: 'ci', scopes: ['feedback:read'] }),
      await call(replica, 'GET', '/v3/rest/api-keys'),
      await call(api, 'POST', '/v3/rest/webhook-endpoints', { url: 'https://hooks.example.com/intake' }),
      await call(replica, 'GET', '/v3/rest/webhook-endpoints'),
    ];
    const endpointId = answers[2]!.body.id as string;
    answers.push(await call(api, 'GET', `/v3/rest/webhook-endpoints/${endpointId}/deliveries`));
    const exported = await call(replica, 'GET', '/v3/rest/organization/export');
    assert.match(exported.body, /"type":"end"/);
    answers.push(exported);
    const other = (await createTestKey(pool, owner.organizationId, ['admin'])).apiKey;
    answers.push(
      await call(replica, 'DELETE', `/v3/rest/api-keys/${answers[0]!.body.apiKeyId}`, undefined, { 'X-Service-Api-Key': other }),
    );
    assert.deepEqual(
      answers.map((r) => [r.status, r.headers.get('ratelimit-limit'), r.headers.get('ratelimit-remaining')]),
      [
        [201, '7', '6'],
        [200, '7', '5'],
        [201, '7', '4'],
        [200, '7', '3'],
        [200, '7', '2'],
        [200, '7', '1'],
        [204, '7', '0'],
      ],
    );
    // The eighth, whatever the route, the replica or the key, is refused.
    assertLimited(
      await call(api, 'POST', '/v3/rest/api-keys', { name: 'one more', scopes: ['feedback:read'] }, { 'X-Service-Api-Key': other }),
      7,
    );
    assertLimited(await call(replica, 'DELETE', `/v3/rest/webhook-endpoints/${endpointId}`), 7);
    const refused = await call(api, 'GET', '/v3/rest/organization/export');
    assertLimited(refused, 7);
    assert.equal(refused.headers.get('content-type'), 'application/json; charset=utf-8', 'no export began');
    const keys = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM api_keys WHERE organization_id = ${owner.organizationId}`);
    assert.equal(keys, 3, 'the fixture key, the admin key and the one created: the refused create made none');
    // Another organization is not held back.
    const elsewhere = await call(api, 'GET', '/v3/rest/api-keys', undefined, { 'X-Service-Api-Key': (await createTestOrg(pool)).apiKey });
    assert.equal(elsewhere.status, 200);
    assert.equal(elsewhere.headers.get('ratelimit-remaining'), '6');
  });

  it('hands out leased requests without admitting more than the limit between replicas', async () => {
    const stores = [createRateLimitStore(databaseUrl), createRateLimitStore(databaseUrl)];
    try {
      const limiters = stores.map((s) => s.limiter('lease-test', 100, { lease: 15 }));
      let admitted = 0;
      // Two replicas, each with concurrent requests.
      await Promise.all(
        limiters.map(async (limiter) => {
          for (let round = 0; round < 10; round++) {
            const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter!.consume('org:x')));
            admitted += decisions.filter((d) => d.allowed).length;
          }
        }),
      );
      assert.ok(admitted <= 100, `admitted ${admitted} of a limit of 100`);
      assert.ok(admitted >= 100 - 2 * 15, `admitted ${admitted}: at most a lease per replica goes unused`);
      assert.equal((await limiters[0]!.consume('org:x')).allowed, false);
      assert.equal((await limiters[1]!.consume('org:y')).allowed, true, 'keys are counted apart');
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});

function sqlCount(organizationId: string) {
  return sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM agent_sessions WHERE organization_id = ${organizationId}`;
}
