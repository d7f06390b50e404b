import { strict as assert } from 'node:assert';
import { changeApplication } from '../../../src/agents/applications.js';
import {
  agentContext,
  assistantMessage,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { createTestKey, createTestOrg, createTestUser } from '../../../harness/fixtures.js';

/** Read side of the agent area, with conversation access. */
describe('agent sessions: reads and conversation access', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;
  let sessionId: string;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
    const res = await t.ingest(
      app,
      sessionRequest(app, [assistantMessage(2, 'a', { revision: 1 }), userMessage(1, 'q')], {
        externalSessionId: 'read-1',
        agentVersion: '1.2.3',
        context: { surface: 'help', environment: 'production' },
      }),
    );
    sessionId = res.body.sessionId;
  });
  after(async () => t?.close());

  const get = (path: string, headers: Record<string, string>) => t.api.request(path, { headers });
  const key = () => ({ 'X-Service-Api-Key': t.org.apiKey });

  it('GET a session: identity, status, events in sequence order with their revision', async () => {
    const res = await get(`/v3/rest/agent-conversations/sessions/${sessionId}`, key());
    assert.equal(res.status, 200);
    assert.equal(res.body.sessionId, sessionId);
    assert.equal(res.body.applicationId, app.app.id);
    assert.equal(res.body.applicationName, app.app.name);
    assert.equal(res.body.externalSessionId, 'read-1');
    assert.equal(res.body.status, 'open');
    assert.equal(res.body.processingStatus, 'pending');
    assert.equal(res.body.processedThroughSequence, null);
    assert.equal(res.body.agentVersion, '1.2.3');
    assert.deepEqual(
      res.body.events.map((e: { externalEventId: string; sequence: number; revision: number }) => [
        e.externalEventId,
        e.sequence,
        e.revision,
      ]),
      [
        ['e1', 1, 1],
        ['e2', 2, 1],
      ],
    );
    assert.equal(res.body.events[1].content, 'a');
    assert.equal(res.body.events[1].final, true);
  });

  it('afterSequence past the largest safe integer is a 400, not a database error (found by fuzzing)', async () => {
    const res = await get(`/v3/rest/agent-conversations/sessions/${sessionId}?afterSequence=3677763118703239109022347952128`, key());
    assert.equal(res.status, 400);
    assert.equal(res.body.errorCode, 'validation_failed');
    assert.equal(res.body.errors[0].path, 'query.afterSequence');
    const max = await get(`/v3/rest/agent-conversations/sessions/${sessionId}?afterSequence=${Number.MAX_SAFE_INTEGER}`, key());
    assert.deepEqual([max.status, max.body.events], [200, []]);
  });

  it('lists sessions with filters and paging', async () => {
    await t.ingest(app, sessionRequest(app, [userMessage(1, 'x')], { externalSessionId: 'read-2', status: 'ended' }));
    const all = await get('/v3/rest/agent-conversations/sessions?limit=1', key());
    assert.equal(all.status, 200);
    assert.equal(all.body.sessions.length, 1);
    assert.equal(all.body.has_more, true);
    const ended = await get(`/v3/rest/agent-conversations/sessions?status=ended&applicationId=${app.app.id}`, key());
    assert.deepEqual(
      ended.body.sessions.map((s: { externalSessionId: string }) => s.externalSessionId),
      ['read-2'],
    );
    const bad = await get('/v3/rest/agent-conversations/sessions?status=closed', key());
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'validation_failed');
  });

  it('filters by processing status (the console lists the sessions that wait for capture or credits)', async () => {
    const noCapture = await t.newApp({ contentCapture: false });
    const sent = await t.ingest(noCapture, sessionRequest(noCapture, [userMessage(1, 'x')], { externalSessionId: 'no-capture' }));
    assert.equal(sent.body.processingStatus, 'capture_disabled');
    const disabled = await get('/v3/rest/agent-conversations/sessions?processingStatus=capture_disabled', key());
    assert.equal(disabled.status, 200);
    assert.deepEqual(
      disabled.body.sessions.map((s: { externalSessionId: string }) => s.externalSessionId),
      ['no-capture'],
    );
    const pending = await get(`/v3/rest/agent-conversations/sessions?processingStatus=pending&applicationId=${app.app.id}`, key());
    assert.ok(pending.body.sessions.length >= 1);
    assert.ok(pending.body.sessions.every((s: { processingStatus: string }) => s.processingStatus === 'pending'));
    const bad = await get('/v3/rest/agent-conversations/sessions?processingStatus=done', key());
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, {
      message: 'The request is invalid.',
      errorCode: 'validation_failed',
      errors: [
        { path: 'query.processingStatus', message: 'must be one of: pending, processing, completed, billing_blocked, capture_disabled' },
      ],
    });
  });

  it('401 without credentials, 403 for a key without agents:read, 404 for another organization and unknown ids', async () => {
    assert.equal((await get(`/v3/rest/agent-conversations/sessions/${sessionId}`, {})).status, 401);
    const narrow = await createTestKey(t.pool, t.org.organizationId, ['feedback:write']);
    const forbidden = await get(`/v3/rest/agent-conversations/sessions/${sessionId}`, { 'X-Service-Api-Key': narrow.apiKey });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.errorCode, 'insufficient_scope');
    const other = await createTestOrg(t.pool);
    const foreign = await get(`/v3/rest/agent-conversations/sessions/${sessionId}`, { 'X-Service-Api-Key': other.apiKey });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.errorCode, 'not_found');
    assert.equal((await get('/v3/rest/agent-conversations/sessions/not-a-uuid', key())).status, 404);
    const list = await get('/v3/rest/agent-conversations/sessions', { 'X-Service-Api-Key': other.apiKey });
    assert.deepEqual(list.body.sessions, []);
  });

  it('restricted access: only allowed users and participant owners; existing chats are restricted too; workspace access restores nothing', async () => {
    const a = await t.newApp();
    const allowed = await createTestUser(t.pool, t.org.organizationId);
    const owner = await createTestUser(t.pool, t.org.organizationId);
    const outsider = await createTestUser(t.pool, t.org.organizationId);
    const old = await t.ingest(a, sessionRequest(a, [userMessage(1, 'before')], { externalSessionId: 'acc-old' }));
    const path = (id: string) => `/v3/rest/agent-conversations/sessions/${id}`;
    const bearer = (u: { accessToken: string }) => ({ Authorization: `Bearer ${u.accessToken}` });
    assert.equal((await get(path(old.body.sessionId), bearer(outsider))).status, 200, 'workspace access: every user');

    await changeApplication(t.pool, t.org.organizationId, a.app.id, { conversationAccess: { type: 'users', userIds: [allowed.userId] } });
    const owned = await t.ingest(
      a,
      sessionRequest(a, [userMessage(1, 'mine')], {
        externalSessionId: 'acc-owned',
        participants: [{ externalId: 'u', ownerUserId: owner.userId }],
      }),
    );
    assert.equal((await get(path(old.body.sessionId), bearer(outsider))).status, 404, 'existing chat restricted');
    assert.equal((await get(path(old.body.sessionId), key())).status, 404, 'organization keys see workspace chats only');
    assert.equal((await get(path(old.body.sessionId), bearer(allowed))).status, 200);
    assert.equal((await get(path(owned.body.sessionId), bearer(owner))).status, 200, 'the participant owner');
    assert.equal((await get(path(owned.body.sessionId), bearer(outsider))).status, 404);

    await changeApplication(t.pool, t.org.organizationId, a.app.id, { conversationAccess: { type: 'workspace' } });
    assert.equal((await get(path(old.body.sessionId), bearer(outsider))).status, 404, 'historical access is not restored');
    const fresh = await t.ingest(a, sessionRequest(a, [userMessage(1, 'new')], { externalSessionId: 'acc-new' }));
    assert.equal((await get(path(fresh.body.sessionId), bearer(outsider))).status, 200, 'new chats follow workspace access');
  });
});
