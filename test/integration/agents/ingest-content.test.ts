import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { changeApplication } from '../../../src/agents/applications.js';
import { upsertPerson } from '../../../src/db/repositories/people.js';
import { agentContext, assistantMessage, feedbackEvent, sessionRequest, userMessage, type AgentContext } from '../../../harness/agents.js';
import { createTestOrg } from '../../../harness/fixtures.js';

const GITHUB_TOKEN = `ghp_${'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'}`;

/** Sanitizing before storage, participants and people, content capture, processing status. */
describe('agent ingest: sanitized storage, participants, content capture, processing status', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let n = 0;

  before(async () => {
    t = await agentContext();
  });
  after(async () => t?.close());

  const payloads = (sessionId: string) =>
    t.pool.anyFirst(sql.type(z.object({ payload: z.any() }))`
    SELECT payload FROM agent_events WHERE session_id = ${sessionId} ORDER BY sequence`);

  it('removes configured field names everywhere, replaces configured text, masks secrets; the read shows the same', async () => {
    const a = await t.newApp({ redactedFieldNames: ['internalNote', 'traceId', 'email'], redactedTextPatterns: ['Project Falcon'] });
    const body = sessionRequest(
      a,
      [
        userMessage(1, `My token is ${GITHUB_TOKEN} for Project Falcon`, {
          participantExternalId: 'u1',
          context: { surface: 'chat', properties: { internalNote: 'x', nested: { internal_note: 'y', keep: 'z' }, password: 'hunter2' } },
          trace: { traceId: 't-1', spanId: 's-1' },
        }),
        assistantMessage(2, 'Rotate it.', {
          model: { provider: 'openai', name: 'gpt' },
          usage: { inputTokens: 3, outputTokens: 4, latencyMs: 5 },
        }),
      ],
      {
        externalSessionId: `c-${++n}`,
        participants: [{ externalId: 'u1', displayName: 'Ann', email: 'ann@example.com', properties: { internalNote: 'q' } }],
      },
    );
    const res = await t.ingest(a, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const [user, assistant] = await payloads(res.body.sessionId);
    assert.ok(!JSON.stringify(user).includes(GITHUB_TOKEN));
    assert.match(user.content, /\[REDACTED:[a-z_]+\]/);
    assert.ok(!user.content.includes('Project Falcon'));
    assert.deepEqual(user.trace, { spanId: 's-1' });
    assert.equal(user.context.properties.internalNote, undefined);
    assert.deepEqual(user.context.properties.nested, { keep: 'z' });
    assert.notEqual(user.context.properties.password, 'hunter2');
    assert.deepEqual(assistant.usage, { inputTokens: 3, outputTokens: 4, latencyMs: 5 });
    const read = await t.api.request(`/v3/rest/agent-conversations/sessions/${res.body.sessionId}`, {
      headers: { 'X-Service-Api-Key': t.org.apiKey },
    });
    assert.equal(read.status, 200);
    assert.equal(read.body.participants[0].email, null, 'email is a redacted field name here');
    assert.equal(read.body.participants[0].displayName, 'Ann');
    assert.equal(read.body.participants[0].properties.internalNote, undefined);
    assert.ok(!JSON.stringify(read.body).includes(GITHUB_TOKEN));
  });

  it('redacted context, feedback and participant identity keys are checked as sent, then not stored (issue 29.4)', async () => {
    const names = ['environment', 'rating', 'targetEventExternalId', 'externalId', 'personId', 'ownerUserId', 'boundary'];
    const a = await t.newApp({ redactedFieldNames: names, allowedEnvironments: ['production'] });
    const events = [
      userMessage(1, 'hi', { participantExternalId: 'u1', context: { environment: 'production' } }),
      assistantMessage(2, 'hello', { context: { environment: 'production' } }),
      feedbackEvent(3, 'e2', 'negative', { context: { environment: 'production' } }),
    ];
    const body = sessionRequest(a, events, {
      externalSessionId: `c-${++n}`,
      context: { environment: 'production', surface: 'chat' },
      participants: [{ externalId: 'u1', displayName: 'Ann', boundary: 'external' }],
    });
    const res = await t.ingest(a, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const stored = JSON.stringify(await payloads(res.body.sessionId));
    assert.ok(!stored.includes('production') && !stored.includes('"rating"') && !stored.includes('targetEventExternalId'), stored);
    const session = await t.pool.one(
      sql.type(z.object({ context: z.any() }))`SELECT context FROM agent_sessions WHERE id = ${res.body.sessionId}`,
    );
    assert.deepEqual(session.context, { surface: 'chat' });
    const participants = await t.pool.any(sql.type(z.object({ external_id: z.string().nullable(), boundary: z.string().nullable() }))`
      SELECT external_id, boundary FROM agent_participants WHERE session_id = ${res.body.sessionId}`);
    assert.deepEqual(participants, [{ external_id: null, boundary: null }]);
    // Still checked as sent: an environment that is not allowed, a feedback target that is not there.
    const refused = await t.ingest(
      a,
      sessionRequest(a, [userMessage(1, 'x', { context: { environment: 'staging' } })], { externalSessionId: `c-${++n}` }),
    );
    assert.deepEqual([refused.status, refused.body.errors?.[0]?.path], [400, 'body.events.0.context.environment']);
    const orphan = await t.ingest(
      a,
      sessionRequest(a, [feedbackEvent(1, 'nowhere', 'positive', { context: { environment: 'production' } })], {
        externalSessionId: `c-${++n}`,
      }),
    );
    assert.deepEqual([orphan.status, orphan.body.errors?.[0]?.path], [400, 'body.events.0.feedback.targetEventExternalId']);
  });

  it("Intake's own API keys and ingest secrets pasted into a chat are masked (issue 29.4)", async () => {
    const a = await t.newApp();
    const res = await t.ingest(
      a,
      sessionRequest(a, [userMessage(1, `use ${t.org.apiKey} or ${a.secret} please`)], { externalSessionId: `c-${++n}` }),
    );
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const [user] = await payloads(res.body.sessionId);
    assert.equal(user.content, 'use [REDACTED:intake_api_key] or [REDACTED:intake_ingest_secret] please');
  });

  it('deduplicates by sanitized content: a retry whose only change is inside a masked secret is a retry', async () => {
    const a = await t.newApp();
    const first = await t.ingest(a, sessionRequest(a, [userMessage(1, `key ${GITHUB_TOKEN}`)], { externalSessionId: `c-${++n}` }));
    const other = `ghp_${'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2'}`;
    const retry = await t.ingest(a, sessionRequest(a, [userMessage(1, `key ${other}`)], { externalSessionId: `c-${n}` }));
    assert.equal(first.status, 202);
    assert.deepEqual([retry.body.acceptedEventCount, retry.body.deduplicatedEventCount], [0, 1]);
  });

  it('links participants to people: explicit personId wins, otherwise a case-insensitive e-mail match; never creates people', async () => {
    const a = await t.newApp();
    const byEmail = await t.pool.transaction((tx) => upsertPerson(tx, { organizationId: t.org.organizationId, email: 'Bea@Example.com' }));
    const explicit = await t.pool.transaction((tx) => upsertPerson(tx, { organizationId: t.org.organizationId, email: 'cy@example.com' }));
    const peopleBefore = await t.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM people`);
    const res = await t.ingest(
      a,
      sessionRequest(a, [userMessage(1, 'hi')], {
        externalSessionId: `c-${++n}`,
        participants: [
          { externalId: 'p1', email: 'bea@example.COM' },
          { externalId: 'p2', email: 'bea@example.com', personId: explicit.person.uuid },
          { externalId: 'p3', email: 'nobody@example.com' },
        ],
      }),
    );
    assert.equal(res.status, 202);
    const read = await t.api.request(`/v3/rest/agent-conversations/sessions/${res.body.sessionId}`, {
      headers: { 'X-Service-Api-Key': t.org.apiKey },
    });
    assert.deepEqual(
      read.body.participants.map((p: { personId: string | null }) => p.personId),
      [byEmail.person.uuid, explicit.person.uuid, null],
    );
    assert.equal(await t.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM people`), peopleBefore);
    const other = await createTestOrg(t.pool);
    await t.pool.transaction((tx) => upsertPerson(tx, { organizationId: other.organizationId, email: 'dan@example.com' }));
    const cross = await t.ingest(
      a,
      sessionRequest(a, [userMessage(1, 'x')], {
        externalSessionId: `c-${++n}`,
        participants: [{ externalId: 'p', email: 'dan@example.com' }],
      }),
    );
    const crossRead = await t.api.request(`/v3/rest/agent-conversations/sessions/${cross.body.sessionId}`, {
      headers: { 'X-Service-Api-Key': t.org.apiKey },
    });
    assert.equal(crossRead.body.participants[0].personId, null, 'a person of another organization is never linked');
  });

  it('content capture off: only counts and status are kept, the next ingest purges stored content, status capture_disabled', async () => {
    const a = await t.newApp();
    const externalSessionId = `c-${++n}`;
    const first = await t.ingest(
      a,
      sessionRequest(a, [userMessage(1, 'secret plan'), assistantMessage(2, 'ok')], {
        externalSessionId,
        participants: [{ externalId: 'u1', displayName: 'Ann' }],
      }),
    );
    assert.equal(first.body.processingStatus, 'pending');
    const sessionId = first.body.sessionId as string;
    await t.pool.query(sql.unsafe`INSERT INTO agent_signals (organization_id, session_id, event_external_id, source, rating)
      VALUES (${t.org.organizationId}, ${sessionId}, 'e2', 'explicit_feedback', 'positive')`);
    await t.pool.query(sql.unsafe`INSERT INTO agent_analysis_jobs (session_id, event_id, revision)
      SELECT session_id, id, revision FROM agent_events WHERE session_id = ${sessionId} AND external_event_id = 'e2'`);
    await changeApplication(t.pool, t.org.organizationId, a.app.id, { contentCapture: false });
    const next = await t.ingest(
      a,
      sessionRequest(a, [userMessage(3, 'more secrets'), feedbackEvent(4, 'e2')], {
        externalSessionId,
        participants: [{ externalId: 'u2' }],
      }),
    );
    assert.equal(next.status, 202, JSON.stringify(next.body));
    assert.equal(next.body.processingStatus, 'capture_disabled');
    assert.equal(next.body.acceptedEventCount, 2);
    assert.deepEqual(
      (await payloads(sessionId)).filter((p) => p !== null),
      [],
    );
    const left = await t.pool.one(sql.type(
      z.object({ participants: z.number(), signals: z.number(), jobs: z.number(), events: z.number(), event_count: z.number() }),
    )`
      SELECT (SELECT count(*)::int FROM agent_participants WHERE session_id = ${sessionId}) AS participants,
             (SELECT count(*)::int FROM agent_signals WHERE session_id = ${sessionId}) AS signals,
             (SELECT count(*)::int FROM agent_analysis_jobs WHERE session_id = ${sessionId}) AS jobs,
             (SELECT count(*)::int FROM agent_events WHERE session_id = ${sessionId}) AS events,
             (SELECT event_count FROM agent_sessions WHERE id = ${sessionId}) AS event_count`);
    assert.deepEqual(left, { participants: 0, signals: 0, jobs: 0, events: 4, event_count: 4 });
    const retry = await t.ingest(a, sessionRequest(a, [userMessage(3, 'more secrets')], { externalSessionId }));
    assert.deepEqual(
      [retry.body.acceptedEventCount, retry.body.deduplicatedEventCount],
      [0, 1],
      'retries still deduplicate without content',
    );
  });

  it('processingStatus billing_blocked when the organization has no credits', async () => {
    const broke = await createTestOrg(t.pool, { credits: 0 });
    const a = await t.newApp(undefined, broke);
    const res = await t.ingest(a, sessionRequest(a, [userMessage(1, 'hi')], { externalSessionId: `c-${++n}` }));
    assert.equal(res.status, 202);
    assert.equal(res.body.processingStatus, 'billing_blocked');
  });
});
