import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { createRateLimitStore } from '../../../src/rate-limit.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { createTestAgentApp, sessionRequest, userMessage, type TestAgentApp } from '../../../harness/agents.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';

/**
 * Per-organization limits where one tenant could starve the others: agent ingest and recording
 * creates, counted in PostgreSQL across API replicas, with the feedback area's headers.
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
    const config = testConfig({ AGENT_INGEST_RATE_LIMIT_PER_MINUTE: '30', RECORDING_CREATE_RATE_LIMIT_PER_MINUTE: '3' });
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
