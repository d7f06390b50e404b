import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { extendEventPartitions } from '../../../src/agents/event-partitions.js';
import { dropExpiredEventPartitions, sweepDoomedSessions } from '../../../src/agents/session-deletion.js';
import { migrate } from '../../../src/db/migrate.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { addWeeks, timeOfUuid, uuidAtTime, weekPartitionName, weekStart } from '../../../src/domain/event-partitions.js';
import { MIGRATIONS_DIR } from '../../../src/paths.js';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
} from '../../../harness/agents.js';
import { createEmptyDatabase } from '../../../harness/stack.js';

/** Where each of a session's events is stored (the partition's name). */
const partitionsOf = (pool: DatabasePool, sessionId: string) =>
  pool.anyFirst(sql.type(z.object({ p: z.string() }))`
    SELECT DISTINCT tableoid::regclass::text AS p FROM agent_events WHERE session_id = ${sessionId}`);

/** An id of `at`'s millisecond with random bits after it: a UUIDv7 made at that time, or (version 4) a legacy id that falls there. */
function idAt(at: Date, version: 4 | 7): string {
  const hex = uuidAtTime(at).replaceAll('-', '').slice(0, 12) + randomBytes(10).toString('hex');
  const v = `${hex.slice(0, 12)}${version}${hex.slice(13, 16)}${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 32)}`;
  return `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20)}`;
}

const count = (pool: DatabasePool, query: ReturnType<typeof sql.unsafe>) =>
  pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT (${query})::int AS n`);

describe('agent_events partitioned by week (decision 0216)', function () {
  this.timeout(120_000);

  describe('a stack on this version', () => {
    let ctx: ProcessingContext;
    before(async () => {
      ctx = await processingContext();
    });
    after(async () => ctx?.close());

    it("stores a new session's events in its week's partition, with the organization on every event-level row", async () => {
      const app = await ctx.newApp();
      const first = await ctx.ingest(
        app,
        sessionRequest(app, [userMessage(1, 'hello'), assistantMessage(2, 'hi there')], {
          participants: [{ externalId: 'customer-1', displayName: 'Customer' }],
        }),
      );
      assert.equal(first.status, 202, JSON.stringify(first.body));
      const sessionId = first.body.sessionId as string;
      assert.equal(sessionId[14], '7', `a UUIDv7 session id: ${sessionId}`);
      const revised = await ctx.ingest(
        app,
        sessionRequest(app, [assistantMessage(2, 'hi there, revised', { revision: 2 }), feedbackEvent(3, 'e2', 'negative')], {
          status: 'ended',
        }),
      );
      assert.equal(revised.status, 202, JSON.stringify(revised.body));
      await ctx.processedThrough(sessionId, 3);

      assert.deepEqual(await partitionsOf(ctx.pool, sessionId), [weekPartitionName(weekStart(timeOfUuid(sessionId)))]);
      const org = ctx.org.organizationId;
      for (const table of ['agent_events', 'agent_event_revisions', 'agent_analysis_jobs', 'agent_participants']) {
        const rows = await ctx.pool.any(sql.type(z.object({ organization_id: z.string().nullable() }))`
          SELECT organization_id FROM ${sql.identifier([table])} WHERE session_id = ${sessionId}`);
        assert.ok(rows.length > 0, `${table} has rows of the session`);
        assert.deepEqual(new Set(rows.map((r) => r.organization_id)), new Set([org]), table);
      }
      // A revision names its session, and goes with it.
      const read = await ctx.api.request(`/v3/rest/agent-conversations/sessions/${sessionId}`, {
        headers: { 'X-Service-Api-Key': ctx.org.apiKey },
      });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.deepEqual(
        (read.body.events as { sequence: number; revision: number }[]).map((e) => [e.sequence, e.revision]),
        [
          [1, 1],
          [2, 2],
          [3, 1],
        ],
      );
    });
  });

  describe('the migration from 0.1 data', () => {
    let pool: DatabasePool;
    let url: string;
    const now = new Date();
    const inWindow = idAt(new Date(weekStart(now).getTime() + 3_600_000), 4);
    const elsewhere = '3f0c2a4e-1b2d-4c3e-9f4a-5b6c7d8e9f00';
    let org: string;
    let application: string;

    before(async () => {
      url = await createEmptyDatabase();
      const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-migrations-0035-'));
      for (const name of await readdir(MIGRATIONS_DIR))
        if (name < '0036') await copyFile(path.join(MIGRATIONS_DIR, name), path.join(dir, name));
      await migrate(url, dir);
      pool = await createDatabasePool(url);
      org = await pool.oneFirst(sql.type(z.object({ id: z.string() }))`INSERT INTO organizations (name) VALUES ('Legacy') RETURNING id`);
      application = await pool.oneFirst(sql.type(z.object({ id: z.string() }))`
        INSERT INTO agent_applications (organization_id, name, agent_key) VALUES (${org}, 'Legacy app', 'legacy') RETURNING id`);
      for (const [id, name] of [
        [inWindow, 'in-window'],
        [elsewhere, 'elsewhere'],
      ] as const) {
        await pool.query(sql.unsafe`
          INSERT INTO agent_sessions (id, organization_id, application_id, external_session_id) VALUES (${id}, ${org}, ${application}, ${name})`);
        await pool.query(sql.unsafe`
          INSERT INTO agent_events (session_id, external_event_id, sequence, revision, type, occurred_at, content_hash, payload)
          SELECT ${id}, 'e' || g, g, 1, 'user_message', now(), '\\x00', '{"content": "old"}' FROM generate_series(1, 3) g`);
        await pool.query(sql.unsafe`
          INSERT INTO agent_event_revisions (event_id, revision, content_hash)
          SELECT id, 0, '\\x00' FROM agent_events WHERE session_id = ${id} AND sequence = 1`);
      }
      await migrate(url);
    });
    after(async () => pool?.end());

    it('keeps the rows where they were, in the legacy partition, and gives the revisions their sessions', async () => {
      assert.deepEqual(await partitionsOf(pool, inWindow), ['agent_events_legacy']);
      assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_events WHERE session_id IN (${inWindow}, ${elsewhere})`), 6);
      assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_event_revisions WHERE session_id IS NOT NULL`), 2);
      // Rows before 0.2 keep a NULL organization; nothing reads them by it.
      assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_events WHERE organization_id IS NOT NULL`), 0);
    });

    it("the maintainer attaches the weeks, splits this week around a legacy id that falls in it, and switches new sessions' ids", async () => {
      const result = await extendEventPartitions(pool, { now });
      const week = weekStart(now);
      assert.equal(result.switchedToTimeOrderedIds, true);
      assert.equal(result.legacyIdsKept, 1);
      assert.deepEqual(result.attached.slice(0, 2), [weekPartitionName(week), weekPartitionName(week, 1)]);
      assert.equal(result.attached.at(-1), weekPartitionName(addWeeks(week, 4)));
      // A second run has nothing to do.
      assert.deepEqual((await extendEventPartitions(pool, { now })).attached, []);

      // The legacy session still takes events (a 0.1 writer's insert: no organization), in the legacy partition.
      await pool.query(sql.unsafe`
        INSERT INTO agent_events (session_id, external_event_id, sequence, revision, type, occurred_at, content_hash)
        VALUES (${inWindow}, 'e4', 4, 1, 'user_message', now(), '\\x00')`);
      assert.deepEqual(await partitionsOf(pool, inWindow), ['agent_events_legacy']);
      assert.equal(
        await pool.oneFirst(
          sql.type(
            z.object({ o: z.string() }),
          )`SELECT organization_id AS o FROM agent_events WHERE session_id = ${inWindow} AND sequence = 4`,
        ),
        org,
      );
      // A 0.1 writer's revision: the trigger finds its session and organization.
      await pool.query(sql.unsafe`
        INSERT INTO agent_event_revisions (event_id, revision, content_hash)
        SELECT id, 1, '\\x00' FROM agent_events WHERE session_id = ${inWindow} AND sequence = 4`);
      assert.equal(
        await count(
          pool,
          sql.unsafe`SELECT count(*) FROM agent_event_revisions WHERE session_id = ${inWindow} AND organization_id = ${org} AND revision = 1`,
        ),
        1,
      );

      // A new session (a 0.1 writer's insert takes the default too) gets a UUIDv7 id, and its events this week's partition.
      const fresh = await pool.oneFirst(sql.type(z.object({ id: z.string() }))`
        INSERT INTO agent_sessions (organization_id, application_id, external_session_id) VALUES (${org}, ${application}, 'fresh') RETURNING id`);
      await pool.query(sql.unsafe`
        INSERT INTO agent_events (session_id, external_event_id, sequence, revision, type, occurred_at, content_hash)
        VALUES (${fresh}, 'e1', 1, 1, 'user_message', now(), '\\x00')`);
      const piece = timeOfUuid(fresh) > timeOfUuid(inWindow) ? weekPartitionName(week, 1) : weekPartitionName(week);
      assert.deepEqual(await partitionsOf(pool, fresh), [piece]);
    });
  });

  it('two maintainers at once (replicas starting together) attach each week once, and both succeed', async () => {
    const url = await createEmptyDatabase();
    await migrate(url);
    const pools = [await createDatabasePool(url), await createDatabasePool(url)];
    try {
      const results = await Promise.all(pools.map((p) => extendEventPartitions(p)));
      const attached = results.flatMap((r) => r.attached).sort();
      const week = weekStart(new Date());
      assert.deepEqual(
        attached,
        [0, 1, 2, 3, 4].map((n) => weekPartitionName(addWeeks(week, n))),
      );
      assert.equal(results.filter((r) => r.switchedToTimeOrderedIds).length, 1);
      const window = await pools[0]!.one(sql.type(z.object({ pending_high: z.string().nullable(), high: z.string() }))`
        SELECT pending_high, high FROM agent_event_partition_window`);
      assert.deepEqual(window, { pending_high: null, high: uuidAtTime(addWeeks(week, 5)) });
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  describe('retention by partition', () => {
    let pool: DatabasePool;
    let org: string;
    const now = new Date();
    const later = addWeeks(now, 6);

    /** A session of `application` created at `at`, its last activity `daysAgo` days ago, with the rows processing gives it. */
    const session = async (application: string, at: Date, daysAgo: number) => {
      const id = idAt(at, 7);
      await pool.query(sql.unsafe`
        INSERT INTO agent_sessions (id, organization_id, application_id, external_session_id, last_ingest_at)
        VALUES (${id}, ${org}, ${application}, ${id}, now() - make_interval(days => ${daysAgo}))`);
      await pool.query(sql.unsafe`
        INSERT INTO agent_events (session_id, organization_id, external_event_id, sequence, revision, type, occurred_at, content_hash, payload)
        SELECT ${id}, ${org}, 'e' || g, g, 1, 'assistant_message', now(), '\\x00', '{}' FROM generate_series(1, 2) g`);
      await pool.query(sql.unsafe`
        INSERT INTO agent_analysis_jobs (session_id, organization_id, event_id, revision, status)
        SELECT session_id, organization_id, id, 1, 'done' FROM agent_events WHERE session_id = ${id}`);
      await pool.query(sql.unsafe`
        INSERT INTO usage_records (organization_id, application_id, session_id, event_id, unit, quantity)
        SELECT organization_id, ${application}, session_id, id, 'agent_response_processed', 1 FROM agent_events WHERE session_id = ${id}`);
      await pool.query(sql.unsafe`
        INSERT INTO agent_participants (session_id, organization_id, participant_key) VALUES (${id}, ${org}, 'ext:someone')`);
      return id;
    };

    before(async () => {
      const url = await createEmptyDatabase();
      await migrate(url);
      pool = await createDatabasePool(url);
      await extendEventPartitions(pool, { now });
      // Six weeks on: the weeks made today are behind, and the maintainer has made the ones ahead.
      await extendEventPartitions(pool, { now: later });
      org = await pool.oneFirst(sql.type(z.object({ id: z.string() }))`INSERT INTO organizations (name) VALUES ('Retained') RETURNING id`);
    });
    after(async () => pool?.end());

    it('waits at most its lock timeout for a busy agent_events; then drops every past week with no session kept, with its sessions; usage outlives them', async () => {
      const app = (retention: number | null) =>
        pool.oneFirst(sql.type(z.object({ id: z.string() }))`
          INSERT INTO agent_applications (organization_id, name, agent_key, retention_days)
          VALUES (${org}, 'App', ${`app-${randomBytes(4).toString('hex')}`}, ${retention}) RETURNING id`);
      const short = await app(7);
      const forever = await app(null);
      const week = weekStart(now);
      const weeks = [0, 1, 2, 3, 4, 5].map((n) => addWeeks(week, n));
      const [emptyWeek, doomedWeek, mixedWeek] = weeks as [Date, Date, Date];
      const doomed = [
        await session(short, new Date(doomedWeek.getTime() + 1000), 30),
        await session(short, new Date(doomedWeek.getTime() + 86_400_000), 20),
      ];
      const mixed = [
        await session(short, new Date(mixedWeek.getTime() + 1000), 30),
        await session(forever, new Date(mixedWeek.getTime() + 2000), 30),
      ];
      const usageBefore = await count(pool, sql.unsafe`SELECT count(*) FROM usage_records`);
      const droppable = weeks.filter((w) => w !== mixedWeek).map((w) => weekPartitionName(w));

      // A reader holding agent_events (a long export's transaction) blocks the drops' lock: each gives up after 200 ms.
      const blocked = await pool.connect(async (c) => {
        await c.query(sql.unsafe`BEGIN`);
        await c.query(sql.unsafe`SELECT count(*) FROM agent_events`);
        try {
          return await dropExpiredEventPartitions(pool, { now: later, lockWaitMs: 200 });
        } finally {
          await c.query(sql.unsafe`ROLLBACK`);
        }
      });
      assert.deepEqual(blocked, { dropped: [], deletedSessions: 0, busy: droppable });
      for (const id of doomed) assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_sessions WHERE id = ${id}`), 1);

      const result = await dropExpiredEventPartitions(pool, { now: later });
      assert.deepEqual(result, { dropped: droppable, deletedSessions: 2, busy: [] });
      const names = await pool.anyFirst(sql.type(z.object({ n: z.string() }))`
        SELECT c.relname AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'agent_events'::regclass`);
      assert.ok(!names.includes(weekPartitionName(emptyWeek)));
      assert.ok(names.includes(weekPartitionName(mixedWeek)));
      assert.ok(names.includes(weekPartitionName(weekStart(later))), 'the current week stays');
      for (const id of doomed) {
        assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_sessions WHERE id = ${id}`), 0);
        assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_analysis_jobs WHERE session_id = ${id}`), 0);
        assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_participants WHERE session_id = ${id}`), 0);
      }
      assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM usage_records`), usageBefore);
      assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM usage_records WHERE session_id IS NULL`), 4);

      // The week with a kept session is the tier's edge: the row-by-row sweep deletes its doomed session only.
      assert.equal(await sweepDoomedSessions(pool, 25), 1);
      assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_events WHERE session_id = ${mixed[0]!}`), 0);
      assert.equal(await count(pool, sql.unsafe`SELECT count(*) FROM agent_events WHERE session_id = ${mixed[1]!}`), 2);
    });
  });
});
