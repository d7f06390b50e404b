import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { AgentIngestWriter, StaleAuthorityError } from '../../../src/agents/ingest.js';
import { ConflictError } from '../../../src/errors.js';
import {
  agentContext,
  assistantMessage,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';

/**
 * The ingest writer's group commit: requests that arrive while a transaction runs are applied
 * together in the next one, each with its own answer.
 */
describe('agent ingest: batched transactions (group commit)', function () {
  this.timeout(120_000);
  let t: AgentContext;
  let app: TestAgentApp;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => t?.close());

  const writer = () => new AgentIngestWriter(t.pool, { analysisCreditCost: 1, maxBatch: 64, maxInFlight: 1 });
  const sessions = (prefix: string) =>
    t.pool.any(sql.type(z.object({ external_session_id: z.string(), event_count: z.number(), events: z.number() }))`
    SELECT s.external_session_id, s.event_count, (SELECT count(*)::int FROM agent_events e WHERE e.session_id = s.id) AS events
    FROM agent_sessions s WHERE s.external_session_id LIKE ${`${prefix}%`} ORDER BY s.external_session_id`);

  it('thirty requests for thirty sessions at once share a few transactions; each gets its own answer and its rows', async () => {
    const w = writer();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        w.ingest(
          app.authority,
          sessionRequest(app, [userMessage(1, `q ${i}`), assistantMessage(2, `a ${i}`)], {
            externalSessionId: `many-${String(i).padStart(2, '0')}`,
          }),
        ),
      ),
    );
    assert.equal(w.stats.requests, 30);
    assert.ok(w.stats.transactions <= 5, `30 requests in ${w.stats.transactions} transactions`);
    assert.equal(new Set(results.map((r) => r.sessionId)).size, 30);
    assert.ok(results.every((r) => r.acceptedEventCount === 2 && r.highestSequence === 2 && r.processingStatus === 'pending'));
    const stored = await sessions('many-');
    assert.equal(stored.length, 30);
    assert.ok(stored.every((s) => s.event_count === 2 && s.events === 2));
  });

  it('a request refused in a batch (409) stores nothing, a new session included; the others in its batch are applied', async () => {
    await t.ingest(app, sessionRequest(app, [userMessage(1, 'first')], { externalSessionId: 'mixed-taken' }));
    const w = writer();
    const outcomes = await Promise.allSettled([
      w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'ok')], { externalSessionId: 'mixed-a' })),
      // The same sequence with another event: 409 sequence_occupied.
      w.ingest(
        app.authority,
        sessionRequest(app, [userMessage(1, 'other', { externalEventId: 'other' })], { externalSessionId: 'mixed-taken' }),
      ),
      // A new session whose own request conflicts with itself (two events on one sequence): 409, and the session is not kept.
      w.ingest(
        app.authority,
        sessionRequest(app, [userMessage(1, 'x', { externalEventId: 'x1' }), userMessage(1, 'y', { externalEventId: 'y1' })], {
          externalSessionId: 'mixed-new-refused',
        }),
      ),
      w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'ok')], { externalSessionId: 'mixed-b' })),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    for (const o of [outcomes[1], outcomes[2]]) {
      assert.ok(
        o?.status === 'rejected' && o.reason instanceof ConflictError && o.reason.errorCode === 'sequence_occupied',
        String(o?.status === 'rejected' && o.reason),
      );
    }
    assert.ok(w.stats.transactions < 4, `4 requests in ${w.stats.transactions} transactions`);
    assert.deepEqual(await sessions('mixed-'), [
      { external_session_id: 'mixed-a', event_count: 1, events: 1 },
      { external_session_id: 'mixed-b', event_count: 1, events: 1 },
      { external_session_id: 'mixed-taken', event_count: 1, events: 1 },
    ]);
  });

  it('a request prepared from an outdated lookup in a batch stores nothing and is told so; the others are applied', async () => {
    const w = writer();
    const outdated = { ...app.authority, stamp: 'before-a-change' };
    const outcomes = await Promise.allSettled([
      w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'warm')], { externalSessionId: 'stale-0' })),
      w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'ok')], { externalSessionId: 'stale-1' })),
      w.ingest(outdated, sessionRequest(app, [userMessage(1, 'outdated')], { externalSessionId: 'stale-new' })),
      w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'ok')], { externalSessionId: 'stale-2' })),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.ok(outcomes[2]?.status === 'rejected' && outcomes[2].reason instanceof StaleAuthorityError);
    assert.ok(w.stats.transactions < 4, `4 requests in ${w.stats.transactions} transactions`);
    assert.deepEqual(
      (await sessions('stale-')).map((s) => s.external_session_id),
      ['stale-0', 'stale-1', 'stale-2'],
    );
  });

  it('a batch that fails in the database is applied again one request per transaction: only the failing request fails', async () => {
    const w = writer();
    // An application whose organization does not exist: its session insert violates a foreign key.
    const orphan = { ...app.authority, application: { ...app.app, id: randomUUID(), organization_id: randomUUID() } };
    const outcomes = await Promise.allSettled([
      w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'warm')], { externalSessionId: 'fail-0' })),
      ...['fail-1', 'fail-2'].map((id) => w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'ok')], { externalSessionId: id }))),
      w.ingest(orphan, sessionRequest(app, [userMessage(1, 'orphan')], { externalSessionId: 'fail-orphan' })),
      w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'ok')], { externalSessionId: 'fail-3' })),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(
      (await sessions('fail-')).map((s) => s.external_session_id),
      ['fail-0', 'fail-1', 'fail-2', 'fail-3'],
    );
  });

  it('requests for one session never share a transaction: the second sees the first and deduplicates', async () => {
    const w = writer();
    const body = sessionRequest(app, [userMessage(1, 'same'), assistantMessage(2, 'same')], { externalSessionId: 'twice' });
    const results = await Promise.all([
      w.ingest(app.authority, sessionRequest(app, [userMessage(1, 'warm')], { externalSessionId: 'twice-warm' })),
      w.ingest(app.authority, body),
      w.ingest(app.authority, body),
      w.ingest(app.authority, body),
    ]);
    assert.deepEqual(
      results
        .slice(1)
        .map((r) => r.acceptedEventCount)
        .sort(),
      [0, 0, 2],
    );
    assert.deepEqual(
      results
        .slice(1)
        .map((r) => r.deduplicatedEventCount)
        .sort(),
      [0, 2, 2],
    );
    assert.deepEqual(await sessions('twice'), [
      { external_session_id: 'twice', event_count: 2, events: 2 },
      { external_session_id: 'twice-warm', event_count: 1, events: 1 },
    ]);
  });
});
