import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import {
  agentContext,
  assistantMessage,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';

/** Concurrent requests for one session are serialized by the session's row lock. */
describe('agent ingest: concurrency', function () {
  this.timeout(120_000);
  let t: AgentContext;
  let app: TestAgentApp;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => t?.close());

  it('twenty identical requests at once: all 202, exactly one accepts the events, the rest deduplicate, no duplicate rows', async () => {
    const body = sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a'), userMessage(3, 'thanks')], {
      externalSessionId: 'race-identical',
    });
    const responses = await Promise.all(Array.from({ length: 20 }, () => t.ingest(app, body)));
    assert.deepEqual(
      responses.map((r) => r.status),
      Array(20).fill(202),
      JSON.stringify(responses.find((r) => r.status !== 202)?.body),
    );
    const accepted = responses.filter((r) => r.body.acceptedEventCount === 3);
    assert.equal(accepted.length, 1);
    assert.ok(
      responses.filter((r) => r !== accepted[0]).every((r) => r.body.deduplicatedEventCount === 3 && r.body.acceptedEventCount === 0),
    );
    assert.equal(new Set(responses.map((r) => r.body.sessionId)).size, 1);
    const rows = await t.pool.one(sql.type(z.object({ sessions: z.number(), events: z.number() }))`
      SELECT count(DISTINCT s.id)::int AS sessions, count(e.id)::int AS events
      FROM agent_sessions s JOIN agent_events e ON e.session_id = s.id WHERE s.external_session_id = 'race-identical'`);
    assert.deepEqual(rows, { sessions: 1, events: 3 });
  });

  it('two requests racing for one sequence with different events: one 202, the other 409', async () => {
    for (let round = 0; round < 5; round++) {
      const externalSessionId = `race-sequence-${round}`;
      const [a, b] = await Promise.all([
        t.ingest(app, sessionRequest(app, [userMessage(1, 'first', { externalEventId: 'a' })], { externalSessionId })),
        t.ingest(app, sessionRequest(app, [userMessage(1, 'second', { externalEventId: 'b' })], { externalSessionId })),
      ]);
      assert.deepEqual([a.status, b.status].sort(), [202, 409]);
      const loser = a.status === 409 ? a : b;
      assert.equal(loser.body.errorCode, 'sequence_occupied');
    }
  });
});
