import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { changeApplication } from '../../../src/agents/applications.js';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { createTestKey, createTestUser } from '../../../harness/fixtures.js';

/** GET /v3/rest/signals and /v3/rest/usage on processed sessions, with conversation access applied. */
describe('signals and usage API', function () {
  this.timeout(120_000);
  let ctx: ProcessingContext;
  let app: TestAgentApp;
  let restricted: TestAgentApp;
  let alice: Awaited<ReturnType<typeof createTestUser>>;
  let bob: Awaited<ReturnType<typeof createTestUser>>;
  let owner: Awaited<ReturnType<typeof createTestUser>>;
  let sessionA: string;
  let sessionR: string;

  const get = (path: string, auth: Record<string, string>) => ctx.api.request(path, { headers: auth });
  const key = () => ({ 'X-Service-Api-Key': ctx.org.apiKey });
  const bearer = (u: { accessToken: string }) => ({ Authorization: `Bearer ${u.accessToken}` });
  const ids = (body: any) => new Set((body.signals as { sessionId: string }[]).map((s) => s.sessionId));

  before(async () => {
    ctx = await processingContext({ credits: 100 });
    alice = await createTestUser(ctx.pool, ctx.org.organizationId);
    bob = await createTestUser(ctx.pool, ctx.org.organizationId);
    owner = await createTestUser(ctx.pool, ctx.org.organizationId);
    app = await ctx.newApp();
    restricted = await ctx.newApp();
    const events = [
      userMessage(1, 'The export is broken and I love the new dashboard, thanks!'),
      assistantMessage(2, 'Sorry about the export.'),
      feedbackEvent(3, 'e2', 'positive', { feedback: { targetEventExternalId: 'e2', rating: 'positive', labels: ['helpful'] } }),
      userMessage(4, 'Can you add dark mode?'),
      assistantMessage(5, 'Noted.'),
      feedbackEvent(6, 'e5', 'negative'),
    ];
    const a = await ctx.ingest(app, sessionRequest(app, events, { externalSessionId: 'open-app', status: 'ended' }));
    const r = await ctx.ingest(
      restricted,
      sessionRequest(restricted, events, {
        externalSessionId: 'restricted-app',
        status: 'ended',
        participants: [{ externalId: 'u1', ownerUserId: owner.userId }],
      }),
    );
    sessionA = a.body.sessionId;
    sessionR = r.body.sessionId;
    await ctx.processedThrough(sessionA, 6);
    await ctx.processedThrough(sessionR, 6);
  });
  after(async () => ctx?.close());

  it('lists explicit and inferred signals with the documented shape', async () => {
    const res = await get(`/v3/rest/signals?sessionId=${sessionA}&limit=100`, key());
    assert.equal(res.status, 200);
    const explicit = res.body.signals.filter((s: any) => s.source === 'explicit_feedback');
    assert.deepEqual(explicit.map((s: any) => [s.eventExternalId, s.rating, s.kind, s.labels]).sort(), [
      ['e2', 'positive', 'feedback', ['helpful']],
      ['e5', 'negative', 'feedback', []],
    ]);
    const inferred = res.body.signals.filter((s: any) => s.source === 'qualitative_inference');
    const kinds = new Set(inferred.map((s: any) => s.kind));
    for (const k of ['issue', 'praise', 'request', 'topic']) assert.ok(kinds.has(k), `inferred ${k}: ${[...kinds].join(',')}`);
    const one = res.body.signals[0];
    assert.deepEqual(Object.keys(one).sort(), [
      'applicationId',
      'comment',
      'createdAt',
      'eventExternalId',
      'id',
      'kind',
      'labels',
      'producer',
      'rating',
      'sessionId',
      'source',
      'summary',
    ]);
    assert.equal(one.sessionId, sessionA);
    assert.equal(one.applicationId, app.app.id);
    assert.deepEqual([res.body.page, res.body.limit, res.body.has_more], [1, 100, false]);
  });

  it('filters by source, rating, session and application, and pages', async () => {
    const explicit = await get(`/v3/rest/signals?source=explicit_feedback&applicationId=${app.app.id}`, key());
    assert.equal(explicit.body.signals.length, 2);
    assert.ok(explicit.body.signals.every((s: any) => s.source === 'explicit_feedback' && s.applicationId === app.app.id));
    const negative = await get(`/v3/rest/signals?source=explicit_feedback&rating=negative&sessionId=${sessionA}`, key());
    assert.deepEqual(
      negative.body.signals.map((s: any) => s.eventExternalId),
      ['e5'],
    );
    const inferredPositive = await get(`/v3/rest/signals?source=qualitative_inference&rating=positive&sessionId=${sessionA}`, key());
    assert.ok(inferredPositive.body.signals.length > 0);
    assert.ok(inferredPositive.body.signals.every((s: any) => s.rating === 'positive' && s.source === 'qualitative_inference'));
    const all = (await get(`/v3/rest/signals?sessionId=${sessionA}&limit=100`, key())).body.signals;
    const page1 = await get(`/v3/rest/signals?sessionId=${sessionA}&limit=2&page=1`, key());
    const page2 = await get(`/v3/rest/signals?sessionId=${sessionA}&limit=2&page=2`, key());
    assert.equal(page1.body.has_more, all.length > 2);
    assert.deepEqual(
      [...page1.body.signals, ...page2.body.signals].map((s: any) => s.id),
      all.slice(0, 4).map((s: any) => s.id),
    );
  });

  it('rejects bad filters with 400 and names them; 401 without credentials; 403 without signals:read', async () => {
    for (const q of ['source=other', 'rating=neutral', 'sessionId=nope', 'limit=101', 'page=0', 'unknown=1']) {
      const res = await get(`/v3/rest/signals?${q}`, key());
      assert.equal(res.status, 400, q);
      assert.equal(res.body.errorCode, 'validation_failed');
      assert.ok(res.body.errors.length > 0 && typeof res.body.message === 'string');
    }
    const none = await get('/v3/rest/signals', {});
    assert.equal(none.status, 401);
    assert.equal(none.body.errorCode, 'unauthenticated');
    const narrow = await createTestKey(ctx.pool, ctx.org.organizationId, ['agents:read']);
    const forbidden = await get('/v3/rest/signals', { 'X-Service-Api-Key': narrow.apiKey });
    assert.equal(forbidden.status, 403);
    assert.deepEqual([forbidden.body.errorCode, forbidden.body.requiredScope], ['insufficient_scope', 'signals:read']);
  });

  it('restricting access hides existing chats and signals at once; widening back restores nothing', async () => {
    assert.ok(ids((await get('/v3/rest/signals?limit=100', bearer(bob))).body).has(sessionR), 'workspace access: every user sees it');
    await changeApplication(ctx.pool, ctx.org.organizationId, restricted.app.id, {
      conversationAccess: { type: 'users', userIds: [alice.userId] },
    });
    const forAlice = ids((await get('/v3/rest/signals?limit=100', bearer(alice))).body);
    const forBob = ids((await get('/v3/rest/signals?limit=100', bearer(bob))).body);
    const forOwner = ids((await get('/v3/rest/signals?limit=100', bearer(owner))).body);
    const forKey = ids((await get('/v3/rest/signals?limit=100', key())).body);
    assert.ok(forAlice.has(sessionR) && forAlice.has(sessionA), 'an allowed user');
    assert.ok(forOwner.has(sessionR), "a participant's ownerUserId");
    assert.ok(!forBob.has(sessionR) && forBob.has(sessionA), 'another user sees only workspace chats');
    assert.ok(!forKey.has(sessionR), 'an organization key sees workspace chats only');
    assert.equal((await get(`/v3/rest/agent-conversations/sessions/${sessionR}`, bearer(bob))).status, 404);
    await changeApplication(ctx.pool, ctx.org.organizationId, restricted.app.id, { conversationAccess: { type: 'workspace' } });
    assert.ok(!ids((await get('/v3/rest/signals?limit=100', bearer(bob))).body).has(sessionR), 'widening does not restore history');
    assert.ok(ids((await get('/v3/rest/signals?limit=100', bearer(alice))).body).has(sessionR));
  });

  it('reports metered usage per day and in total, filtered by application', async () => {
    const res = await get('/v3/rest/usage?unit=agent_response_processed', key());
    assert.equal(res.status, 200);
    assert.equal(res.body.quantity, 4, 'two finalized responses in each of two sessions');
    assert.equal(res.body.unit, 'agent_response_processed');
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(res.body.days, [{ date: today, quantity: 4 }]);
    const forApp = await get(`/v3/rest/usage?applicationId=${app.app.id}`, bearer(alice));
    assert.equal(forApp.body.quantity, 2);
    const past = await get('/v3/rest/usage?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z', key());
    assert.deepEqual([past.body.quantity, past.body.days], [0, []]);
    const empty = await get('/v3/rest/usage?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', key());
    assert.equal(empty.status, 400);
    assert.equal(empty.body.errorCode, 'validation_failed');
    const badUnit = await get('/v3/rest/usage?unit=tokens', key());
    assert.equal(badUnit.status, 400);
    assert.equal((await get('/v3/rest/usage', {})).status, 401);
    const count = await ctx.pool.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM usage_records WHERE organization_id = ${ctx.org.organizationId}`,
    );
    assert.equal(count, 4);
  });

  it("reports one session's units (the console's session page); a session the caller cannot read is 404", async () => {
    const a = await get(`/v3/rest/usage?sessionId=${sessionA}`, key());
    assert.equal(a.status, 200);
    assert.deepEqual([a.body.sessionId, a.body.applicationId, a.body.quantity], [sessionA, null, 2]);
    assert.equal((await get(`/v3/rest/usage?sessionId=${sessionR}`, bearer(owner))).body.quantity, 2);
    // Bob lost access to the restricted session (widening access later restores nothing).
    const hidden = await get(`/v3/rest/usage?sessionId=${sessionR}`, bearer(bob));
    assert.equal(hidden.status, 404);
    assert.deepEqual(hidden.body, { message: 'Agent session not found.', errorCode: 'not_found', resource: 'Agent session' });
    const unknown = await get('/v3/rest/usage?sessionId=00000000-0000-4000-8000-000000000000', key());
    assert.equal(unknown.status, 404);
    const bad = await get('/v3/rest/usage?sessionId=nope', key());
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'validation_failed');
  });
});
