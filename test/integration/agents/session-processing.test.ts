import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { changeApplication } from '../../../src/agents/applications.js';
import { agentSessionWorkflowId } from '../../../src/temporal/ids.js';
import { PROCESSED_THROUGH, PROCESSING_STATUS, STATUS } from '../../../src/temporal/search-attributes.js';
import { sessionQuery } from '../../../workflows/agent-session/contract.js';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { eventually } from '../../../harness/wait.js';

/** The session workflow on a real Temporal and PostgreSQL: order, gaps, finalization, metering, signals. */
describe('agent session workflow: processing in sequence order', function () {
  this.timeout(120_000);
  let ctx: ProcessingContext;
  let app: TestAgentApp;
  let n = 0;

  before(async () => {
    ctx = await processingContext({ credits: 1000 });
    app = await ctx.newApp();
  });
  after(async () => ctx?.close());

  const send = async (externalSessionId: string, events: ReturnType<typeof userMessage>[], extra = {}) => {
    const res = await ctx.ingest(app, sessionRequest(app, events, { externalSessionId, ...extra }));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.sessionId as string;
  };
  const handle = (sessionId: string) => ctx.api.temporal.client.workflow.getHandle(agentSessionWorkflowId(sessionId));
  const signals = (sessionId: string) =>
    ctx.pool.any(
      sql.type(
        z.object({
          source: z.string(),
          kind: z.string().nullable(),
          rating: z.string().nullable(),
          event_external_id: z.string(),
          labels: z.array(z.string()),
          comment: z.string().nullable(),
          event_revision: z.number().nullable(),
        }),
      )`SELECT source, kind, rating, event_external_id, labels, comment, event_revision FROM agent_signals WHERE session_id = ${sessionId} ORDER BY source, kind`,
    );

  it('advances through contiguous sequences, waits at a gap, and resumes when it is filled', async () => {
    const id = `gap-${++n}`;
    const sessionId = await send(id, [userMessage(1, 'hello'), assistantMessage(2, 'hi')]);
    assert.equal((await ctx.processedThrough(sessionId, 2)).processed_through_sequence, 2);
    await send(id, [userMessage(4, 'after the gap'), assistantMessage(5, 'answer')]);
    const waiting = await eventually(
      () => handle(sessionId).query(sessionQuery),
      (v) => v.highestSequence === 5 && v.waitingForSequence === 3,
    );
    assert.equal(waiting.waitingForSequence, 3);
    assert.equal(waiting.processedThroughSequence, 2);
    assert.equal((await ctx.session(sessionId)).processed_through_sequence, 2, 'waits at the gap');
    assert.equal((await ctx.outcome(sessionId)).units, 1, 'the response after the gap is not processed yet');
    await send(id, [assistantMessage(3, 'the missing one')]);
    await ctx.processedThrough(sessionId, 5);
    assert.equal((await ctx.outcome(sessionId)).units, 3);
    const d = await eventually(
      () => handle(sessionId).describe(),
      (x) => x.typedSearchAttributes.get(PROCESSED_THROUGH) === 5,
    );
    assert.equal(d.typedSearchAttributes.get(PROCESSED_THROUGH), 5);
    assert.equal(d.typedSearchAttributes.get(PROCESSING_STATUS), 'pending');
    assert.equal(d.typedSearchAttributes.get(STATUS), 'open');
    assert.equal(d.status.name, 'RUNNING', 'an open session waits for more');
  });

  it('goes through permanent gaps when the session ends, then finishes its run', async () => {
    const id = `end-${++n}`;
    const sessionId = await send(id, [userMessage(1, 'q'), assistantMessage(3, 'a')]);
    await eventually(
      () => handle(sessionId).query(sessionQuery),
      (v) => v.waitingForSequence === 2,
    );
    assert.equal((await ctx.session(sessionId)).processed_through_sequence, 1);
    await send(id, [assistantMessage(6, 'bye')], { status: 'ended' });
    const s = await ctx.processedThrough(sessionId, 6);
    assert.equal(s.status, 'ended');
    assert.equal((await ctx.outcome(sessionId)).units, 2);
    assert.equal(await handle(sessionId).result(), 'finished');
    const d = await handle(sessionId).describe();
    assert.equal(d.typedSearchAttributes.get(STATUS), 'ended');
    assert.equal(d.typedSearchAttributes.get(PROCESSED_THROUGH), 6);
  });

  it('abandoned also goes through gaps; a session may start at sequence 0', async () => {
    const id = `abandon-${++n}`;
    const sessionId = await send(id, [userMessage(0, 'zero'), assistantMessage(1, 'one'), assistantMessage(5, 'five')], {
      status: 'abandoned',
    });
    await ctx.processedThrough(sessionId, 5);
    assert.equal((await ctx.outcome(sessionId)).units, 2);
  });

  it('meters one unit per finalized response: none for a partial, one when it turns final, none for a retry or revision', async () => {
    const id = `meter-${++n}`;
    const partial = assistantMessage(2, 'draft', { final: false });
    const sessionId = await send(id, [userMessage(1, 'why is the export broken?'), partial]);
    await ctx.processedThrough(sessionId, 2);
    assert.deepEqual(await ctx.outcome(sessionId), { units: 0, explicit: 0, inferred: 0, queued: 0, done: 0 });
    await send(id, [assistantMessage(2, 'final answer', { revision: 2 })]);
    await eventually(
      () => ctx.outcome(sessionId),
      (o) => o.done === 1,
    );
    const afterFinal = await ctx.outcome(sessionId);
    assert.equal(afterFinal.units, 1);
    assert.ok(afterFinal.inferred > 0, 'the finalized response was analysed');
    // A retry of the same content is deduplicated at ingest; nothing more is counted.
    await send(id, [assistantMessage(2, 'final answer', { revision: 2 })]);
    // A revision of the finalized response is re-analysed (signals replaced) but not metered again.
    await send(id, [assistantMessage(2, 'final answer, corrected', { revision: 3 })]);
    await eventually(
      () => ctx.outcome(sessionId),
      (o) => o.done === 2,
    );
    const after = await ctx.outcome(sessionId);
    assert.equal(after.units, 1);
    const inferred = (await signals(sessionId)).filter((g) => g.source === 'qualitative_inference');
    assert.ok(inferred.length > 0);
    assert.ok(
      inferred.every((g) => g.event_revision === 3),
      "only the latest revision's signals remain",
    );
    const usage = await ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM usage_records WHERE session_id = ${sessionId} AND unit = 'agent_response_processed'`);
    assert.equal(usage, 1);
  });

  it('turns rated feedback into explicit signals (labels and comment carried); a revised rating updates it', async () => {
    const id = `feedback-${++n}`;
    const sessionId = await send(id, [
      userMessage(1, 'q'),
      assistantMessage(2, 'a'),
      feedbackEvent(3, 'e2', 'negative', {
        feedback: { targetEventExternalId: 'e2', rating: 'negative', labels: ['wrong'], comment: 'not right' },
      }),
      feedbackEvent(4, 'e2', 'positive', { feedback: { targetEventExternalId: 'e2', comment: 'only a comment' } }),
    ]);
    await ctx.processedThrough(sessionId, 4);
    const explicit = (await signals(sessionId)).filter((g) => g.source === 'explicit_feedback');
    assert.deepEqual(
      explicit.map((g) => [g.kind, g.rating, g.event_external_id, g.labels, g.comment]),
      [['feedback', 'negative', 'e2', ['wrong'], 'not right']],
    );
    await send(id, [feedbackEvent(3, 'e2', 'positive', { revision: 2, feedback: { targetEventExternalId: 'e2', rating: 'positive' } })]);
    const revised = await eventually(
      async () => (await signals(sessionId)).filter((g) => g.source === 'explicit_feedback'),
      (r) => r[0]?.rating === 'positive',
    );
    assert.deepEqual(
      revised.map((g) => [g.rating, g.labels, g.comment, g.event_revision]),
      [['positive', [], null, 2]],
    );
  });

  it('content capture off: content, signals and analyses are deleted and no analysis is queued again', async () => {
    const own = await ctx.newApp();
    const req = (events: ReturnType<typeof userMessage>[]) => sessionRequest(own, events, { externalSessionId: 'capture' });
    const first = await ctx.ingest(
      own,
      req([userMessage(1, 'great, thanks!'), assistantMessage(2, 'glad to help'), feedbackEvent(3, 'e2')]),
    );
    const sessionId = first.body.sessionId as string;
    await ctx.processedThrough(sessionId, 3);
    const before = await ctx.outcome(sessionId);
    assert.ok(before.explicit === 1 && before.inferred > 0);
    await changeApplication(ctx.pool, ctx.org.organizationId, own.app.id, { contentCapture: false });
    const off = await ctx.ingest(own, req([userMessage(4, 'more'), assistantMessage(5, 'more answer')]));
    assert.equal(off.body.processingStatus, 'capture_disabled');
    await ctx.processedThrough(sessionId, 5);
    const after = await ctx.outcome(sessionId);
    assert.deepEqual({ ...after, units: 0 }, { units: 0, explicit: 0, inferred: 0, queued: 0, done: 0 });
    assert.equal(after.units, 2, 'counts are kept: both responses were metered');
    assert.equal((await ctx.session(sessionId)).processing_status, 'capture_disabled');
  });
});
