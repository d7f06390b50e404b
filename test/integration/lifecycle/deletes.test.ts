import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { analyseQueued, processPending } from '../../../src/agents/processing.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import { agentContext, assistantMessage, feedbackEvent, sessionRequest, userMessage, type AgentContext } from '../../../harness/agents.js';
import { createTestKey, createTestOrg, createTestUser } from '../../../harness/fixtures.js';
import { createTestEndpoint } from '../../../harness/webhooks.js';
import { generateWebhookSecret } from '../../../src/webhooks/signing.js';

const count = z.object({ n: z.number() });

/** DELETE over REST (issue 32, point 1): feedback records and sources, agent sessions. */
describe('deletes', function () {
  this.timeout(60_000);
  let t: AgentContext;
  before(async () => {
    t = await agentContext({ credits: 1000 });
  });
  after(async () => t?.close());

  const key = () => ({ 'X-Service-Api-Key': t.org.apiKey });
  const call = (method: string, path: string, headers: Record<string, string> = key(), json?: unknown) =>
    t.api.request(path, { method, headers, json });
  const rows = (table: 'feedback_records' | 'agent_events' | 'agent_signals' | 'agent_participants', column: string, id: string | number) =>
    t.pool.oneFirst(sql.type(count)`SELECT count(*)::int AS n FROM ${sql.identifier([table])} WHERE ${sql.identifier([column])} = ${id}`);

  describe('feedback', () => {
    const record = (externalId: string) => ({
      external_id: externalId,
      display_ts: '2026-11-26T10:00:00Z',
      fields: [{ category: 'content', type: 'string', name: 'text', value: `feedback ${externalId}` }],
    });
    const newSource = async () => {
      const res = await call('POST', '/v3/rest/feedback-sources', key(), { name: 'Desk', type: 'api' });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as number;
    };

    it('deletes a record (204); again, or in another organization, it is 404; its external_id may be used again', async () => {
      const sourceId = await newSource();
      const created = await call('POST', `/v3/rest/feedback-sources/${sourceId}/records`, key(), record('r-1'));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const path = `/v3/rest/feedback-sources/${sourceId}/records/${created.body.id}`;

      const other = await createTestOrg(t.pool);
      const foreign = await call('DELETE', path, { 'X-Service-Api-Key': other.apiKey });
      assert.equal(foreign.status, 404);
      assert.deepEqual(foreign.body, { message: 'Feedback source not found.', errorCode: 'not_found', resource: 'Feedback source' });
      const readOnly = { 'X-Service-Api-Key': (await createTestKey(t.pool, t.org.organizationId, ['feedback:read'])).apiKey };
      const refused = await call('DELETE', path, readOnly);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.errorCode, 'insufficient_scope');

      assert.equal((await call('DELETE', path)).status, 204);
      assert.equal((await call('GET', path)).status, 404);
      const again = await call('DELETE', path);
      assert.equal(again.status, 404);
      assert.deepEqual(again.body, { message: 'Feedback record not found.', errorCode: 'not_found', resource: 'Feedback record' });
      assert.equal(await rows('feedback_records', 'id', created.body.id as number), 0);
      const reused = await call('POST', `/v3/rest/feedback-sources/${sourceId}/records`, key(), record('r-1'));
      assert.equal(reused.status, 201);
    });

    it('deletes a source with its records; again it is 404', async () => {
      const sourceId = await newSource();
      for (const id of ['a', 'b', 'c'])
        assert.equal((await call('POST', `/v3/rest/feedback-sources/${sourceId}/records`, key(), record(id))).status, 201);
      assert.equal(await rows('feedback_records', 'feedback_source_id', sourceId), 3);
      assert.equal((await call('DELETE', `/v3/rest/feedback-sources/${sourceId}`)).status, 204);
      assert.equal(await rows('feedback_records', 'feedback_source_id', sourceId), 0);
      assert.equal((await call('GET', `/v3/rest/feedback-sources/${sourceId}`)).status, 404);
      const again = await call('DELETE', `/v3/rest/feedback-sources/${sourceId}`);
      assert.deepEqual([again.status, again.body.errorCode], [404, 'not_found']);
      assert.equal((await call('DELETE', '/v3/rest/feedback-sources/not-a-number')).status, 404);
    });
  });

  describe('agent sessions', () => {
    const analysis = { extractor: new LocalSignalExtractor(), creditCost: 1, limit: 20, concurrency: 2 };
    const snapshot = { processedThroughSequence: null, highestSequence: null, terminal: false };

    it('deletes a processed session with its events, participants, signals, events and deliveries; usage stays', async () => {
      // A webhook endpoint: the session's events are queued for delivery with their bodies.
      const endpoint = await createTestEndpoint(t.pool, t.org.organizationId, {
        url: 'https://hooks.example.com/x',
        eventTypes: null,
        secret: generateWebhookSecret(),
      });
      const app = await t.newApp();
      const res = await t.ingest(
        app,
        sessionRequest(
          app,
          [
            userMessage(1, 'The export to CSV drops the last column. Can you add a fix?'),
            assistantMessage(2, 'Sorry about that'),
            feedbackEvent(3, 'e2', 'negative'),
          ],
          { externalSessionId: 'to-delete' },
        ),
      );
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const sessionId = res.body.sessionId as string;
      await processPending(t.pool, sessionId, snapshot, 10);
      await analyseQueued(t.pool, sessionId, analysis);
      const signals = await rows('agent_signals', 'session_id', sessionId);
      assert.ok(signals >= 1, 'signals were made');
      const subjectRows = () =>
        t.pool.one(sql.type(z.object({ events: z.number(), deliveries: z.number() }))`
          SELECT
            (SELECT count(*)::int FROM domain_events WHERE subject_id = ${sessionId}
              OR subject_id IN (SELECT id FROM agent_signals WHERE session_id = ${sessionId})) AS events,
            (SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id} AND subject_id = ${sessionId}) AS deliveries`);
      const before = await subjectRows();
      assert.ok(before.events >= 2 && before.deliveries >= 1, JSON.stringify(before));
      const usage = () =>
        t.pool.oneFirst(sql.type(count)`SELECT count(*)::int AS n FROM usage_records WHERE application_id = ${app.app.id}`);
      const usageBefore = await usage();
      assert.ok(usageBefore >= 1, 'usage was metered');

      const path = `/v3/rest/agent-conversations/sessions/${sessionId}`;
      const readOnly = { 'X-Service-Api-Key': (await createTestKey(t.pool, t.org.organizationId, ['agents:read'])).apiKey };
      const refused = await call('DELETE', path, readOnly);
      assert.deepEqual([refused.status, refused.body.errorCode, refused.body.requiredScope], [403, 'insufficient_scope', 'agents:write']);
      const other = await createTestOrg(t.pool);
      assert.equal((await call('DELETE', path, { 'X-Service-Api-Key': other.apiKey })).status, 404);

      assert.equal((await call('DELETE', path)).status, 204);
      assert.equal((await call('GET', path)).status, 404);
      for (const table of ['agent_events', 'agent_signals', 'agent_participants'] as const)
        assert.equal(await rows(table, 'session_id', sessionId), 0, table);
      assert.deepEqual(await subjectRows(), { events: 0, deliveries: 0 });
      assert.equal(await usage(), usageBefore, 'metered usage stays');
      const left = await t.pool.oneFirst(sql.type(count)`
        SELECT count(*)::int AS n FROM usage_records WHERE application_id = ${app.app.id} AND session_id IS NOT NULL`);
      assert.equal(left, 0, 'without the session');

      const again = await call('DELETE', path);
      assert.equal(again.status, 404);
      assert.deepEqual(again.body, { message: 'Agent session not found.', errorCode: 'not_found', resource: 'Agent session' });
    });

    it('a user deletes only a conversation they can see', async () => {
      const member = await createTestUser(t.pool, t.org.organizationId, 'member');
      const stranger = await createTestUser(t.pool, t.org.organizationId, 'member');
      const app = await t.newApp({ conversationAccess: { type: 'users', userIds: [member.userId] } });
      const res = await t.ingest(app, sessionRequest(app, [userMessage(1, 'hello')], { externalSessionId: 'restricted' }));
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const path = `/v3/rest/agent-conversations/sessions/${res.body.sessionId}`;
      assert.equal((await call('DELETE', path, { Authorization: `Bearer ${stranger.accessToken}` })).status, 404);
      assert.equal((await call('DELETE', path, { Authorization: `Bearer ${member.accessToken}` })).status, 204);
    });
  });
});
