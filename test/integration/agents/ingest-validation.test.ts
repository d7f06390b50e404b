import { strict as assert } from 'node:assert';
import { upsertPerson } from '../../../src/db/repositories/people.js';
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
import { createTestOrg } from '../../../harness/fixtures.js';
import type { AgentFeedback } from '../../../src/domain/agent-ingest.js';

/** Spec 400s of agent ingest (payload, limits, environment, feedback target); each stores nothing. */
describe('agent ingest: validation (400)', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;
  let n = 0;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => t?.close());

  /** Sends a request that must be refused with 400 and proves nothing was stored. */
  async function refused(body: unknown, target = app) {
    const before = { sessions: await countRows(t.pool, 'agent_sessions'), events: await countRows(t.pool, 'agent_events') };
    const res = await t.ingest(target, body);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(typeof res.body.message, 'string');
    assert.ok(['validation_failed', 'payload_too_large'].includes(res.body.errorCode), res.body.errorCode);
    assert.deepEqual({ sessions: await countRows(t.pool, 'agent_sessions'), events: await countRows(t.pool, 'agent_events') }, before);
    return res.body as { message: string; errorCode: string; errors?: { path: string; message: string }[] };
  }
  const paths = (body: { errors?: { path: string }[] }) => (body.errors ?? []).map((e) => e.path);
  const session = (events: unknown[], extra: Record<string, unknown> = {}) => ({
    ...sessionRequest(app, []),
    externalSessionId: `v-${++n}`,
    events,
    ...extra,
  });

  it('no events, and more than 500 events', async () => {
    assert.deepEqual(paths(await refused(session([]))), ['body.events']);
    const many = Array.from({ length: 501 }, (_, i) => userMessage(i, 'x'));
    assert.deepEqual(paths(await refused(session(many))), ['body.events']);
  });

  it('a request over 2 MiB is 400 payload_too_large', async () => {
    const big = Array.from({ length: 10 }, (_, i) => userMessage(i, 'y'.repeat(220 * 1024)));
    const body = await refused(session(big));
    assert.equal(body.errorCode, 'payload_too_large');
  });

  it('an event over 256 KiB is 400 with its path', async () => {
    const body = await refused(session([userMessage(1, 'ok'), userMessage(2, 'z'.repeat(257 * 1024))]));
    assert.deepEqual(paths(body), ['body.events.1']);
  });

  it('missing agentKey, externalSessionId or event fields; unknown properties; bad types', async () => {
    const { agentKey: _a, ...noKey } = session([userMessage(1, 'x')]);
    assert.deepEqual(paths(await refused(noKey)), ['body.agentKey']);
    const body = await refused(session([{ sequence: 'one', revision: 0, type: 'tool_call', occurredAt: 'yesterday', extra: 1 }]));
    for (const p of [
      'body.events.0.externalEventId',
      'body.events.0.sequence',
      'body.events.0.revision',
      'body.events.0.type',
      'body.events.0.occurredAt',
      'body.events.0.extra',
    ]) {
      assert.ok(paths(body).includes(p), `${p} in ${paths(body).join(', ')}`);
    }
    assert.deepEqual(paths(await refused(session([userMessage(1, 'x')], { status: 'closed' }))), ['body.status']);
  });

  it('context and participant properties: at most 50 values', async () => {
    const props = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    assert.deepEqual(paths(await refused(session([userMessage(1, 'x')], { context: { properties: props } }))), ['body.context.properties']);
    assert.deepEqual(paths(await refused(session([userMessage(1, 'x', { context: { properties: props } })]))), [
      'body.events.0.context.properties',
    ]);
    const participants = [{ externalId: 'u1', properties: props }];
    assert.deepEqual(paths(await refused(session([userMessage(1, 'x')], { participants }))), ['body.participants.0.properties']);
    const ok = await t.ingest(
      app,
      session([userMessage(1, 'x')], {
        participants: [{ externalId: 'u1', properties: Object.fromEntries(Object.entries(props).slice(0, 50)) }],
      }),
    );
    assert.equal(ok.status, 202);
  });

  it('participant externalId is required with displayName, username or email', async () => {
    for (const field of ['displayName', 'username', 'email']) {
      const participants = [{ [field]: field === 'email' ? 'a@example.com' : 'Ann' }];
      assert.deepEqual(paths(await refused(session([userMessage(1, 'x')], { participants }))), ['body.participants.0.externalId']);
    }
    const anonymous = await t.ingest(app, session([userMessage(1, 'x')], { participants: [{ boundary: 'external' }] }));
    assert.equal(anonymous.status, 202);
  });

  it('a repeated participant externalId', async () => {
    const participants = [{ externalId: 'u1' }, { externalId: 'u1', displayName: 'Again' }];
    assert.deepEqual(paths(await refused(session([userMessage(1, 'x')], { participants }))), ['body.participants.1.externalId']);
  });

  it('feedback only on feedback events, and every feedback event carries feedback with a rating, labels or comment', async () => {
    const onMessage = userMessage(1, 'x', { feedback: { targetEventExternalId: 'e0', rating: 'positive' } });
    assert.ok(paths(await refused(session([onMessage]))).some((p) => p.startsWith('body.events.0')));
    const bare = { ...feedbackEvent(2, 'e1'), feedback: undefined };
    assert.ok(paths(await refused(session([assistantMessage(1, 'a'), bare]))).includes('body.events.1.feedback'));
    const empty = feedbackEvent(2, 'e1', 'positive', { feedback: { targetEventExternalId: 'e1' } as AgentFeedback });
    assert.ok(paths(await refused(session([assistantMessage(1, 'a'), empty]))).some((p) => p.startsWith('body.events.1.feedback')));
  });

  it('participantExternalId must name a participant of the session (sent now or before)', async () => {
    const body = await refused(session([userMessage(1, 'x', { participantExternalId: 'ghost' })]));
    assert.deepEqual(paths(body), ['body.events.0.participantExternalId']);
    const first = session([userMessage(1, 'x', { participantExternalId: 'u1' })], { participants: [{ externalId: 'u1' }] });
    assert.equal((await t.ingest(app, first)).status, 202);
    const later = { ...first, participants: [], events: [userMessage(2, 'y', { participantExternalId: 'u1' })] };
    assert.equal((await t.ingest(app, later)).status, 202);
  });

  it('feedback must target an earlier assistant_message of the session', async () => {
    const toNothing = await refused(session([userMessage(1, 'q'), feedbackEvent(2, 'missing')]));
    assert.deepEqual(paths(toNothing), ['body.events.1.feedback.targetEventExternalId']);
    const toUser = await refused(session([userMessage(1, 'q'), feedbackEvent(2, 'e1')]));
    assert.match(toUser.errors?.[0]?.message ?? '', /assistant_message/);
    const toLater = await refused(session([feedbackEvent(1, 'e2'), assistantMessage(2, 'a')]));
    assert.match(toLater.errors?.[0]?.message ?? '', /earlier/);
    const sameRequest = await t.ingest(app, session([userMessage(1, 'q'), assistantMessage(2, 'a'), feedbackEvent(3, 'e2')]));
    assert.equal(sameRequest.status, 202);
  });

  it('feedback may target an assistant message stored by an earlier request', async () => {
    const s = session([userMessage(1, 'q'), assistantMessage(2, 'a')]);
    assert.equal((await t.ingest(app, s)).status, 202);
    const res = await t.ingest(app, { ...s, events: [feedbackEvent(3, 'e2', 'negative')] });
    assert.equal(res.status, 202);
    assert.equal(res.body.acceptedEventCount, 1);
  });

  it('environment: with an allowed list, every event must resolve to an allowed environment', async () => {
    const restricted = await t.newApp({ allowedEnvironments: ['production', 'staging'] });
    const base = (events: unknown[], extra: Record<string, unknown> = {}) => ({
      ...sessionRequest(restricted, []),
      externalSessionId: `env-${++n}`,
      events,
      ...extra,
    });
    const missing = await refused(base([userMessage(1, 'x'), userMessage(2, 'y')]), restricted);
    assert.deepEqual(paths(missing), ['body.context.environment']);
    assert.equal(missing.message, 'The environment is missing or not allowed for this application.');
    const blocked = await refused(base([userMessage(1, 'x')], { context: { environment: 'development' } }), restricted);
    assert.match(blocked.errors?.[0]?.message ?? '', /not an allowed environment/);
    const overridden = await refused(
      base([userMessage(1, 'x', { context: { environment: 'dev' } })], { context: { environment: 'production' } }),
      restricted,
    );
    assert.deepEqual(paths(overridden), ['body.events.0.context.environment']);
    const ok = await t.ingest(
      restricted,
      base([userMessage(1, 'x'), userMessage(2, 'y', { context: { environment: 'staging' } })], { context: { environment: 'production' } }),
    );
    assert.equal(ok.status, 202);
    const open = await t.ingest(app, session([userMessage(1, 'x')], { context: { environment: 'anything' } }));
    assert.equal(open.status, 202, 'no list configured: every environment is accepted');
  });

  it('participants: an explicit personId must be a person of this organization; an e-mail match links the person', async () => {
    const other = await createTestOrg(t.pool);
    const foreign = await t.pool.transaction((tx) => upsertPerson(tx, { organizationId: other.organizationId, email: 'far@example.com' }));
    const body = await refused(session([userMessage(1, 'x')], { participants: [{ externalId: 'u1', personId: foreign.person.uuid }] }));
    assert.deepEqual(paths(body), ['body.participants.0.personId']);
    const unknownOwner = await refused(
      session([userMessage(1, 'x')], { participants: [{ externalId: 'u1', ownerUserId: foreign.person.uuid }] }),
    );
    assert.deepEqual(paths(unknownOwner), ['body.participants.0.ownerUserId']);
  });
});
