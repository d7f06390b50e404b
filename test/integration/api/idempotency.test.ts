import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import pg from 'pg';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createRetentionActivities } from '../../../activities/retention.js';
import type { AppContext, AppState } from '../../../api/context.js';
import { errorHandler } from '../../../api/middleware/errors.js';
import { requestId } from '../../../api/middleware/request-id.js';
import { RouteRegistry } from '../../../api/routes.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { AppError } from '../../../src/errors.js';
import { requestHash } from '../../../src/idempotency/request.js';
import { beginIdempotent, DEFAULT_IDEMPOTENCY_OPTIONS, finishIdempotent } from '../../../src/idempotency/service.js';
import { startApiProcess, type ApiProcess } from '../../../harness/api-process.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_SIGNING_SECRET, testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { closeServer, listenLocal } from '../../../harness/http.js';
import { createTestDatabase, testStack } from '../../../harness/stack.js';
import { waitFor } from '../../../harness/wait.js';

/** `Idempotency-Key` on the creates without a natural key (docs/guides/idempotency.md), against the real API and PostgreSQL. */
describe('idempotency keys', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let org: TestOrg;
  let databaseUrl: string;

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const post = (
    path: string,
    json: unknown,
    key: string | null,
    credential: Record<string, string> = { 'X-Service-Api-Key': org.apiKey },
  ) => api.request(path, { method: 'POST', json, headers: { ...credential, ...(key === null ? {} : { 'Idempotency-Key': key }) } });
  const count = (table: 'feedback_sources' | 'folders' | 'agent_applications', organizationId = org.organizationId) =>
    pool.oneFirst(
      sql.type(
        z.object({ n: z.number() }),
      )`SELECT count(*)::int AS n FROM ${sql.identifier([table])} WHERE organization_id = ${organizationId}`,
    );
  const keyRows = (key: string) =>
    pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM idempotency_keys WHERE idempotency_key = ${key}`);

  it('replays the first response (status, body, Location) with Idempotent-Replayed and creates nothing new', async () => {
    const key = randomUUID();
    const before = await count('feedback_sources');
    const first = await post('/v3/rest/feedback-sources', { name: 'Support inbox', type: 'api' }, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.match(first.headers.get('location') ?? '', /^\/v3\/rest\/feedback-sources\/\d+$/);
    // The same request in another key order and spacing is the same request.
    const again = await api.request('/v3/rest/feedback-sources', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey, 'Idempotency-Key': key, 'Content-Type': 'application/json' },
      body: '{ "type": "api",\n  "name": "Support inbox" }',
    });
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('location'), first.headers.get('location'));
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.match(again.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(await count('feedback_sources'), before + 1);
    // Without a key, a retry is a new resource (the behaviour before keys, unchanged).
    const unkeyed = await post('/v3/rest/feedback-sources', { name: 'Support inbox', type: 'api' }, null);
    assert.equal(unkeyed.status, 201);
    assert.notEqual(unkeyed.body.id, first.body.id);
  });

  it('the same key with another body, path or method is 422 idempotency_key_reused, and changes nothing', async () => {
    const key = randomUUID();
    assert.equal((await post('/v3/rest/folders', { name: 'Calls' }, key)).status, 201);
    const folders = await count('folders');
    const otherBody = await post('/v3/rest/folders', { name: 'Other calls' }, key);
    assert.equal(otherBody.status, 422);
    assert.deepEqual(otherBody.body, {
      message: 'This Idempotency-Key was used with another request (method, path or body); use a new key for a new request.',
      errorCode: 'idempotency_key_reused',
    });
    const otherPath = await post('/v3/rest/feedback-sources', { name: 'Calls', type: 'api' }, key);
    assert.equal(otherPath.status, 422);
    assert.equal(otherPath.body.errorCode, 'idempotency_key_reused');
    assert.equal(await count('folders'), folders);
  });

  it('keys belong to a credential: another API key or a user with the same key acts independently', async () => {
    const key = randomUUID();
    const other = await createTestKey(pool, org.organizationId, ['admin']);
    const user = await createTestUser(pool, org.organizationId, 'admin');
    const body = { name: 'Shared key' };
    const a = await post('/v3/rest/folders', body, key);
    const b = await post('/v3/rest/folders', body, key, { 'X-Service-Api-Key': other.apiKey });
    const c = await post('/v3/rest/folders', body, key, { Authorization: `Bearer ${user.accessToken}` });
    assert.deepEqual([a.status, b.status, c.status], [201, 201, 201]);
    assert.equal(new Set([a.body.folderId, b.body.folderId, c.body.folderId]).size, 3);
    assert.deepEqual(
      [b.headers.get('idempotent-replayed'), c.headers.get('idempotent-replayed')],
      [null, null],
      'neither is a replay of another credential',
    );
    // Another organization's key with the same key string: independent too.
    const elsewhere = await createTestOrg(pool);
    const d = await post('/v3/rest/folders', body, key, { 'X-Service-Api-Key': elsewhere.apiKey });
    assert.equal(d.status, 201);
    assert.equal(await count('folders', elsewhere.organizationId), 1);
    assert.equal((await post('/v3/rest/folders', body, key, { 'X-Service-Api-Key': other.apiKey })).body.folderId, b.body.folderId);
  });

  it('a response with a secret shown once (an ingest credential) is replayed, and kept sealed at rest', async () => {
    const app = await post('/v3/rest/agent-applications', { name: 'Sealed', agentKey: `sealed-${randomUUID().slice(0, 8)}` }, null);
    const key = randomUUID();
    const path = `/v3/rest/agent-applications/${app.body.applicationId}/credentials`;
    const first = await post(path, undefined, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const again = await post(path, undefined, key);
    assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body], [201, 'true', first.body]);
    const credentials = await api.request(path, { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.equal(credentials.body.credentials.length, 1);
    const stored = await pool.oneFirst(
      sql.type(z.object({ response_body: z.string() }))`SELECT response_body FROM idempotency_keys WHERE idempotency_key = ${key}`,
    );
    assert.match(stored, /^v1\.signing-secret\.[A-Za-z0-9_-]+$/);
    assert.equal(typeof first.body.secret, 'string');
    assert.equal(stored.includes(first.body.secret as string), false, 'the secret is not stored in clear');
  });

  it('a race: 10 concurrent identical requests with one key make exactly one resource; each answer is its replay or a 409', async () => {
    const key = randomUUID();
    const agentKey = `race-${randomUUID().slice(0, 8)}`;
    const before = await count('agent_applications');
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post('/v3/rest/agent-applications', { name: 'Race', agentKey }, key)),
    );
    assert.equal(await count('agent_applications'), before + 1);
    const created = responses.filter((r) => r.status === 201);
    const original = created.find((r) => r.headers.get('idempotent-replayed') === null);
    assert.ok(original, 'one request created the application');
    assert.equal(created.filter((r) => r.headers.get('idempotent-replayed') === null).length, 1);
    for (const r of responses) {
      if (r.status === 201) {
        assert.deepEqual(r.body, original.body);
        assert.equal(r.headers.get('location'), original.headers.get('location'));
      } else {
        assert.equal(r.status, 409, JSON.stringify(r.body));
        assert.equal(r.body.errorCode, 'idempotency_key_in_progress');
      }
    }
  });

  it("a handler's 4xx is stored and replayed; a request refused before its handler (validation) stores nothing", async () => {
    // The agentKey is taken: 409 agent_key_taken, stored under the key.
    const agentKey = `taken-${randomUUID().slice(0, 8)}`;
    const holder = await post('/v3/rest/agent-applications', { name: 'Holder', agentKey }, null);
    assert.equal(holder.status, 201);
    const key = randomUUID();
    const conflict = await post('/v3/rest/agent-applications', { name: 'Second', agentKey }, key);
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.errorCode, 'agent_key_taken');
    // Even once the key is free again, the retry gets the stored answer: a key stands for one outcome.
    const deleted = await api.request(`/v3/rest/agent-applications/${holder.body.applicationId}`, {
      method: 'DELETE',
      headers: { 'X-Service-Api-Key': org.apiKey },
    });
    assert.equal(deleted.status, 204);
    const replayed = await post('/v3/rest/agent-applications', { name: 'Second', agentKey }, key);
    assert.deepEqual([replayed.status, replayed.body], [409, conflict.body]);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');

    const invalidKey = randomUUID();
    const invalid = await post('/v3/rest/folders', { name: '' }, invalidKey);
    assert.equal(invalid.status, 400);
    assert.equal(await keyRows(invalidKey), 0);
    const valid = await post('/v3/rest/folders', { name: 'Fixed' }, invalidKey);
    assert.equal(valid.status, 201, 'the corrected request is not 422: nothing was stored for the invalid one');
  });

  it('an empty key or one longer than 255 characters is 400 idempotency_key_invalid; 255 characters are accepted', async () => {
    for (const key of ['', '   ', 'k'.repeat(256)]) {
      const res = await post('/v3/rest/folders', { name: 'Bad key' }, key);
      assert.equal(res.status, 400, JSON.stringify(key));
      assert.deepEqual(res.body, {
        message: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
        errorCode: 'idempotency_key_invalid',
      });
    }
    assert.equal((await post('/v3/rest/folders', { name: 'Long key' }, 'k'.repeat(255))).status, 201);
  });

  it('a 5xx is not stored: the retry with the same key runs again, and its success is then replayed', async () => {
    // A route of its own whose handler fails once: the registry's real middleware chain around it.
    let calls = 0;
    const registry = new RouteRegistry(api.deps);
    registry.add({
      method: 'post',
      path: '/test/flaky-folders',
      operationId: 'flakyFolder',
      summary: 'A create that fails once',
      tags: ['test'],
      auth: { accept: ['apiKey'] },
      idempotent: true,
      body: { schema: { type: 'object', properties: { name: { type: 'string' } } } },
      responses: { 201: { description: 'Created' } },
      handler: async (ctx: AppContext) => {
        calls++;
        if (calls === 1) throw new Error('boom');
        if (calls === 2) throw new AppError('database_unavailable');
        ctx.status = 201;
        ctx.body = { call: calls };
      },
    });
    const app = new Koa<AppState>();
    app.use(requestId(api.deps.logger));
    app.use(errorHandler());
    app.use(registry.router.routes());
    const server: Server = createServer(app.callback());
    const port = await listenLocal(server);
    try {
      const send = () =>
        fetch(`http://127.0.0.1:${port}/test/flaky-folders`, {
          method: 'POST',
          headers: { 'X-Service-Api-Key': org.apiKey, 'Idempotency-Key': 'flaky-1', 'Content-Type': 'application/json' },
          body: '{"name":"x"}',
        });
      assert.equal((await send()).status, 500);
      assert.equal(await keyRows('flaky-1'), 0, 'released');
      assert.equal((await send()).status, 503);
      const ok = await send();
      assert.equal(ok.status, 201);
      assert.deepEqual(await ok.json(), { call: 3 });
      const replay = await send();
      assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed'), await replay.json()], [201, 'true', { call: 3 }]);
      assert.equal(calls, 3);
    } finally {
      await closeServer(server);
    }
  });

  it('a key is kept for 24 hours: after that the same key is a new request', async () => {
    const key = randomUUID();
    const first = await post('/v3/rest/folders', { name: 'Day one' }, key);
    assert.equal(first.status, 201);
    await pool.query(
      sql.unsafe`UPDATE idempotency_keys SET created_at = now() - interval '23 hours 59 minutes' WHERE idempotency_key = ${key}`,
    );
    assert.equal((await post('/v3/rest/folders', { name: 'Day one' }, key)).headers.get('idempotent-replayed'), 'true');
    assert.equal((await post('/v3/rest/folders', { name: 'Day two' }, key)).status, 422);
    await pool.query(
      sql.unsafe`UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE idempotency_key = ${key}`,
    );
    const later = await post('/v3/rest/folders', { name: 'Day two' }, key);
    assert.equal(later.status, 201);
    assert.equal(later.headers.get('idempotent-replayed'), null);
    assert.notEqual(later.body.folderId, first.body.folderId);
    assert.equal(await keyRows(key), 1, 'the expired row was replaced');
  });

  it('the retention sweep activity purges keys past 24 hours and keeps younger ones', async () => {
    const old = randomUUID();
    const young = randomUUID();
    assert.equal((await post('/v3/rest/folders', { name: 'Old' }, old)).status, 201);
    assert.equal((await post('/v3/rest/folders', { name: 'Young' }, young)).status, 201);
    await pool.query(sql.unsafe`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE idempotency_key = ${old}`);
    const activities = createRetentionActivities({ pool });
    assert.ok((await activities.purgeExpiredIdempotencyKeys(5000)) >= 1);
    assert.deepEqual([await keyRows(old), await keyRows(young)], [0, 1]);
    assert.equal(await activities.purgeExpiredIdempotencyKeys(5000), 0);
  });

  describe('the service (claims, waiting, a crashed request)', () => {
    const scope = () => ({ organizationId: org.organizationId, credential: `apiKey:${org.apiKeyId}` });
    const hash = requestHash('POST', '/v3/rest/folders', { name: 'svc' });
    const fast = { ...DEFAULT_IDEMPOTENCY_OPTIONS, waitMs: 300 };
    const keys = testConfig().temporal.payloadKeys ?? [];

    it('a duplicate of a request in flight waits for it and gets its response', async () => {
      const key = randomUUID();
      const first = await beginIdempotent(pool, keys, scope(), key, hash);
      assert.equal(first.kind, 'execute');
      const waiting = beginIdempotent(pool, keys, scope(), key, hash);
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (first.kind !== 'execute') return;
      assert.equal(
        await finishIdempotent(pool, keys, first.claim, { status: 201, headers: { location: '/x' }, body: '{"id":1}' }),
        'stored',
      );
      assert.deepEqual(await waiting, { kind: 'replay', response: { status: 201, headers: { location: '/x' }, body: '{"id":1}' } });
    });

    it('past the wait, a duplicate is 409 idempotency_key_in_progress; once the lock of a dead request passes, a retry runs', async () => {
      const key = randomUUID();
      const dead = await beginIdempotent(pool, keys, scope(), key, hash);
      assert.equal(dead.kind, 'execute');
      await assert.rejects(
        beginIdempotent(pool, keys, scope(), key, hash, fast),
        (e: AppError) => e.errorCode === 'idempotency_key_in_progress',
      );
      // Another body is refused at once, even while the first is in flight.
      await assert.rejects(
        beginIdempotent(pool, keys, scope(), key, requestHash('POST', '/v3/rest/folders', { name: 'other' }), fast),
        (e: AppError) => e.errorCode === 'idempotency_key_reused',
      );
      // The process holding the claim died: its lock passes.
      await pool.query(sql.unsafe`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE idempotency_key = ${key}`);
      const retry = await beginIdempotent(pool, keys, scope(), key, hash, fast);
      assert.equal(retry.kind, 'execute');
      if (dead.kind !== 'execute' || retry.kind !== 'execute') return;
      // The dead request's late completion cannot overwrite the claim that took over.
      assert.equal(await finishIdempotent(pool, keys, dead.claim, { status: 201, headers: {}, body: '{"late":true}' }), 'lost');
      assert.equal(await finishIdempotent(pool, keys, retry.claim, { status: 201, headers: {}, body: '{"retry":true}' }), 'stored');
      const replay = await beginIdempotent(pool, keys, scope(), key, hash, fast);
      assert.deepEqual(replay, { kind: 'replay', response: { status: 201, headers: {}, body: '{"retry":true}' } });
    });

    it('a response body above the storage limit is not stored: the key is released', async () => {
      const key = randomUUID();
      const begun = await beginIdempotent(pool, keys, scope(), key, hash);
      if (begun.kind !== 'execute') assert.fail('expected to execute');
      assert.equal(
        await finishIdempotent(pool, keys, begun.claim, { status: 201, headers: {}, body: JSON.stringify('x'.repeat(70_000)) }),
        'released',
      );
      assert.equal(await keyRows(key), 0);
    });
  });

  describe('a process that dies between the effect and the response', function () {
    this.timeout(120_000);
    let child: ApiProcess | undefined;
    let holder: pg.Client | undefined;
    after(async () => {
      child?.child.kill('SIGKILL');
      await holder?.end();
      await pool.query(sql.unsafe`DROP TRIGGER IF EXISTS test_hold_completion ON idempotency_keys`);
    });

    it('an API process SIGKILLed after its create ran, before the key was completed: nothing committed; the retry creates exactly one', async () => {
      // The key's completion waits on an advisory lock this test holds, so the process is killed at
      // exactly that point: the create has run, its response is not yet stored.
      await pool.query(sql.unsafe`
        CREATE OR REPLACE FUNCTION test_hold_completion() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_advisory_xact_lock(917001); RETURN NEW; END $$`);
      await pool.query(sql.unsafe`
        CREATE TRIGGER test_hold_completion BEFORE UPDATE ON idempotency_keys
        FOR EACH ROW WHEN (NEW.state = 'completed') EXECUTE FUNCTION test_hold_completion()`);
      holder = new pg.Client({ connectionString: databaseUrl });
      await holder.connect();
      await holder.query('SELECT pg_advisory_lock(917001)');
      const { temporal } = await testStack();
      child = await startApiProcess({
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: temporal.address,
        SIGNING_SECRET: TEST_SIGNING_SECRET,
        LOG_LEVEL: 'warn',
        TEMPORAL_TASK_QUEUE: `idempotency-crash-${randomUUID()}`,
      });
      const key = randomUUID();
      const name = `Crash ${key}`;
      const body = { name, type: 'api' };
      const sent = fetch(`${child.url}/v3/rest/feedback-sources`, {
        method: 'POST',
        headers: { 'X-Service-Api-Key': org.apiKey, 'Idempotency-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }).catch((error: unknown) => error);
      const blocked = async () =>
        (
          await holder!.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%idempotency_keys%'`,
          )
        ).rows[0]?.pid;
      assert.ok(await waitFor(async () => (await blocked()) !== undefined, 30_000), 'the completion reached the held lock');
      const pid = (await blocked())!;
      const sources = () =>
        pool.oneFirst(
          sql.type(
            z.object({ n: z.number() }),
          )`SELECT count(*)::int AS n FROM feedback_sources WHERE organization_id = ${org.organizationId} AND name = ${name}`,
        );
      assert.equal(await sources(), 0, 'the create is not committed before its response is stored');
      child.child.kill('SIGKILL');
      assert.ok((await sent) instanceof Error, 'the client saw the connection drop');
      await holder.query('SELECT pg_advisory_unlock(917001)');
      // The dead process's backend goes on, finds its client gone and rolls back.
      assert.ok(
        await waitFor(async () => (await holder!.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0, 30_000),
        "the dead process's backend ended",
      );
      assert.equal(await sources(), 0, 'nothing of the create committed');
      await pool.query(sql.unsafe`DROP TRIGGER test_hold_completion ON idempotency_keys`);
      assert.equal((await post('/v3/rest/feedback-sources', body, key)).status, 409, 'the dead claim holds until its lock passes');
      // The dead request's 60-second lock passes.
      await pool.query(sql.unsafe`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE idempotency_key = ${key}`);
      const retry = await post('/v3/rest/feedback-sources', body, key);
      assert.equal(retry.status, 201, JSON.stringify(retry.body));
      assert.equal(retry.headers.get('idempotent-replayed'), null);
      const replay = await post('/v3/rest/feedback-sources', body, key);
      assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed'), replay.body], [201, 'true', retry.body]);
      assert.equal(await sources(), 1, 'exactly one source');
    });
  });
});
