import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'slonik';
import { z } from 'zod';
import { processDueSessions } from '../../../src/agents/processing.js';
import { drainerSettings, drainSessionWakes } from '../../../src/agents/drainer.js';
import { HOT_MS } from '../../../src/agents/drain-wakeups.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import { testConfig } from '../../../harness/config.js';
import { DrainerShardHost, shardShare } from '../../../src/agents/drainer-shards.js';
import { sessionShards } from '../../../src/db/repositories/agent-sessions.js';
import {
  agentContext,
  assistantMessage,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { startTestWorker } from '../../../harness/worker.js';
import { eventually } from '../../../harness/wait.js';
import {
  legacySessionDrainerWorkflowId,
  mainQueueSessionDrainerWorkflowId,
  SESSION_DRAINER_WORKFLOW,
  sessionDrainerTaskQueue,
  sessionDrainerWorkflowId,
} from '../../../workflows/session-drainer/contract.js';

/** Issue 34: the session drainer in shards, each worker holding its share (decision 0199). */
describe('session drainer shards', function () {
  this.timeout(120_000);
  let t: AgentContext;
  let app: TestAgentApp;
  before(async () => {
    t = await agentContext({ credits: 1000 });
    app = await t.newApp();
  });
  after(async () => t?.close());

  it("a worker's share is the shards over the live workers, rounded up", () => {
    assert.deepEqual(
      [shardShare(4, 1), shardShare(4, 2), shardShare(4, 3), shardShare(5, 2), shardShare(4, 8), shardShare(1, 0)],
      [4, 2, 2, 3, 1, 1],
    );
  });

  it("each shard claims only its bucket's sessions, and the shards together claim every one", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      const res = await t.ingest(
        app,
        sessionRequest(app, [userMessage(1, `q${i}`), assistantMessage(2, `a${i}`)], { externalSessionId: `shard-${i}` }),
      );
      assert.equal(res.status, 202);
      ids.push(res.body.sessionId as string);
    }
    const buckets = await sessionShards(t.pool, ids, 3);
    assert.equal(new Set(buckets.values()).size, 3, 'the 24 sessions fall in all three buckets');
    const claimed = new Map<string, number>();
    for (const index of [0, 1, 2]) {
      const batch = await processDueSessions(t.pool, { index, count: 3 }, [], 100, 500);
      for (const s of batch.filter((s) => ids.includes(s.sessionId))) {
        assert.equal(buckets.get(s.sessionId), index, `shard ${index} claimed a session of bucket ${buckets.get(s.sessionId)}`);
        assert.ok(!claimed.has(s.sessionId), 'no session claimed by two shards');
        claimed.set(s.sessionId, index);
        assert.equal(s.processedThroughSequence, 2);
      }
    }
    assert.deepEqual([...claimed.keys()].sort(), [...ids].sort(), 'every session was claimed by its shard');
  });

  it('a worker holds its share of the runs: the latest beyond it yield once another worker says it is alive, and take them back when it leaves', async () => {
    const taskQueue = `shards-${randomUUID()}`;
    const host = (worker: string) =>
      new DrainerShardHost({ pool: t.pool, taskQueue, worker, shards: 4, lanes: 2, announceEveryMs: 100, liveWithinSeconds: 2 });
    const a = host('a');
    await a.start();
    const runs = [a.enter(), a.enter(), a.enter(), a.enter()];
    assert.deepEqual(
      runs.map((r) => r.keep()),
      [true, true, true, true],
      'alone, a worker holds every shard',
    );
    const b = host('b');
    await b.start();
    const shared = await eventually(
      async () => runs.map((r) => r.keep()),
      (keeps) => keeps.filter(Boolean).length === 2,
      5000,
    );
    assert.deepEqual(shared, [true, true, false, false], 'with two workers, the two runs that came last yield');
    runs[3]!.leave();
    runs[2]!.leave();
    const late = a.enter();
    assert.equal(late.keep(), false, 'a run beyond the share yields at once');
    late.leave();
    await b.stop();
    const back = await eventually(
      async () => a.share(),
      (share) => share === 4,
      5000,
    );
    assert.equal(back, 4, 'once the other worker withdrew, one worker holds every shard again');
    for (const r of runs) r.leave();
    await a.stop();
  });

  it("the drainer of before the shards (no shard in its input) ends itself; the shards' drainers run", async () => {
    const worker = await startTestWorker(t.pool, { drainerShards: 2 });
    try {
      const legacy = await t.api.temporal.client.workflow.start(SESSION_DRAINER_WORKFLOW, {
        workflowId: legacySessionDrainerWorkflowId(worker.taskQueue),
        taskQueue: worker.taskQueue,
        args: [{}],
      });
      assert.equal(await legacy.result(), undefined);
      const shards = await Promise.all(
        [0, 1].map(
          async (shard) =>
            (await t.api.temporal.client.workflow.getHandle(sessionDrainerWorkflowId(worker.taskQueue, shard, 2)).describe()).status.name,
        ),
      );
      assert.deepEqual(shards, ['RUNNING', 'RUNNING']);
    } finally {
      await worker.stop();
    }
  });

  it("a shard's drainer of before, on the main queue, ends itself; the shards on the drainers' queue drain every bucket", async () => {
    const worker = await startTestWorker(t.pool, { drainerShards: 2 });
    try {
      // As a worker of before decision 0211 started it: shard 1 of 2, on the main queue.
      const before = await t.api.temporal.client.workflow.start(SESSION_DRAINER_WORKFLOW, {
        workflowId: mainQueueSessionDrainerWorkflowId(worker.taskQueue, 0, 2),
        taskQueue: worker.taskQueue,
        args: [{ shard: 0, shards: 2 }],
      });
      assert.equal(await before.result(), undefined);
      const ended = await before.describe();
      assert.equal(ended.status.name, 'COMPLETED');
      assert.equal(ended.taskQueue, worker.taskQueue);
      const shards = await Promise.all(
        [0, 1].map((shard) => t.api.temporal.client.workflow.getHandle(sessionDrainerWorkflowId(worker.taskQueue, shard, 2)).describe()),
      );
      assert.deepEqual(
        shards.map((d) => [d.status.name, d.taskQueue]),
        [0, 1].map(() => ['RUNNING', sessionDrainerTaskQueue(worker.taskQueue)]),
      );
      // The drainers on their own queue process an ingest, both buckets included.
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await t.ingest(
          app,
          sessionRequest(app, [userMessage(1, `q${i}`), assistantMessage(2, `a${i}`)], { externalSessionId: `own-queue-${i}` }),
        );
        assert.equal(res.status, 202);
        ids.push(res.body.sessionId as string);
      }
      assert.equal(new Set((await sessionShards(t.pool, ids, 2)).values()).size, 2, 'the sessions fall in both buckets');
      const watermarks = await eventually(
        () =>
          t.pool.anyFirst(sql.type(z.object({ w: z.number().nullable() }))`
            SELECT processed_through_sequence AS w FROM agent_sessions WHERE id = ANY(${sql.array(ids, 'uuid')})`),
        (ws) => ws.length === ids.length && ws.every((w) => w === 2),
        30_000,
      );
      assert.deepEqual(
        watermarks,
        ids.map(() => 2),
      );
    } finally {
      await worker.stop();
    }
  });
});

/** Issue 52, point 4: an idle drainer is woken by the ingests' notifications, not by polling (decision 0210). */
describe('session drainer wakes', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;
  before(async () => {
    t = await agentContext({ credits: 1000 });
    app = await t.newApp();
  });
  after(async () => t?.close());

  /** The session's watermark. */
  const watermarkOf = (sessionId: string) =>
    t.pool.oneFirst(sql.type(z.object({ w: z.number().nullable() }))`
      SELECT processed_through_sequence AS w FROM agent_sessions WHERE id = ${sessionId}`);

  /** A drainer run of one shard woken by its host's notifications, looking by itself only after a minute. */
  async function idleDrainer(heartbeat: () => void, o: { keep?: () => boolean; quiet?: boolean } = {}) {
    const host = new DrainerShardHost({
      pool: t.pool,
      taskQueue: `wakes-${randomUUID()}`,
      worker: 'w',
      shards: 1,
      lanes: 2,
      databaseUrl: t.databaseUrl,
    });
    await host.start();
    // Its listener's connect counts as a wake: quiet, the run starts once that has cooled down.
    if (o.quiet) await sleep(HOT_MS + 300);
    const abort = new AbortController();
    const run = drainSessionWakes({
      ...drainerSettings(testConfig()),
      idlePollMs: 60_000,
      shard: { index: 0, count: 1 },
      pool: t.pool,
      extractor: new LocalSignalExtractor(),
      analysisCreditCost: 1,
      tell: async () => undefined,
      heartbeat,
      signal: abort.signal,
      wakeups: host.wakeups!,
      keep: o.keep,
    });
    return {
      run,
      stop: async () => {
        abort.abort();
        await run;
        await host.stop();
      },
    };
  }

  it("an idle drainer stops looking, and an ingest's notification wakes it at once", async () => {
    let beats = 0;
    // Its own look would come only after a minute: whatever is processed sooner was woken.
    const drainer = await idleDrainer(() => void beats++);
    try {
      await sleep(HOT_MS + 300);
      const idle = beats;
      await sleep(3500);
      // Idle, it looks only after idlePollMs (a minute here), and its activity keeps heartbeating meanwhile.
      assert.ok(beats > idle, 'idle, the run still heartbeats');
      const res = await t.ingest(app, sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: 'woken' }));
      assert.equal(res.status, 202);
      const sessionId = res.body.sessionId as string;
      const watermark = await eventually(
        () => watermarkOf(sessionId),
        (w) => w === 2,
        10_000,
      );
      assert.equal(watermark, 2, 'the woken drainer processed the session');
    } finally {
      await drainer.stop();
    }
  });

  it('a claim that took nothing while a session is still due (another pass holds it) looks again soon, without a notification', async () => {
    // Ingested before the drainer listens: its notification is gone.
    const res = await t.ingest(app, sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: 'held' }));
    assert.equal(res.status, 202);
    const sessionId = res.body.sessionId as string;
    // Another pass (a worker handing the shard over, the session's workflow) holds the session's pass lock.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = () => {};
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = t.pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`agent-session-pass:${sessionId}`}, 0))`);
      holding();
      await released;
    });
    await held;
    // Its own look would come only after a minute.
    const drainer = await idleDrainer(() => undefined);
    try {
      // Past the busy second: no notification, no work; only the session still due keeps it looking.
      await sleep(HOT_MS + 500);
      const before = await watermarkOf(sessionId);
      assert.equal(before, null, 'held elsewhere, not processed yet');
      release();
      await holder;
      const watermark = await eventually(
        () => watermarkOf(sessionId),
        (w) => w === 2,
        10_000,
      );
      assert.equal(watermark, 2, 'processed once the other pass let it go');
    } finally {
      release();
      await holder.catch(() => undefined);
      await drainer.stop();
    }
  });

  it("an idle run beyond its worker's share ends within seconds, every lane with it, not at the end of its minute, also when it starts beyond it", async () => {
    let within = true;
    const drainer = await idleDrainer(() => undefined, { keep: () => within });
    try {
      // Idle: the first lane waits for a wake, the second for work.
      await sleep(HOT_MS + 300);
      within = false;
      const ended = await Promise.race([drainer.run, sleep(15_000, 'still running' as const)]);
      assert.notEqual(ended, 'still running', 'the run handed its shard over');
      assert.equal((ended as Awaited<typeof drainer.run>).yielded, true);
    } finally {
      await drainer.stop();
    }
    // A run that starts beyond the share (its call landed again on the worker it left) ends at once too.
    const beyond = await idleDrainer(() => undefined, { keep: () => false, quiet: true });
    try {
      const ended = await Promise.race([beyond.run, sleep(15_000, 'still running' as const)]);
      assert.notEqual(ended, 'still running', 'a run beyond the share from its start ended');
      assert.equal((ended as Awaited<typeof beyond.run>).yielded, true);
    } finally {
      await beyond.stop();
    }
  });
});
