import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { analyseQueued, processPending } from '../../../src/agents/processing.js';
import { billingEvents } from '../../../src/domain/agent-session-state.js';
import { settleAnalysisRound } from '../../../src/db/repositories/agent-sessions.js';
import { listEvents, recordEvents, type DomainEventRow } from '../../../src/db/repositories/domain-events.js';
import { addCredits } from '../../../src/db/repositories/organizations.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import {
  agentContext,
  assistantMessage,
  feedbackEvent,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';

const AGENT_TYPES = [
  'signal.created',
  'agent_session.processed',
  'agent_session.billing_blocked',
  'agent_session.billing_resumed',
] as const;

/**
 * The event seam's agent side (issue 30, point 6): real ingests, passes and analysis rounds on a
 * real PostgreSQL, and exactly the events their committed changes announce.
 */
describe('domain events: agent sessions', function () {
  this.timeout(60_000);
  let t: AgentContext;
  before(async () => {
    t = await agentContext({ credits: 1 });
  });
  after(async () => t?.close());

  const eventsOf = async (org: TestOrg, afterId = 0) =>
    (await listEvents(t.pool, org.organizationId, { afterId, types: AGENT_TYPES })).map(simplify);
  const simplify = (e: DomainEventRow) => ({ type: e.type, subjectId: e.subject_id, payload: e.payload });
  const lastId = async (org: TestOrg) => (await listEvents(t.pool, org.organizationId)).at(-1)?.id ?? 0;
  const signalIds = (sessionId: string, source: string) =>
    t.pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM agent_signals WHERE session_id = ${sessionId} AND source = ${source} ORDER BY id`);
  const analysis = { extractor: new LocalSignalExtractor(), creditCost: 1, limit: 20, concurrency: 2 };
  const snapshot = { processedThroughSequence: null, highestSequence: null, terminal: false };

  it('a pass: one signal.created per explicit signal it creates, one agent_session.processed; a retry adds none', async () => {
    const app = await t.newApp();
    const res = await t.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'the export is broken'), assistantMessage(2, 'sorry'), feedbackEvent(3, 'e2', 'negative')], {
        externalSessionId: 'pass',
      }),
    );
    assert.equal(res.status, 202);
    const sessionId = res.body.sessionId as string;
    const since = await lastId(t.org);
    await processPending(t.pool, sessionId, snapshot, 10);
    const [explicit] = await signalIds(sessionId, 'explicit_feedback');
    const base = { sessionId, applicationId: app.app.id };
    assert.deepEqual(await eventsOf(t.org, since), [
      { type: 'signal.created', subjectId: explicit, payload: { ...base, signalId: explicit, source: 'explicit_feedback' } },
      { type: 'agent_session.processed', subjectId: sessionId, payload: { ...base, processedThrough: 3, status: 'open' } },
    ]);

    // A retried pass processes nothing more and announces nothing.
    const after = await lastId(t.org);
    assert.equal((await processPending(t.pool, sessionId, snapshot, 10)).processed, 0);
    assert.deepEqual(await eventsOf(t.org, after), []);

    // A revised rating updates the signal: processed again, no signal created.
    await t.ingest(
      app,
      sessionRequest(app, [feedbackEvent(3, 'e2', 'positive', { revision: 2 })], { externalSessionId: 'pass', status: 'ended' }),
    );
    const revised = await lastId(t.org);
    await processPending(t.pool, sessionId, snapshot, 10);
    assert.deepEqual(await eventsOf(t.org, revised), [
      { type: 'agent_session.processed', subjectId: sessionId, payload: { ...base, processedThrough: 3, status: 'ended' } },
    ]);
  });

  it('analysis rounds: signal.created per qualitative signal, billing_blocked when the balance runs out, billing_resumed after a top-up', async () => {
    const org = await createTestOrg(t.pool, { credits: 1 });
    const app = await t.newApp(undefined, org);
    const turns = [1, 2, 3].flatMap((i) => [
      userMessage(2 * i - 1, `question ${i}: the export is broken again`),
      assistantMessage(2 * i, `a${i}`),
    ]);
    const res = await t.ingest(app, sessionRequest(app, turns, { externalSessionId: 'rounds' }));
    const sessionId = res.body.sessionId as string;
    const base = { sessionId, applicationId: app.app.id };
    await processPending(t.pool, sessionId, snapshot, 10);
    const processed = await lastId(org);

    // One credit for three analyses: one is paid, the round is held for credits.
    const first = await analyseQueued(t.pool, sessionId, analysis);
    assert.deepEqual([first.analysed, first.billingBlocked, first.processingStatus], [1, true, 'billing_blocked']);
    const paid = await signalIds(sessionId, 'qualitative_inference');
    assert.ok(paid.length > 0, 'the local extractor finds the reported issue');
    const signalEvents = (ids: readonly string[]) =>
      ids.map((id) => ({
        type: 'signal.created',
        subjectId: id,
        payload: { ...base, signalId: id, source: 'qualitative_inference' },
      }));
    const sorted = (events: Awaited<ReturnType<typeof eventsOf>>) =>
      [...events].sort((a, b) => `${a.type}${a.subjectId}`.localeCompare(`${b.type}${b.subjectId}`));
    assert.deepEqual(
      sorted(await eventsOf(org, processed)),
      sorted([...signalEvents(paid), { type: 'agent_session.billing_blocked', subjectId: sessionId, payload: base }]),
    );

    // Still blocked: a round that pays nothing announces nothing new.
    const blocked = await lastId(org);
    assert.equal((await analyseQueued(t.pool, sessionId, analysis)).billingBlocked, true);
    assert.deepEqual(await eventsOf(org, blocked), []);

    // A top-up: the next round runs the rest and resumes the session.
    await t.pool.transaction((tx) => addCredits(tx, org.organizationId, 10, 'test'));
    const second = await analyseQueued(t.pool, sessionId, analysis);
    assert.deepEqual([second.analysed, second.billingBlocked, second.processingStatus], [2, false, 'pending']);
    const all = await signalIds(sessionId, 'qualitative_inference');
    assert.deepEqual(
      sorted(await eventsOf(org, blocked)),
      sorted([
        ...signalEvents(all.filter((id) => !paid.includes(id))),
        { type: 'agent_session.billing_resumed', subjectId: sessionId, payload: base },
      ]),
    );
  });

  it('an ingest that finds the balance short blocks the session, and one after a top-up resumes it', async () => {
    const org = await createTestOrg(t.pool, { credits: 0 });
    const app: TestAgentApp = await t.newApp(undefined, org);
    const first = await t.ingest(app, sessionRequest(app, [userMessage(1, 'hello')], { externalSessionId: 'ingest' }));
    assert.equal(first.body.processingStatus, 'billing_blocked');
    const sessionId = first.body.sessionId as string;
    const base = { sessionId, applicationId: app.app.id };
    assert.deepEqual(await eventsOf(org), [{ type: 'agent_session.billing_blocked', subjectId: sessionId, payload: base }]);

    const blocked = await lastId(org);
    await t.ingest(app, sessionRequest(app, [assistantMessage(2, 'hi')], { externalSessionId: 'ingest' }));
    assert.deepEqual(await eventsOf(org, blocked), [], 'still blocked: no second event');

    await t.pool.transaction((tx) => addCredits(tx, org.organizationId, 5, 'test'));
    const third = await t.ingest(app, sessionRequest(app, [userMessage(3, 'thanks')], { externalSessionId: 'ingest' }));
    assert.equal(third.body.processingStatus, 'pending');
    assert.deepEqual(await eventsOf(org, blocked), [{ type: 'agent_session.billing_resumed', subjectId: sessionId, payload: base }]);
  });

  it('a change that rolls back leaves no event', async () => {
    const org = await createTestOrg(t.pool, { credits: 1 });
    const app = await t.newApp(undefined, org);
    const res = await t.ingest(app, sessionRequest(app, [userMessage(1, 'hello')], { externalSessionId: 'rollback' }));
    const sessionId = res.body.sessionId as string;
    const failure = new Error('the rest of the transaction failed');
    await assert.rejects(
      t.pool.transaction(async (tx) => {
        const verdict = await settleAnalysisRound(tx, [{ sessionId, blocked: true, endHold: false }]);
        await recordEvents(tx, billingEvents(verdict.changes));
        assert.equal((await listEvents(tx, org.organizationId)).length, 1, 'recorded inside the transaction');
        throw failure;
      }),
      failure,
    );
    assert.deepEqual(await eventsOf(org), []);
    const status = await t.pool.oneFirst(sql.type(z.object({ processing_status: z.string() }))`
      SELECT processing_status FROM agent_sessions WHERE id = ${sessionId}`);
    assert.equal(status, 'pending');
  });
});
