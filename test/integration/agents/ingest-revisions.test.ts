import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import {
  agentContext,
  assistantMessage,
  countRows,
  feedbackEvent,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import type { AgentEvent } from '../../../src/domain/agent-ingest.js';

/** Spec "Event revisions", row by row, and the session status moves, against the real stack. */
describe('agent ingest: deduplication, revisions and session status', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;
  let n = 0;
  let sessionId = '';
  let events: AgentEvent[] = [];

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => t?.close());

  const send = (evs: AgentEvent[], extra: Record<string, unknown> = {}) =>
    t.ingest(app, sessionRequest(app, evs, { externalSessionId: `r-${n}`, ...extra }));
  const counts = (body: Record<string, unknown>) => [body.acceptedEventCount, body.deduplicatedEventCount, body.revisedEventCount];
  const stored = (externalEventId: string) =>
    t.pool.one(sql.type(z.object({ revision: z.number(), payload: z.any(), sequence: z.number(), occurred_at: z.string() }))`
    SELECT e.revision, e.payload, e.sequence, e.occurred_at FROM agent_events e JOIN agent_sessions s ON s.id = e.session_id
    WHERE s.external_session_id = ${`r-${n}`} AND e.external_event_id = ${externalEventId}`);

  beforeEach(async () => {
    n++;
    events = [userMessage(1, 'How do I export?'), assistantMessage(2, 'Use the Export button.')];
    const res = await send(events);
    assert.equal(res.status, 202);
    assert.deepEqual(counts(res.body), [2, 0, 0]);
    sessionId = res.body.sessionId;
  });

  it('retry with the same sanitized content: deduplicated, same sessionId, nothing stored twice', async () => {
    const before = await countRows(t.pool, 'agent_events');
    const res = await send(events);
    assert.equal(res.status, 202);
    assert.deepEqual(counts(res.body), [0, 2, 0]);
    assert.equal(res.body.sessionId, sessionId);
    assert.equal(await countRows(t.pool, 'agent_events'), before);
  });

  it('same content with another revision or another occurredAt: still deduplicated; the first timestamp stays', async () => {
    const first = await stored('e2');
    const res = await send([{ ...events[1]!, revision: 5, occurredAt: '2030-01-01T00:00:00Z' }]);
    assert.deepEqual(counts(res.body), [0, 1, 0]);
    const after = await stored('e2');
    assert.equal(after.revision, 1);
    assert.equal(after.occurred_at, first.occurred_at);
  });

  it('changed content with a higher revision: revised; the prior content is kept in the revision history', async () => {
    const res = await send([{ ...events[1]!, revision: 2, content: 'Use File > Export.' }]);
    assert.equal(res.status, 202);
    assert.deepEqual(counts(res.body), [0, 0, 1]);
    const row = await stored('e2');
    assert.equal(row.revision, 2);
    assert.equal(row.payload.content, 'Use File > Export.');
    const history = await t.pool.any(sql.type(z.object({ revision: z.number(), payload: z.any() }))`
      SELECT r.revision, r.payload FROM agent_event_revisions r JOIN agent_events e ON e.id = r.event_id
      JOIN agent_sessions s ON s.id = e.session_id WHERE s.id = ${sessionId}`);
    assert.deepEqual(
      history.map((h) => [h.revision, h.payload.content]),
      [[1, 'Use the Export button.']],
    );
  });

  it('changed content without a higher revision: 409 event_changed_without_revision, nothing changed', async () => {
    assert.deepEqual(counts((await send([{ ...events[1]!, revision: 2, content: 'Second' }])).body), [0, 0, 1]);
    for (const revision of [2, 1]) {
      const res = await send([{ ...events[1]!, revision, content: 'Different' }]);
      assert.equal(res.status, 409);
      assert.equal(res.body.errorCode, 'event_changed_without_revision');
      assert.equal(res.body.conflicts[0].path, 'body.events.0');
    }
    assert.equal((await stored('e2')).payload.content, 'Second');
  });

  it('a revision that moves the event to another sequence: 409 event_sequence_changed', async () => {
    const res = await send([{ ...events[1]!, sequence: 7, revision: 2, content: 'Moved' }]);
    assert.equal(res.status, 409);
    assert.equal(res.body.errorCode, 'event_sequence_changed');
    assert.equal((await stored('e2')).sequence, 2);
  });

  it('a revision that changes the type: 409 event_type_changed', async () => {
    const res = await send([{ ...events[1]!, type: 'user_message', revision: 2 }]);
    assert.equal(res.status, 409);
    assert.equal(res.body.errorCode, 'event_type_changed');
  });

  it('a new event on an occupied sequence: 409 sequence_occupied', async () => {
    const res = await send([userMessage(2, 'Another', { externalEventId: 'other' })]);
    assert.equal(res.status, 409);
    assert.equal(res.body.errorCode, 'sequence_occupied');
    assert.match(res.body.message, /sequence 2/);
  });

  it('a finalized event re-sent as partial: 409 final_event_reverted; partial to final is a revision', async () => {
    const reverted = await send([{ ...events[1]!, revision: 2, final: false }]);
    assert.equal(reverted.status, 409);
    assert.equal(reverted.body.errorCode, 'final_event_reverted');
    const partial = await send([assistantMessage(3, 'Draft', { final: false })]);
    assert.deepEqual(counts(partial.body), [1, 0, 0]);
    const finalized = await send([assistantMessage(3, 'Draft, completed', { revision: 2 })]);
    assert.deepEqual(counts(finalized.body), [0, 0, 1]);
  });

  it('one 409 in a request stores none of its other events', async () => {
    const before = await countRows(t.pool, 'agent_events');
    const res = await send([userMessage(3, 'fine'), { ...events[1]!, content: 'conflict' }]);
    assert.equal(res.status, 409);
    assert.equal(await countRows(t.pool, 'agent_events'), before);
  });

  it('events out of array order are ordered by sequence; gaps are allowed and sequences are kept', async () => {
    const res = await send([userMessage(9, 'later'), assistantMessage(5, 'a'), feedbackEvent(6, 'e5')]);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(counts(res.body), [3, 0, 0]);
    const seqs = await t.pool.anyFirst(sql.type(z.object({ sequence: z.number() }))`
      SELECT sequence FROM agent_events WHERE session_id = ${sessionId} ORDER BY sequence`);
    assert.deepEqual(seqs, [1, 2, 5, 6, 9]);
  });

  it('status: open to ended with events; ended accepts revisions and feedback, refuses new messages, never reopens', async () => {
    const ended = await send([userMessage(3, 'thanks')], { status: 'ended' });
    assert.equal(ended.status, 202);
    const status = () =>
      t.pool.oneFirst(sql.type(z.object({ status: z.string() }))`SELECT status FROM agent_sessions WHERE id = ${sessionId}`);
    assert.equal(await status(), 'ended');
    const revision = await send([{ ...events[1]!, revision: 2, content: 'Corrected' }], { status: 'open' });
    assert.deepEqual(counts(revision.body), [0, 0, 1]);
    const feedback = await send([feedbackEvent(4, 'e2', 'positive')]);
    assert.deepEqual(counts(feedback.body), [1, 0, 0]);
    assert.equal(await status(), 'ended', 'status open does not reopen');
    const message = await send([userMessage(5, 'one more')]);
    assert.equal(message.status, 409);
    assert.equal(message.body.errorCode, 'session_closed');
    const abandon = await send([feedbackEvent(6, 'e2', 'negative')], { status: 'abandoned' });
    assert.equal(abandon.status, 202);
    assert.equal(await status(), 'ended', 'a terminal status is kept');
  });

  it('status: open to abandoned', async () => {
    const res = await send([userMessage(3, 'bye')], { status: 'abandoned' });
    assert.equal(res.status, 202);
    const row = await t.pool.one(
      sql.type(
        z.object({ status: z.string(), ended_at: z.string().nullable() }),
      )`SELECT status, ended_at FROM agent_sessions WHERE id = ${sessionId}`,
    );
    assert.equal(row.status, 'abandoned');
    assert.ok(row.ended_at);
  });

  it('occurredAt with an offset PostgreSQL cannot hold (past ±15:59) is stored as its UTC instant', async () => {
    const res = await send([userMessage(3, 'late', { occurredAt: '2026-11-01T10:00:00+23:00' })]);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal((await stored('e3')).occurred_at, '2026-10-31T11:00:00.000Z');
  });

  it('the same externalSessionId under another application is another session', async () => {
    const other = await t.newApp();
    const res = await t.ingest(other, sessionRequest(other, events, { externalSessionId: `r-${n}` }));
    assert.equal(res.status, 202);
    assert.notEqual(res.body.sessionId, sessionId);
    assert.deepEqual(counts(res.body), [2, 0, 0]);
  });
});
