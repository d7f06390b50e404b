import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import {
  agentContext,
  assistantMessage,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';

/**
 * What the console shows of sessions and signals (issue 51): a session's answer totals (tokens and
 * latency its answers report, one aggregate over all its events), and the lists' created range
 * (`createdFrom` inclusive, `createdTo` exclusive) in offset and keyset mode.
 */
describe('agent sessions and signals: answer totals and created ranges', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => t?.close());

  const get = (path: string) => t.api.request(path, { headers: { 'X-Service-Api-Key': t.org.apiKey } });
  const names = (body: { sessions: { externalSessionId: string }[] }) => body.sessions.map((s) => s.externalSessionId).sort();

  describe('answer totals of a session', () => {
    it('sums the tokens its answers report and takes the median latency, over all its events (not the page)', async () => {
      const sent = await t.ingest(
        app,
        sessionRequest(
          app,
          [
            userMessage(1, 'q1'),
            assistantMessage(2, 'a1', {
              model: { provider: 'openai', name: 'gpt-4o' },
              usage: { inputTokens: 100, outputTokens: 20, latencyMs: 500 },
            }),
            userMessage(3, 'q2'),
            assistantMessage(4, 'a2', { usage: { inputTokens: 50, outputTokens: 10, latencyMs: 1500 } }),
            assistantMessage(5, 'a3 without usage'),
            assistantMessage(6, 'a4', { usage: { latencyMs: 1000 } }),
          ],
          { externalSessionId: 'totals-1' },
        ),
      );
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      const res = await get(`/v3/rest/agent-conversations/sessions/${sent.body.sessionId}?eventLimit=1`);
      assert.equal(res.status, 200);
      assert.equal(res.body.events.length, 1, 'one event on the page');
      assert.deepEqual(res.body.answerTotals, {
        answers: 4,
        answersWithUsage: 3,
        inputTokens: 150,
        outputTokens: 30,
        medianLatencyMs: 1000,
      });
    });

    it('a session without answers: zeros and no latency; content not stored reports no usage', async () => {
      const quiet = await t.ingest(app, sessionRequest(app, [userMessage(1, 'hello?')], { externalSessionId: 'totals-none' }));
      const none = await get(`/v3/rest/agent-conversations/sessions/${quiet.body.sessionId}`);
      assert.deepEqual(none.body.answerTotals, { answers: 0, answersWithUsage: 0, inputTokens: 0, outputTokens: 0, medianLatencyMs: null });

      const noCapture = await t.newApp({ contentCapture: false });
      const blind = await t.ingest(
        noCapture,
        sessionRequest(noCapture, [assistantMessage(1, 'a', { usage: { inputTokens: 7, outputTokens: 3, latencyMs: 90 } })], {
          externalSessionId: 'totals-no-capture',
        }),
      );
      const res = await get(`/v3/rest/agent-conversations/sessions/${blind.body.sessionId}`);
      assert.deepEqual(res.body.answerTotals, { answers: 1, answersWithUsage: 0, inputTokens: 0, outputTokens: 0, medianLatencyMs: null });
    });

    it('the median of an even count is the mean of the middle two, rounded', async () => {
      const sent = await t.ingest(
        app,
        sessionRequest(
          app,
          [
            assistantMessage(1, 'a', { usage: { latencyMs: 100 } }),
            assistantMessage(2, 'b', { usage: { latencyMs: 201 } }),
            assistantMessage(3, 'c', { usage: { latencyMs: 400 } }),
            assistantMessage(4, 'd', { usage: { latencyMs: 9000 } }),
          ],
          { externalSessionId: 'totals-even' },
        ),
      );
      const res = await get(`/v3/rest/agent-conversations/sessions/${sent.body.sessionId}`);
      assert.equal(res.body.answerTotals.medianLatencyMs, 301);
    });

    it('counts sent beyond the safe integers stop at the largest one, not at a 500', async () => {
      const huge = 1e20;
      const sent = await t.ingest(
        app,
        sessionRequest(app, [assistantMessage(1, 'a', { usage: { inputTokens: huge, outputTokens: 1, latencyMs: huge } })], {
          externalSessionId: 'totals-huge',
        }),
      );
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      const res = await get(`/v3/rest/agent-conversations/sessions/${sent.body.sessionId}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.answerTotals, {
        answers: 1,
        answersWithUsage: 1,
        inputTokens: Number.MAX_SAFE_INTEGER,
        outputTokens: 1,
        medianLatencyMs: Number.MAX_SAFE_INTEGER,
      });
    });
  });

  describe('created ranges', () => {
    let ranged: TestAgentApp;
    const sessionIds: string[] = [];
    const DAYS = ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z'];

    before(async () => {
      ranged = await t.newApp();
      for (const [i, day] of DAYS.entries()) {
        const res = await t.ingest(ranged, sessionRequest(ranged, [userMessage(1, 'x')], { externalSessionId: `day-${i + 1}` }));
        assert.equal(res.status, 202, JSON.stringify(res.body));
        sessionIds.push(res.body.sessionId);
        await t.pool.query(sql.unsafe`UPDATE agent_sessions SET created_at = ${day}::timestamptz WHERE id = ${res.body.sessionId}`);
        await t.pool.query(sql.unsafe`
          INSERT INTO agent_signals (organization_id, session_id, event_external_id, source, kind, rating, created_at)
          VALUES (${t.org.organizationId}, ${res.body.sessionId}, 'e1', 'explicit_feedback', 'feedback', 'positive', ${day}::timestamptz)`);
      }
    });

    const sessions = (query: string) => get(`/v3/rest/agent-conversations/sessions?applicationId=${ranged.app.id}&${query}`);
    const signals = (query: string) => get(`/v3/rest/signals?applicationId=${ranged.app.id}&${query}`);
    const signalSessions = (body: { signals: { sessionId: string }[] }) =>
      body.signals.map((g) => `day-${sessionIds.indexOf(g.sessionId) + 1}`).sort();

    it('sessions: createdFrom inclusive, createdTo exclusive, in offset mode', async () => {
      const res = await sessions('createdFrom=2026-01-02T00:00:00Z&createdTo=2026-01-03T00:00:00Z');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(names(res.body), ['day-2']);
      assert.deepEqual(names((await sessions('createdFrom=2026-01-02T00:00:00Z')).body), ['day-2', 'day-3']);
      assert.deepEqual(names((await sessions('createdTo=2026-01-02T00:00:00Z')).body), ['day-1']);
      // Any offset: 2026-01-02T01:00+02:00 is 2026-01-01T23:00Z.
      assert.deepEqual(names((await sessions(`createdFrom=${encodeURIComponent('2026-01-02T01:00:00+02:00')}`)).body), ['day-2', 'day-3']);
    });

    it('sessions: the same range in keyset mode (incremental sync)', async () => {
      const res = await sessions('updatedSince=1970-01-01T00:00:00Z&createdFrom=2026-01-02T00:00:00Z&createdTo=2026-01-03T00:00:00Z');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(names(res.body), ['day-2']);
      assert.equal(typeof res.body.nextCursor, 'string');
    });

    it('signals: createdFrom inclusive, createdTo exclusive, in offset and keyset mode', async () => {
      const offset = await signals('createdFrom=2026-01-02T00:00:00Z&createdTo=2026-01-03T00:00:00Z');
      assert.equal(offset.status, 200, JSON.stringify(offset.body));
      assert.deepEqual(signalSessions(offset.body), ['day-2']);
      assert.deepEqual(signalSessions((await signals('createdFrom=2026-01-02T00:00:00Z')).body), ['day-2', 'day-3']);
      assert.deepEqual(signalSessions((await signals('createdTo=2026-01-02T00:00:00Z')).body), ['day-1']);
      const keyset = await signals('updatedSince=1970-01-01T00:00:00Z&createdFrom=2026-01-02T00:00:00Z&createdTo=2026-01-03T00:00:00Z');
      assert.equal(keyset.status, 200, JSON.stringify(keyset.body));
      assert.deepEqual(signalSessions(keyset.body), ['day-2']);
    });

    it('an empty range is a 400 validation_failed on both lists and in both modes; a bad instant too', async () => {
      const empty = {
        message: 'The time range is empty: createdTo must be later than createdFrom.',
        errorCode: 'validation_failed',
        errors: [{ path: 'query.createdTo', message: 'must be after createdFrom' }],
      };
      for (const res of [
        await sessions('createdFrom=2026-01-02T00:00:00Z&createdTo=2026-01-02T00:00:00Z'),
        await sessions('createdFrom=2026-01-03T00:00:00Z&createdTo=2026-01-02T00:00:00Z'),
        await sessions('updatedSince=1970-01-01T00:00:00Z&createdFrom=2026-01-03T00:00:00Z&createdTo=2026-01-02T00:00:00Z'),
        await signals('createdFrom=2026-01-03T00:00:00Z&createdTo=2026-01-02T00:00:00Z'),
        await signals('updatedSince=1970-01-01T00:00:00Z&createdFrom=2026-01-02T00:00:00Z&createdTo=2026-01-02T00:00:00Z'),
      ]) {
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, empty);
      }
      // The same instant written in two offsets is still empty.
      const offsets = await sessions(
        `createdFrom=${encodeURIComponent('2026-01-02T02:00:00+02:00')}&createdTo=${encodeURIComponent('2026-01-02T00:00:00Z')}`,
      );
      assert.deepEqual([offsets.status, offsets.body], [400, empty]);
      const bad = await signals('createdFrom=yesterday');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.errorCode, 'validation_failed');
      assert.equal(bad.body.errors[0].path, 'query.createdFrom');
    });
  });
});
