import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import {
  analyseDrainedSessions,
  analyseQueued,
  analyseQueuedSessions,
  processDueSessions,
  processPending,
  processSessions,
} from '../../../src/agents/processing.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import type { SignalExtractor } from '../../../src/providers/signal-extractor/types.js';
import {
  agentContext,
  assistantMessage,
  feedbackEvent,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { createTestOrg } from '../../../harness/fixtures.js';
import { advanceSessions, takeSessionsForPass } from '../../../src/db/repositories/agent-sessions.js';

/** The session workflow's activities on a real PostgreSQL, called as a retry would call them. */
describe('session processing activities: retries', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;
  before(async () => {
    t = await agentContext({ credits: 100 });
    app = await t.newApp();
  });
  after(async () => t?.close());

  const units = (sessionId: string) =>
    t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM usage_records WHERE session_id = ${sessionId}`);

  it('a retried page whose first attempt committed continues from the stored watermark (no false gap)', async () => {
    const events = [1, 2, 3, 4, 5, 6].map((s) => (s % 2 ? userMessage(s, `q${s}`) : assistantMessage(s, `a${s}`)));
    const res = await t.ingest(app, sessionRequest(app, events, { externalSessionId: 'retry' }));
    const sessionId = res.body.sessionId as string;
    const stale = { processedThroughSequence: null, highestSequence: 6, terminal: false };
    const first = await processPending(t.pool, sessionId, stale, 4);
    assert.deepEqual([first.processedThroughSequence, first.waitingFor, first.more, first.processed, first.units], [4, null, true, 4, 2]);
    // The worker died before reporting: the workflow retries with the snapshot it had.
    const retry = await processPending(t.pool, sessionId, stale, 4);
    assert.deepEqual([retry.processedThroughSequence, retry.waitingFor, retry.processed, retry.units], [6, null, 2, 1]);
    const again = await processPending(t.pool, sessionId, stale, 4);
    assert.deepEqual([again.processedThroughSequence, again.processed, again.units], [6, 0, 0]);
    assert.equal(await units(sessionId), 3, 'one unit per final response, none twice');
  });

  it('a retried analysis batch pays and writes once', async () => {
    const res = await t.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'the export is broken'), assistantMessage(2, 'a')], {
        externalSessionId: 'pay-once',
        status: 'ended',
      }),
    );
    const sessionId = res.body.sessionId as string;
    await processPending(t.pool, sessionId, { processedThroughSequence: null, highestSequence: 2, terminal: true }, 10);
    // Both attempts have the provider's answer before either pays: they race for the payment and the write.
    const local = new LocalSignalExtractor();
    const bothAsked = Promise.withResolvers<void>();
    let asked = 0;
    const extractor: SignalExtractor = {
      name: local.name,
      extract: async (exchange) => {
        if (++asked === 2) bothAsked.resolve();
        await bothAsked.promise;
        return local.extract(exchange);
      },
    };
    const o = { extractor, creditCost: 1, limit: 20, concurrency: 2 };
    const [a, b] = await Promise.all([analyseQueued(t.pool, sessionId, o), analyseQueued(t.pool, sessionId, o)]);
    assert.equal(a.analysed + b.analysed, 1, 'two concurrent attempts: one writes');
    assert.deepEqual([a.billingBlocked, b.billingBlocked], [false, false], 'the one that found it paid is not blocked for it');
    const debits = await t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM credit_transactions WHERE organization_id = ${t.org.organizationId} AND amount < 0`);
    assert.equal(debits, 1);
    const c = await analyseQueued(t.pool, sessionId, { ...o, extractor: local });
    assert.deepEqual([c.analysed, c.remaining, c.billingBlocked, c.providerUnavailable], [0, 0, false, false]);
  });
});

/** The drainer's batches: many sessions per transaction, analyses across sessions and organizations. */
describe('session processing activities: batches of sessions', function () {
  this.timeout(60_000);
  let t: AgentContext;
  before(async () => {
    t = await agentContext({ credits: 100 });
  });
  after(async () => t?.close());

  const o = { extractor: new LocalSignalExtractor(), creditCost: 1, limit: 20, concurrency: 2 };
  const ingest = async (app: TestAgentApp, externalSessionId: string, events: ReturnType<typeof userMessage>[], status?: 'ended') =>
    (await t.ingest(app, sessionRequest(app, events, { externalSessionId, ...(status ? { status } : {}) }))).body.sessionId as string;
  const wakes = (ids: string[]) =>
    t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM agent_sessions WHERE id = ANY(${sql.array(ids, 'uuid')}) AND wake_requested_at IS NOT NULL`);

  it('one claim processes a page of every due session; a session another pass holds is skipped, not waited for, and its ingests go on', async () => {
    const app = await t.newApp();
    const turns = await Promise.all(
      Array.from({ length: 10 }, (_, i) => ingest(app, `turn-${i}`, [userMessage(1, `q${i}`), assistantMessage(2, `a${i}`)])),
    );
    const gap = await ingest(app, 'gap', [userMessage(1, 'q'), assistantMessage(3, 'a')]);
    const held = await ingest(app, 'held', [userMessage(1, 'q')]);
    // A pass over `held` in progress (the session's workflow, another lane): it holds the session's pass lock until released.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.pool.transaction(async (tx) => {
      await takeSessionsForPass(tx, [held]);
      locked();
      await released;
    });
    await isLocked;
    // An ingest never waits for a pass: the held session takes its next turn meanwhile.
    const during = await t.ingest(app, sessionRequest(app, [assistantMessage(2, 'a')], { externalSessionId: 'held' }));
    assert.equal(during.status, 202);
    const batch = await processDueSessions(t.pool, { index: 0, count: 1 }, [], 50, 500);
    const mine = new Map(batch.map((r) => [r.sessionId, r]));
    assert.ok(!mine.has(held), 'the held session is skipped');
    for (const id of turns) {
      const r = mine.get(id)!;
      assert.deepEqual(
        [r.processed, r.units, r.queued, r.processedThroughSequence, r.settled],
        [2, 1, 1, 2, false],
        'analysis queued: the wake is held for it',
      );
    }
    const g = mine.get(gap)!;
    assert.deepEqual(
      [g.processed, g.processedThroughSequence, g.waitingFor, g.settled],
      [1, 1, 2, true],
      'at the gap nothing more can be done now: settled',
    );
    assert.equal(await wakes([...turns, gap]), 10);
    release();
    await holder;
    // The ten sessions are busy in this drainer (their analyses next): the next claim takes only the released one.
    const next = await processDueSessions(t.pool, { index: 0, count: 1 }, turns, 50, 500);
    assert.deepEqual(
      next.filter((r) => r.sessionId === held || turns.includes(r.sessionId)).map((r) => [r.sessionId, r.processed, r.settled]),
      [[held, 2, false]],
    );
    // After their analyses, a pass over the eleven settles them: nothing queued any more.
    const analysed = await analyseQueuedSessions(t.pool, [...turns, held], o);
    assert.deepEqual(
      [...analysed.values()].map((a) => [a.analysed, a.remaining]),
      [...turns, held].map(() => [1, 0]),
    );
    const settled = await processSessions(t.pool, [...turns, held], 500, { holdWakeWhileQueued: true });
    assert.ok(settled.every((r) => r.settled && r.processed === 0));
    assert.equal(await wakes([...turns, gap, held]), 0);
  });

  it('analyses across organizations: each pays for its own, one without credits is billing-blocked alone', async () => {
    const appA = await t.newApp();
    const poor = await createTestOrg(t.pool, { credits: 0 });
    const appB = await t.newApp(undefined, poor);
    const a = await Promise.all(
      ['a1', 'a2'].map((id) => ingest(appA, id, [userMessage(1, 'the export fails'), assistantMessage(2, 'a')], 'ended')),
    );
    const b = await ingest(appB, 'b1', [userMessage(1, 'the export fails'), assistantMessage(2, 'a')], 'ended');
    await processSessions(t.pool, [...a, b], 500, {});
    const debits = (organizationId: string) =>
      t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM credit_transactions WHERE organization_id = ${organizationId} AND amount < 0`);
    const before = await debits(t.org.organizationId);
    const results = await analyseQueuedSessions(t.pool, [...a, b], o);
    for (const id of a) assert.deepEqual(pick(results.get(id)!), [1, 0, false, 'pending']);
    assert.deepEqual(pick(results.get(b)!), [0, 1, true, 'billing_blocked']);
    assert.equal(await debits(t.org.organizationId), before + 2);
    assert.equal(await debits(poor.organizationId), 0);
  });
});

function pick(r: { analysed: number; remaining: number; billingBlocked: boolean; processingStatus: string }) {
  return [r.analysed, r.remaining, r.billingBlocked, r.processingStatus];
}

/** Issue 52 (decision 0210): a pass reads without locking the session row; events are append-only. */
describe('session processing activities: a pass beside ingests', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;
  before(async () => {
    t = await agentContext({ credits: 100 });
    app = await t.newApp();
  });
  after(async () => t?.close());

  const state = (sessionId: string) =>
    t.pool.one(sql.type(z.object({ w: z.number().nullable(), wake: z.boolean(), marked: z.number() }))`
      SELECT s.processed_through_sequence AS w, s.wake_requested_at IS NOT NULL AS wake,
        (SELECT count(*)::int FROM agent_events e WHERE e.session_id = s.id AND e.processed_revision IS NOT NULL) AS marked
      FROM agent_sessions s WHERE s.id = ${sessionId}`);

  it("an ingest committed between a pass's read and its write keeps the wake the pass would have taken", async () => {
    const first = await t.ingest(app, sessionRequest(app, [userMessage(1, 'q')], { externalSessionId: 'race' }));
    const sessionId = first.body.sessionId as string;
    await t.pool.transaction(async (tx) => {
      const [read] = await takeSessionsForPass(tx, [sessionId]);
      // The next turn commits while the pass holds the session: no row of it is locked.
      const next = await t.ingest(app, sessionRequest(app, [assistantMessage(2, 'a')], { externalSessionId: 'race' }));
      assert.equal(next.status, 202);
      await advanceSessions(tx, [{ sessionId, watermark: 1, settled: true, wakeSeq: read!.wake_seq }]);
    });
    assert.deepEqual(await state(sessionId), { w: 1, wake: true, marked: 0 }, 'the second turn is still due');
    const pass = await processSessions(t.pool, [sessionId], 500, {});
    assert.deepEqual([pass[0]!.processed, pass[0]!.processedThroughSequence, pass[0]!.settled], [1, 2, true]);
    assert.deepEqual(await state(sessionId), { w: 2, wake: false, marked: 0 }, 'settled: taken; no event row was written by the passes');
  });

  it("the drainer's analysis round takes the wake its pass kept for the analysis, unless an ingest requested it again meanwhile", async () => {
    const o = { extractor: new LocalSignalExtractor(), creditCost: 1, limit: 20, concurrency: 2 };
    const turn = [userMessage(1, 'the export is broken'), assistantMessage(2, 'a')];
    const quiet = (await t.ingest(app, sessionRequest(app, turn, { externalSessionId: 'round-settles' }))).body.sessionId as string;
    const busy = (await t.ingest(app, sessionRequest(app, turn, { externalSessionId: 'round-keeps' }))).body.sessionId as string;
    // The drainer's pass: the analyses it queues keep the wakes (the drainer runs them next).
    const passes = await processSessions(t.pool, [quiet, busy], 500, { holdWakeWhileQueued: true });
    assert.deepEqual(
      passes.map((p) => [p.processed, p.queued, p.settled]),
      [
        [2, 1, false],
        [2, 1, false],
      ],
    );
    // The next turn of one session commits between the pass and its round.
    const next = await t.ingest(app, sessionRequest(app, [userMessage(3, 'and now?')], { externalSessionId: 'round-keeps' }));
    assert.equal(next.status, 202);
    const round = await analyseDrainedSessions(t.pool, [quiet, busy], o, {
      wakeSeqs: new Map(passes.map((p) => [p.sessionId, p.wakeSeq])),
    });
    assert.deepEqual([...round.settled], [quiet], 'the quiet session is settled by its round: no pass follows only to take its wake');
    assert.deepEqual(
      [...round.results.values()].map((r) => r.analysed),
      [1, 1],
    );
    assert.deepEqual(await state(quiet), { w: 2, wake: false, marked: 0 });
    assert.deepEqual(await state(busy), { w: 2, wake: true, marked: 0 }, 'the turn that came meanwhile is still due');
    const pass = await processSessions(t.pool, [busy], 500, { holdWakeWhileQueued: true });
    assert.deepEqual([pass[0]!.processed, pass[0]!.processedThroughSequence, pass[0]!.settled], [1, 3, true]);
    assert.deepEqual(await state(busy), { w: 3, wake: false, marked: 0 });
  });

  it("an analysis round never waits for one session's ingest while it holds the others: it writes them at once, and the held one after", async () => {
    const o = { extractor: new LocalSignalExtractor(), creditCost: 1, limit: 20, concurrency: 2 };
    const turn = [userMessage(1, 'the export is broken'), assistantMessage(2, 'a')];
    const free = (await t.ingest(app, sessionRequest(app, turn, { externalSessionId: 'round-free' }))).body.sessionId as string;
    const held = (await t.ingest(app, sessionRequest(app, turn, { externalSessionId: 'round-held' }))).body.sessionId as string;
    await processSessions(t.pool, [free, held], 500, { holdWakeWhileQueued: true });
    const jobDone = (sessionId: string) =>
      t.pool.oneFirst(sql.type(z.object({ done: z.boolean() }))`
        SELECT bool_and(status = 'done') AS done FROM agent_analysis_jobs WHERE session_id = ${sessionId}`);
    // An ingest in flight holds one session's row (as lockSessions does) until the test lets it commit.
    const release = Promise.withResolvers<void>();
    const holding = Promise.withResolvers<void>();
    const ingest = t.pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`SELECT id FROM agent_sessions WHERE id = ${held} FOR NO KEY UPDATE`);
      holding.resolve();
      await release.promise;
    });
    await holding.promise;
    const round = analyseQueuedSessions(t.pool, [free, held], o);
    try {
      for (let i = 0; !(await jobDone(free)); i++) {
        assert.ok(i < 100, 'the free session is written while the other is held');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(await jobDone(held), false, 'the held session waits for its ingest');
    } finally {
      release.resolve();
      await ingest;
    }
    const results = await round;
    assert.deepEqual([results.get(free)!.analysed, results.get(held)!.analysed, results.get(held)!.remaining], [1, 1, 0]);
    assert.equal(await jobDone(held), true);
  });

  it('a revision below the watermark and feedback arriving in an ended session below its last event are processed once', async () => {
    const res = await t.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'the export fails'), assistantMessage(2, 'a'), userMessage(5, 'thanks')], {
        externalSessionId: 'late',
        status: 'ended',
      }),
    );
    const sessionId = res.body.sessionId as string;
    await processSessions(t.pool, [sessionId], 500, {});
    assert.deepEqual(await state(sessionId), { w: 5, wake: false, marked: 0 }, 'ended: the pass went past the missing 3 and 4');
    const late = await t.ingest(
      app,
      sessionRequest(app, [feedbackEvent(3, 'e2', 'negative'), { ...userMessage(1, 'the export fails badly'), revision: 2 }], {
        externalSessionId: 'late',
      }),
    );
    assert.equal(late.status, 202, JSON.stringify(late.body));
    assert.deepEqual(await state(sessionId), { w: 5, wake: true, marked: 2 }, 'both marked pending below the watermark');
    const pass = await processSessions(t.pool, [sessionId], 500, {});
    assert.deepEqual([pass[0]!.processed, pass[0]!.signals, pass[0]!.settled], [2, 1, true]);
    const again = await processSessions(t.pool, [sessionId], 500, {});
    assert.equal(again[0]!.processed, 0, 'processed once');
    const signals = await t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM agent_signals WHERE session_id = ${sessionId} AND source = 'explicit_feedback' AND rating = 'negative'`);
    assert.equal(signals, 1);
  });
});
