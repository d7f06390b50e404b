import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { connectTemporalClient, type TemporalClient } from '../../../src/temporal/connection.js';
import { agentSessionWorkflowId } from '../../../src/temporal/ids.js';
import { ORGANIZATION_ID, SESSION_ID, STATUS } from '../../../src/temporal/search-attributes.js';
import { sessionQuery } from '../../../workflows/agent-session/contract.js';
import { assistantMessage, createTestAgentApp, sessionRequest, userMessage, type TestAgentApp } from '../../../harness/agents.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase, testStack } from '../../../harness/stack.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';
import { startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { eventually, waitFor } from '../../../harness/wait.js';
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { sessionWorkflowSettings, wakeSession } from '../../../src/agents/session-workflow.js';
import { TemporalGateway } from '../../../src/temporal/gateway.js';
import { drainSessionWakes } from '../../../src/agents/drainer.js';
import { takeHoldSignalTurns } from '../../../src/db/repositories/agent-sessions.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import { ensureSessionWakesSchedule } from '../../../src/temporal/schedules.js';
import { addCredits } from '../../../src/db/repositories/organizations.js';

/**
 * The API stores and requests a wake; the drainer (here run by the test, its Temporal client behind a
 * proxy the test can cut) processes it and tells `agent-session/<sessionId>` with signal-with-start.
 */
describe('agent ingest: the drainer processes sessions and tells their workflows', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  let worker: TestWorker;
  let proxy: TcpProxy;
  let temporal: TemporalClient;
  let api: TestApi;
  let org: TestOrg;
  let app: TestAgentApp;
  let settings: ReturnType<typeof sessionWorkflowSettings>;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    // The session workflows run on this worker; the drainer is the test's own.
    worker = await startTestWorker(pool, { drainer: false });
    const stack = await testStack();
    proxy = await TcpProxy.start(Number(stack.temporal.address.split(':')[1]));
    const config = testConfig({
      TEMPORAL_TASK_QUEUE: worker.taskQueue,
      AGENT_SESSION_IDLE_SECONDS: '600',
      AGENT_BILLING_RECHECK_SECONDS: '2',
    });
    settings = sessionWorkflowSettings(config);
    temporal = await connectTemporalClient({ temporal: { ...config.temporal, address: `127.0.0.1:${proxy.port}` } });
    api = await startTestApi({ pool, config, temporal });
    org = await createTestOrg(pool, { credits: 10 });
    app = await testApp(org);
  });
  after(async () => {
    await api?.close();
    await temporal?.connection.close();
    await proxy?.down();
    await worker?.stop();
    await pool?.end();
  });

  const testApp = (owner: TestOrg): Promise<TestAgentApp> => createTestAgentApp(pool, owner, 'wf', { name: 'Wf' });
  const ingest = (body: unknown, as: TestAgentApp = app) =>
    api.request('/v3/rest/agent-conversations/ingest', { method: 'POST', headers: { 'X-Service-Agent-Key': as.secret }, json: body });
  const stored = (sessionId: string) =>
    pool.one(sql.type(z.object({ w: z.number().nullable(), wake: z.boolean(), told: z.boolean() }))`
    SELECT processed_through_sequence AS w, wake_requested_at IS NOT NULL AS wake, workflow_signalled_at IS NOT NULL AS told
    FROM agent_sessions WHERE id = ${sessionId}`);

  /** Runs the drainer until the returned stop() (which resolves with what it did and the warnings it logged). */
  function drainer(signalEverySeconds = 0, routineSignalsPerSecond = 0) {
    const abort = new AbortController();
    const warnings: string[] = [];
    const rounds = { held: 0 };
    /** When each session's workflow was told (ms since the drainer started). */
    const told = new Map<string, number[]>();
    const started = Date.now();
    const run = drainSessionWakes({
      shard: { index: 0, count: 1 },
      pool,
      extractor: new LocalSignalExtractor(),
      analysisCreditCost: 1,
      concurrency: 2,
      batchSessions: 10,
      pollMs: 50,
      idlePollMs: 10_000,
      signalEverySeconds,
      routineSignalsPerSecond,
      tell: (target) => {
        told.set(target.sessionId, [...(told.get(target.sessionId) ?? []), Date.now() - started]);
        return wakeSession(TemporalGateway.of(temporal), settings, target);
      },
      heartbeat: () => undefined,
      signal: abort.signal,
      runSeconds: 110,
      logger: { warn: (meta, message) => warnings.push(`${message} ${String(meta.sessionId)}`) },
      observeAnalyses: (results) => {
        for (const r of results) if (r.billingBlocked) rounds.held++;
      },
    });
    return { warnings, rounds, told, stop: async () => (abort.abort(), { ...(await run), warnings }) };
  }

  it('processes a session and starts its one workflow with search attributes; the run finishes once the session ended', async () => {
    const first = await ingest(sessionRequest(app, [userMessage(1, 'q')], { externalSessionId: 'wf-1' }));
    assert.equal(first.status, 202);
    const sessionId = first.body.sessionId as string;
    assert.deepEqual(
      await stored(sessionId),
      { w: null, wake: true, told: false },
      'stored, the wake requested, nothing processed without a drainer',
    );
    const second = await ingest(sessionRequest(app, [assistantMessage(3, 'a')], { externalSessionId: 'wf-1', status: 'ended' }));
    assert.equal(second.status, 202);
    const d = drainer();
    try {
      const handle = temporal.client.workflow.getHandle(agentSessionWorkflowId(sessionId));
      const view = await eventually(
        () => handle.query(sessionQuery),
        (v) => v.status === 'ended' && v.processedThroughSequence === 3,
      );
      assert.deepEqual(
        { ...view, ingests: 0 },
        {
          processedThroughSequence: 3,
          highestSequence: 3,
          status: 'ended',
          processingStatus: 'pending',
          waitingForSequence: null,
          ingests: 0,
        },
      );
      // Ended and fully processed: the run finishes (a later revision or feedback would start a new one).
      assert.equal(await handle.result(), 'finished');
      const description = await handle.describe();
      assert.equal(description.status.name, 'COMPLETED');
      assert.equal(description.typedSearchAttributes.get(ORGANIZATION_ID), org.organizationId);
      assert.equal(description.typedSearchAttributes.get(SESSION_ID), sessionId);
      await eventually(
        async () => (await handle.describe()).typedSearchAttributes.get(STATUS),
        (s) => s === 'ended',
      );
      assert.deepEqual(await stored(sessionId), { w: 3, wake: false, told: true });
    } finally {
      const done = await d.stop();
      assert.equal(done.sessions >= 1 && done.events === 2, true, JSON.stringify(done));
    }
  });

  it("a burst of new sessions: processed at once, their workflows told at the worker's pace (the rest deferred, not lost); an ingest to a deferred session is processed at once", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await ingest(
        sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: `wf-burst-${i}` }),
      );
      ids.push(res.body.sessionId as string);
    }
    // Two routine signals a second: three go at once (a second's depth), the other five one slot apart.
    const d = drainer(0, 2);
    try {
      const all = await eventually(
        () => Promise.all(ids.map(stored)),
        (rows) => rows.every((r) => r.w === 2),
      );
      assert.ok(
        all.every((r) => r.w === 2),
        'every session processed',
      );
      const deferred = ids.filter((id) => !d.told.has(id));
      assert.ok(deferred.length >= 3, `signals deferred while every session was processed (told: ${d.told.size})`);
      // A deferred session's turn is due again and its wake set for its slot; a new turn is processed at once all the same.
      const late = deferred.at(-1)!;
      assert.deepEqual(await stored(late), { w: 2, wake: true, told: false });
      const external = `wf-burst-${ids.indexOf(late)}`;
      await ingest(sessionRequest(app, [userMessage(3, 'q2'), assistantMessage(4, 'a2')], { externalSessionId: external }));
      await eventually(
        () => stored(late),
        (r) => r.w === 4,
      );
      assert.equal((await stored(late)).w, 4);
      assert.ok(!d.told.has(late) || d.told.get(late)![0]! >= 1500, 'its signal still waited for its slot');
      // Every workflow is told in the end, each once (its slot kept, not taken again), at most two a second after the first three.
      const times = await eventually(
        async () => ids.map((id) => d.told.get(id)?.[0]),
        (t) => t.every((x) => x !== undefined),
        30_000,
      );
      const sorted = (times as number[]).sort((a, b) => a - b);
      assert.ok(sorted.at(-1)! - sorted[0]! >= 2000, `eight signals spread over at least 2 s: ${sorted.join(', ')}`);
      for (const id of ids) {
        const view = await eventually(
          () => temporal.client.workflow.getHandle(agentSessionWorkflowId(id)).query(sessionQuery),
          (v) => v.processedThroughSequence !== null,
        );
        assert.equal(view.processedThroughSequence, id === late ? 4 : 2);
      }
    } finally {
      await d.stop();
    }
  });

  it('Temporal unreachable: 202 all the same, the drainer processes without it, and tells the workflow once Temporal is back', async () => {
    await proxy.down();
    const accepted = await ingest(sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: 'wf-outage' }));
    assert.deepEqual([accepted.status, accepted.body.acceptedEventCount], [202, 2]);
    const sessionId = accepted.body.sessionId as string;
    const d = drainer();
    try {
      assert.ok(
        await waitFor(
          async () => d.warnings.some((w) => w.includes('could not tell the session workflow') && w.includes(sessionId)),
          30_000,
        ),
        'the signal did not fail',
      );
      const during = await stored(sessionId);
      assert.deepEqual([during.w, during.told], [2, false], 'processed while Temporal is down; the workflow not told yet');
      await proxy.up();
      // The drainer looks at the session again a few seconds later, with no new ingest.
      assert.deepEqual(
        await eventually(
          () => stored(sessionId),
          (s) => s.told && !s.wake,
          60_000,
        ),
        { w: 2, wake: false, told: true },
      );
      const view = await eventually(
        () => temporal.client.workflow.getHandle(agentSessionWorkflowId(sessionId)).query(sessionQuery),
        (v) => v.processedThroughSequence === 2,
      );
      assert.equal(view.processedThroughSequence, 2);
    } finally {
      await proxy.up();
      await d.stop();
    }
  });

  it('no drainer running: the reconciler schedule wakes the stranded session, whose workflow processes it', async () => {
    const accepted = await ingest(
      sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: 'wf-stranded' }),
    );
    assert.equal(accepted.status, 202);
    const sessionId = accepted.body.sessionId as string;
    assert.deepEqual(await stored(sessionId), { w: null, wake: true, told: false });
    // What the worker creates at start: the reconciler, here every 2 s on this suite's task queue.
    const scheduleId = `wakes-${randomUUID()}`;
    await ensureSessionWakesSchedule(
      temporal.client,
      { taskQueue: worker.taskQueue, everySeconds: 2, scheduleId, settings },
      { info: () => undefined },
    );
    try {
      assert.deepEqual(
        await eventually(
          () => stored(sessionId),
          (s) => s.w === 2 && !s.wake,
          60_000,
        ),
        { w: 2, wake: false, told: false },
      );
      const view = await temporal.client.workflow.getHandle(agentSessionWorkflowId(sessionId)).query(sessionQuery);
      assert.equal(view.processedThroughSequence, 2);
    } finally {
      await temporal.client.schedule.getHandle(scheduleId).delete();
    }
  });

  it('analyses waiting for credits: the workflow is told of the hold once and runs them, not the drainer on every ingest; told again after a process died before the signal, when the session ends, and after a failed signal', async () => {
    const owner = await createTestOrg(pool, { credits: 0 });
    const broke = await testApp(owner);
    const turn = (n: number) => [userMessage(2 * n + 1, `question ${n}`), assistantMessage(2 * n + 2, `answer ${n}`)];
    // told: the drainer sent the hold's signal (a turn taken but not confirmed as sent does not count).
    const hold = (sessionId: string) =>
      pool.one(sql.type(z.object({ w: z.number().nullable(), wake: z.boolean(), told: z.boolean(), queued: z.number() }))`
      SELECT processed_through_sequence AS w, wake_requested_at IS NOT NULL AS wake,
        hold_signalled_at IS NOT NULL AND workflow_signalled_at IS NOT NULL AS told,
        (SELECT count(*)::int FROM agent_analysis_jobs j WHERE j.session_id = s.id AND j.status = 'queued') AS queued
      FROM agent_sessions s WHERE id = ${sessionId}`);
    const d = drainer(120);
    try {
      const first = await ingest(sessionRequest(broke, turn(0), { externalSessionId: 'wf-held' }), broke);
      assert.equal(first.body.processingStatus, 'billing_blocked');
      const sessionId = first.body.sessionId as string;
      const handle = temporal.client.workflow.getHandle(agentSessionWorkflowId(sessionId));
      const signals = async () =>
        (await handle.fetchHistory()).events!.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'eventsIngested')
          .length;
      assert.deepEqual(
        await eventually(
          () => hold(sessionId),
          (h) => h.w === 2 && !h.wake,
        ),
        { w: 2, wake: false, told: true, queued: 1 },
      );
      await eventually(
        () => handle.query(sessionQuery),
        (v) => v.processingStatus === 'billing_blocked',
      );
      // Four more ingests: processed and metered, their analyses queued for the workflow, which
      // already waits; the drainer neither tries them nor tells the workflow again.
      for (let n = 1; n <= 4; n++) {
        const res = await ingest(sessionRequest(broke, turn(n), { externalSessionId: 'wf-held' }), broke);
        assert.equal(res.status, 202);
        await eventually(
          () => hold(sessionId),
          (h) => h.w === 2 * n + 2 && !h.wake,
        );
      }
      assert.equal(d.rounds.held, 1, 'one round held by the drainer: the first');
      assert.equal(await signals(), 1, 'one signal for the hold, none for the ingests after it');
      assert.deepEqual(await hold(sessionId), { w: 10, wake: false, told: true, queued: 5 });

      // Credits for them all: a round that is not held ends the hold.
      await pool.transaction((tx) => addCredits(tx, owner.organizationId, 6, 'test'));
      await ingest(sessionRequest(broke, turn(5), { externalSessionId: 'wf-held' }), broke);
      assert.deepEqual(
        await eventually(
          () => hold(sessionId),
          (h) => h.w === 12 && h.queued === 0 && !h.wake,
        ),
        { w: 12, wake: false, told: false, queued: 0 },
      );

      // A drainer that took a new hold's turn and died before its signal: the next held round tells it.
      assert.equal((await takeHoldSignalTurns(pool, [sessionId])).length, 1);
      assert.equal((await hold(sessionId)).told, false);
      await ingest(sessionRequest(broke, turn(6), { externalSessionId: 'wf-held' }), broke);
      assert.deepEqual(
        await eventually(
          () => hold(sessionId),
          (h) => h.w === 14 && h.told && !h.wake,
        ),
        { w: 14, wake: false, told: true, queued: 1 },
      );
      assert.equal(await signals(), 2);

      // The session ends while held, and that signal fails: not taken for told, told once Temporal is back.
      await proxy.down();
      await ingest(sessionRequest(broke, turn(7), { externalSessionId: 'wf-held', status: 'ended' }), broke);
      assert.ok(
        await waitFor(
          async () => d.warnings.some((w) => w.includes('could not tell the session workflow') && w.includes(sessionId)),
          30_000,
        ),
        'the signal did not fail',
      );
      assert.deepEqual(await hold(sessionId), { w: 16, wake: true, told: false, queued: 2 });
      await proxy.up();
      assert.deepEqual(
        await eventually(
          () => hold(sessionId),
          (h) => h.told && !h.wake,
          60_000,
        ),
        { w: 16, wake: false, told: true, queued: 2 },
      );
      assert.equal(await signals(), 3);
      assert.equal(
        (
          await eventually(
            () => handle.query(sessionQuery),
            (v) => v.status === 'ended',
          )
        ).status,
        'ended',
      );

      // Credits nobody announces: the workflow, which holds, looks again by itself, analyses and finishes.
      await pool.transaction((tx) => addCredits(tx, owner.organizationId, 2, 'test'));
      assert.equal(await handle.result(), 'finished');
      assert.deepEqual(await hold(sessionId), { w: 16, wake: false, told: false, queued: 0 });
    } finally {
      await proxy.up();
      await d.stop();
    }
  });
});
