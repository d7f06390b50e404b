import { strict as assert } from 'node:assert';
import { ERASURE_PLACES } from '../../../src/domain/erasure-places.js';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { upsertCodingSession } from '../../../src/db/repositories/projects.js';
import { createField } from '../../../src/recordings/catalog.js';
import { EncryptionCodec } from '../../../src/temporal/codec.js';
import { personErasureWorkflowId } from '../../../src/temporal/ids.js';
import { sendDue, WebhookSender } from '../../../src/webhooks/delivery.js';
import type { PersonErasureResult } from '../../../workflows/person-erasure/contract.js';
import { assistantMessage, createTestAgentApp, feedbackEvent, userMessage } from '../../../harness/agents.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { waitFor } from '../../../harness/wait.js';
import { killWorkerProcess, LOOPBACK_POLICY, startTestWorker, startWorkerProcess, type TestWorker } from '../../../harness/worker.js';
import { createTestEndpoint, TEST_PAYLOAD_KEYS, TestReceiver } from '../../helpers/webhooks.js';

const count = z.object({ n: z.number() });

/**
 * POST /v3/rest/people/{id}/erase (issue 32, point 2): the e-mail, planted in every place Intake
 * keeps one, is found nowhere afterwards (every table of the database, every workflow history
 * decoded with the payload codec), also with the worker killed (SIGKILL) in the middle of a search.
 */
describe('person erasure', function () {
  this.timeout(240_000);
  let pool: DatabasePool;
  let databaseUrl: string;
  let api: TestApi;
  let org: TestOrg;
  let admin: string;
  /** Reads everything, the export included. */
  let reader: string;
  let child: ChildProcess | undefined;
  let worker: TestWorker | undefined;
  const receiver = new TestReceiver();
  const taskQueue = `person-erasure-${randomUUID()}`;
  /** When this test's own work began (set in `before`: the suite loads every file first). */
  let startedAt: Date;
  const email = `Ana.Erase+${randomUUID().slice(0, 8)}@Example.com`;
  const needle = email.toLowerCase();

  before(async () => {
    startedAt = new Date();
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool, config: testConfig({ TEMPORAL_TASK_QUEUE: taskQueue, MEDIA_HEARTBEAT_TIMEOUT_SECONDS: '2' }) });
    org = await createTestOrg(pool, { credits: 1000 });
    admin = (await createTestKey(pool, org.organizationId, ['admin', 'feedback:read'])).apiKey;
    reader = (await createTestKey(pool, org.organizationId, ['admin', 'feedback:read', 'recordings:read', 'agents:read', 'signals:read']))
      .apiKey;
  });
  after(async () => {
    if (child) await killWorkerProcess(child);
    await worker?.stop();
    await api?.close();
    await pool?.end();
    await receiver.close();
  });

  const call = (method: string, path: string, json?: unknown, key = org.apiKey) =>
    api.request(path, { method, headers: { 'X-Service-Api-Key': key }, json });

  /** Every table of the database, and how many of its rows hold the e-mail (in any case, in any column). */
  async function tablesHolding(): Promise<Record<string, number>> {
    const tables = await pool.anyFirst(sql.type(z.object({ table_name: z.string() }))`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`);
    const found: Record<string, number> = {};
    for (const table of tables) {
      const n = await pool.oneFirst(sql.type(count)`
        SELECT count(*)::int AS n FROM ${sql.identifier([table])} t WHERE position(${needle} in lower(t::text)) > 0`);
      if (n > 0) found[table] = n;
    }
    return found;
  }

  /**
   * The workflows whose history, decoded, holds the e-mail: every run started since the test began
   * (as visibility lists them), and the latest runs of `known` (read by id, whatever visibility shows).
   */
  async function historiesHolding(known: readonly string[]): Promise<{ scanned: string[]; holding: string[] }> {
    const codec = new EncryptionCodec(TEST_PAYLOAD_KEYS);
    const raw = new Client({ connection: api.temporal.connection });
    const holding: string[] = [];
    const runs = new Map<string, { workflowId: string; runId?: string }>(known.map((workflowId) => [workflowId, { workflowId }]));
    for await (const run of raw.workflow.list({ query: `StartTime > "${startedAt.toISOString()}"` }))
      runs.set(`${run.workflowId}/${run.runId}`, { workflowId: run.workflowId, runId: run.runId });
    const scanned: string[] = [];
    for (const run of runs.values()) {
      scanned.push(run.workflowId);
      const history = await raw.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      const payloads: Payload[] = [];
      const texts: string[] = [];
      const walk = (value: unknown): void => {
        if (value instanceof Uint8Array) return void texts.push(Buffer.from(value).toString('utf8'));
        if (typeof value === 'string') return void texts.push(value);
        if (Array.isArray(value)) return value.forEach(walk);
        if (value && typeof value === 'object') {
          if ('data' in value && 'metadata' in value) payloads.push(value as Payload);
          Object.values(value).forEach(walk);
        }
      };
      walk(history);
      for (const decoded of await codec.decode(payloads)) texts.push(Buffer.from(decoded.data ?? []).toString('utf8'));
      if (texts.some((t) => t.toLowerCase().includes(needle))) holding.push(run.workflowId);
    }
    return { scanned, holding };
  }

  it('plants the e-mail everywhere, erases it, and finds it nowhere; a worker killed mid-search changes nothing', async () => {
    // People and feedback: the person, a record of theirs, a record naming them, and a record of someone else.
    const person = await call('PUT', '/v3/rest/people', { email, first_name: 'Ana', last_name: 'Erase' });
    assert.equal(person.status, 201, JSON.stringify(person.body));
    const source = (await call('POST', '/v3/rest/feedback-sources', { name: 'Desk', type: 'api' })).body.id as number;
    const record = (externalId: string, text: string, personId?: number) =>
      call('POST', `/v3/rest/feedback-sources/${source}/records`, {
        external_id: externalId,
        display_ts: '2026-11-26T10:00:00Z',
        ...(personId ? { person_id: personId } : {}),
        fields: [{ category: 'content', type: 'string', name: 'text', value: text }],
      });
    assert.equal((await record('theirs', 'Slow exports', person.body.id as number)).status, 201);
    assert.equal((await record('naming', `Forwarded by ${email.toUpperCase()}`)).status, 201);
    assert.equal((await record('other', 'Someone else entirely')).status, 201);

    // A recording: a participant by e-mail (the same person), its name, its transcript, a metadata value,
    // its record's external id and an upload's file name (issue 50: identifiers too).
    const field = (await createField(pool, org.organizationId, { name: 'contact', type: 'string' })).id;
    const recording = await call('POST', '/v3/rest/recordings', {
      record: { externalId: `crm-${email}`, values: [{ fieldId: field, value: email }] },
      name: `Call with ${email}`,
      participants: [{ speaker: 0, person: { type: 'upsert', email } }],
      transcript: { utterances: [{ startSec: 0, endSec: 2, speaker: 0, text: `Write to me at ${email}.` }] },
    });
    assert.equal(recording.status, 201, JSON.stringify(recording.body));
    const upload = await call('POST', `/v3/rest/recordings/${recording.body.id as string}/uploads`, {
      fileName: `call from ${email}.wav`,
      fileSize: 1000,
    });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    // An assetUrl naming them, kept after its transfer (set here: fetching it would need a media server).
    await pool.query(sql.unsafe`
      UPDATE recordings SET asset_source_url = ${`https://media.example.com/${email}/call.wav`} WHERE id = ${recording.body.id as string}`);

    worker = await startTestWorker(pool, { taskQueue });
    // An agent conversation: a participant, its events (one revised; ids naming them too), its context, a feedback comment
    // and its signal. The integrator's ids hold the address as well: the session's, two events', the participant's company.
    const endpoint = await createTestEndpoint(pool, org.organizationId, { url: await receiver.listen(), eventTypes: null });
    const app = await createTestAgentApp(pool, org, 'support-bot');
    const ingest = (events: ReturnType<typeof userMessage>[]) =>
      api.request('/v3/rest/agent-conversations/ingest', {
        method: 'POST',
        headers: { 'X-Service-Agent-Key': app.secret },
        json: {
          agentKey: app.agentKey,
          externalSessionId: `chat-${email}`,
          status: 'open',
          context: { properties: { contact: email } },
          participants: [{ externalId: 'cust-1', email, displayName: 'Ana Erase', companyExternalId: `acct-${email}` }],
          events,
        },
      });
    const ask = `ask-${email}`;
    const reply = `reply-${email}`;
    const first = await ingest([
      userMessage(1, `My export is broken, reach me at ${email}`, { externalEventId: ask, participantExternalId: 'cust-1' }),
      assistantMessage(2, 'Sorry about that', { externalEventId: reply }),
      feedbackEvent(3, reply, 'negative', { feedback: { targetEventExternalId: reply, rating: 'negative', comment: `Call ${email}` } }),
      // What `ask-…` becomes with the address replaced is taken already: that event becomes `erased:<its id>` instead.
      userMessage(4, 'One more thing', { externalEventId: 'ask-[erased]' }),
    ]);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const revised = await ingest([
      userMessage(1, 'My export is broken (address removed)', { externalEventId: ask, revision: 2, participantExternalId: 'cust-1' }),
    ]);
    assert.equal(revised.status, 202, JSON.stringify(revised.body));
    const sessionId = first.body.sessionId as string;
    // The integrator's own session whose id is what the erased one would become: the erased one takes another.
    const squatter = await api.request('/v3/rest/agent-conversations/ingest', {
      method: 'POST',
      headers: { 'X-Service-Agent-Key': app.secret },
      json: { agentKey: app.agentKey, externalSessionId: `erased:${sessionId}`, status: 'open', events: [userMessage(1, 'Hello')] },
    });
    assert.equal(squatter.status, 202, JSON.stringify(squatter.body));
    // The session's workflow processes it (its history is searched too), then the worker stops.
    const signals = () => pool.oneFirst(sql.type(count)`SELECT count(*)::int AS n FROM agent_signals WHERE session_id = ${sessionId}`);
    assert.ok(await waitFor(async () => (await signals()) >= 2, 60_000), 'the session was processed into signals');
    await worker?.stop();
    worker = undefined;
    // The webhook sender fixes the bodies (the signal's comment holds the e-mail); the receiver echoes them.
    receiver.answer = () => 200;
    const sender = new WebhookSender({ payloadKeys: TEST_PAYLOAD_KEYS, policy: LOOPBACK_POLICY });
    await sendDue({ pool, sender }, endpoint.id);
    await sender.close();

    // A coding-agent session uploaded over MCP.
    const user = await createTestUser(pool, org.organizationId);
    await upsertCodingSession(pool, {
      organizationId: org.organizationId,
      userId: user.userId,
      title: `Pairing with ${email}`,
      format: 'normalized',
      contentHash: createHash('sha256').update(randomUUID()).digest(),
      events: [{ role: 'user', text: `ping ${email}` }],
    });
    // Many other records, so that the feedback search takes several batches: the worker dies in the middle of one.
    await pool.query(sql.unsafe`
      INSERT INTO feedback_records (organization_id, feedback_source_id, external_id, display_ts, fields)
      SELECT ${org.organizationId}, ${source}, 'bulk-' || i, now(), '[]'::jsonb FROM generate_series(1, 12000) AS i`);

    const planted = await tablesHolding();
    for (const table of [
      'people',
      'feedback_records',
      'agent_participants',
      'agent_sessions',
      'agent_events',
      'agent_event_revisions',
      'agent_signals',
      'recordings',
      'transcript_utterances',
      'metadata_values',
      'coding_sessions',
      'webhook_deliveries',
      'metadata_records',
      'media_ingestions',
    ])
      assert.ok(planted[table], `planted in ${table}: ${JSON.stringify(planted)}`);
    const personUuid = person.body.uuid as string;

    // The preview (the console lists it before the confirmation): the person, and per place what would change; it changes nothing.
    const preview = await call('GET', `/v3/rest/people/erasure-preview?email=${encodeURIComponent(email.toUpperCase())}`, undefined, admin);
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.equal(preview.body.person.personUuid, person.body.uuid);
    assert.equal(preview.body.person.email.toLowerCase(), needle);
    assert.deepEqual(Object.keys(preview.body.counts).sort(), [...ERASURE_PLACES].sort());
    assert.equal(preview.body.counts.feedback_records, 2, 'their record and the record naming them');
    assert.deepEqual(
      [preview.body.counts.agent_sessions, preview.body.counts.metadata_records, preview.body.counts.media_ingestions],
      [1, 1, 1],
      "the session's external id, the record's external id, the upload's file name",
    );
    assert.equal(preview.body.counts.agent_events, 3, 'the asking event, the reply (its id only) and the feedback on it');
    const byUuid = await call('GET', `/v3/rest/people/erasure-preview?personId=${person.body.uuid as string}`, undefined, admin);
    assert.deepEqual(byUuid.body, preview.body);
    const both = await call('GET', `/v3/rest/people/erasure-preview?personId=1&email=${encodeURIComponent(email)}`, undefined, admin);
    assert.deepEqual([both.status, both.body.errorCode], [400, 'validation_failed']);
    const nobody = await call('GET', '/v3/rest/people/erasure-preview?email=nobody%40example.com', undefined, admin);
    assert.deepEqual([nobody.status, nobody.body], [404, { message: 'Person not found.', errorCode: 'not_found', resource: 'Person' }]);
    assert.deepEqual(await tablesHolding(), planted, 'the preview changed nothing');

    // Refusals change nothing.
    const member = await call(
      'POST',
      `/v3/rest/people/${personUuid}/erase`,
      undefined,
      (await createTestKey(pool, org.organizationId, ['feedback:read', 'feedback:write'])).apiKey,
    );
    assert.deepEqual([member.status, member.body.errorCode], [403, 'insufficient_scope']);
    const other = await createTestOrg(pool);
    const foreign = await call(
      'POST',
      `/v3/rest/people/${personUuid}/erase`,
      undefined,
      (await createTestKey(pool, other.organizationId, ['admin'])).apiKey,
    );
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, { message: 'Person not found.', errorCode: 'not_found', resource: 'Person' });
    assert.equal((await call('POST', '/v3/rest/people/not-a-person/erase', undefined, admin)).status, 404);
    assert.deepEqual(await tablesHolding(), planted);

    // The erasure, with a worker that is killed while it searches the feedback records.
    child = await startWorkerProcess({ databaseUrl, taskQueue });
    const erased = await call('POST', `/v3/rest/people/${personUuid}/erase`, undefined, admin);
    assert.equal(erased.status, 202, JSON.stringify(erased.body));
    assert.equal(erased.body.status, 'running');
    assert.equal(erased.body.personUuid, personUuid);
    assert.ok(String(erased.body.requestedBy).startsWith('apiKey:'));
    assert.ok(!JSON.stringify(erased.body).toLowerCase().includes(needle), 'the answer holds no erased data');
    const erasureId = erased.body.erasureId as string;
    const people = await call('GET', `/v3/rest/people?email=${encodeURIComponent(email)}`, undefined, admin);
    assert.deepEqual(people.body.people, [], 'the person is gone from reads at the answer');

    const handle = api.temporal.client.workflow.getHandle(personErasureWorkflowId(erasureId));
    const midSearch = await waitFor(
      async () => ((await handle.describe()).raw.pendingActivities ?? []).some((a) => a.heartbeatDetails?.payloads?.length),
      60_000,
      20,
    );
    assert.ok(midSearch, 'a search reported its progress');
    await killWorkerProcess(child);
    child = undefined;
    assert.equal((await call('GET', `/v3/rest/people/erasures/${erasureId}`, undefined, admin)).body.status, 'running', 'killed mid-way');

    worker = await startTestWorker(pool, { taskQueue });
    const result = (await handle.result()) as PersonErasureResult;
    const audit = await call('GET', `/v3/rest/people/erasures/${erasureId}`, undefined, admin);
    assert.equal(audit.status, 200);
    assert.equal(audit.body.status, 'finished');
    const counts = audit.body.counts as Record<string, number>;
    assert.equal(
      counts.feedback_records,
      2,
      `their record and the record naming them, once each across the kill: ${JSON.stringify(counts)}`,
    );
    assert.equal(counts.people, 1);
    for (const place of [
      'agent_participants',
      'agent_events',
      'agent_event_revisions',
      'agent_signals',
      'transcript_utterances',
      'coding_sessions',
      'agent_sessions',
      'metadata_records',
      'media_ingestions',
    ])
      assert.ok((counts[place] ?? 0) >= 1, `${place}: ${JSON.stringify(counts)}`);
    assert.ok(Object.keys(result.counts).length >= 1, JSON.stringify(result));
    // The preview said what the erasure changed, where nothing new arrived in between.
    for (const place of [
      'feedback_records',
      'agent_participants',
      'agent_events',
      'agent_event_revisions',
      'transcript_utterances',
      'coding_sessions',
      'metadata_records',
      'media_ingestions',
    ])
      assert.equal(
        counts[place] ?? 0,
        preview.body.counts[place],
        `${place}: preview ${JSON.stringify(preview.body.counts)}, erasure ${JSON.stringify(counts)}`,
      );
    const after = await call('GET', `/v3/rest/people/erasure-preview?personId=${personUuid}`, undefined, admin);
    assert.equal(after.status, 404, 'an erased person has nothing left to preview');

    assert.deepEqual(await tablesHolding(), {}, 'no table holds the e-mail');
    // Nor does the API serve it: the recording (its record's external id, its upload), the sessions, the export.
    const read = (path: string) => call('GET', path, undefined, reader);
    const recordingRead = await read(`/v3/rest/recordings/${recording.body.id as string}`);
    assert.equal(recordingRead.status, 200);
    assert.match(recordingRead.body.record.externalId as string, /^erased:[0-9a-f-]{36}$/);
    const sessions = await read(`/v3/rest/agent-conversations/sessions?applicationId=${app.app.id}`);
    const externalIds = new Map(
      (sessions.body.sessions as { sessionId: string; externalSessionId: string }[]).map((x) => [x.sessionId, x.externalSessionId]),
    );
    assert.equal(externalIds.size, 2, JSON.stringify(sessions.body));
    assert.equal(externalIds.get(squatter.body.sessionId as string), `erased:${sessionId}`, "the integrator's own id stays");
    assert.match(externalIds.get(sessionId) ?? '', new RegExp(`^erased:${sessionId}:[0-9a-f-]{36}$`), 'the erased one took another');
    const session = await read(`/v3/rest/agent-conversations/sessions/${sessionId}`);
    assert.equal(session.status, 200);
    const eventIds = (session.body.events as { externalEventId: string }[]).map((e) => e.externalEventId);
    assert.match(eventIds[0] ?? '', /^erased:\d+$/, `the asking event: ${JSON.stringify(eventIds)}`);
    assert.deepEqual(eventIds.slice(1), ['reply-[erased]', 'e3', 'ask-[erased]']);
    assert.deepEqual(
      (session.body.participants as { companyExternalId: string | null }[]).map((p) => p.companyExternalId),
      [null],
    );
    const signalsRead = await read(`/v3/rest/signals?sessionId=${sessionId}`);
    assert.equal(signalsRead.status, 200);
    assert.ok(signalsRead.body.signals.length >= 2, JSON.stringify(signalsRead.body));
    for (const signal of signalsRead.body.signals as { eventExternalId: string }[])
      assert.equal(signal.eventExternalId, 'reply-[erased]', 'signals still name the reply');
    const uploadRead = await read(`/v3/rest/recordings/${recording.body.id as string}/uploads/${upload.body.uploadId as string}`);
    assert.equal(uploadRead.status, 200);
    const exported = await fetch(`${api.url}/v3/rest/organization/export`, { headers: { 'X-Service-Api-Key': reader } });
    assert.equal(exported.status, 200);
    const served: [string, string][] = [
      ['the recording', JSON.stringify(recordingRead.body)],
      ['the sessions', JSON.stringify(sessions.body)],
      ['the session', JSON.stringify(session.body)],
      ['the signals', JSON.stringify(signalsRead.body)],
      ['the upload', JSON.stringify(uploadRead.body)],
      ['the export', await exported.text()],
    ];
    for (const [what, text] of served) assert.ok(!text.toLowerCase().includes(needle), `${what} holds no erased address`);
    // The old identifier, sent again, names nothing: a new session.
    const anew = await api.request('/v3/rest/agent-conversations/ingest', {
      method: 'POST',
      headers: { 'X-Service-Agent-Key': app.secret },
      json: { agentKey: app.agentKey, externalSessionId: `chat-${email}`, status: 'open', events: [userMessage(1, 'Back again')] },
    });
    assert.equal(anew.status, 202, JSON.stringify(anew.body));
    assert.notEqual(anew.body.sessionId, sessionId);
    const histories = await historiesHolding([`agent-session/${sessionId}`, personErasureWorkflowId(erasureId)]);
    assert.ok(histories.scanned.length > 2, `the runs started since the test began were listed too: ${JSON.stringify(histories.scanned)}`);
    assert.deepEqual(histories.holding, [], 'no workflow history holds it, decoded');
    const left = await pool.one(sql.type(z.object({ records: z.number(), participants: z.number(), utterances: z.number() }))`
      SELECT (SELECT count(*)::int FROM feedback_records WHERE feedback_source_id = ${source}) AS records,
        (SELECT count(*)::int FROM recording_participants WHERE recording_id = ${recording.body.id as string}) AS participants,
        (SELECT count(*)::int FROM agent_participants WHERE session_id = ${sessionId}) AS utterances`);
    assert.deepEqual(left, { records: 12001, participants: 1, utterances: 1 }, 'other records stay; participants stay as tombstones');
    const tombstone = await pool.one(sql.type(z.object({ email: z.string(), first_name: z.string().nullable(), erased: z.boolean() }))`
      SELECT email, first_name, erased_at IS NOT NULL AS erased FROM people WHERE uuid = ${personUuid}`);
    assert.deepEqual(tombstone, { email: `erased+${personUuid}@erased.invalid`, first_name: null, erased: true });
    const again = await call('POST', `/v3/rest/people/${personUuid}/erase`, undefined, admin);
    assert.deepEqual([again.status, again.body.errorCode], [404, 'not_found']);
    // The address may come back: a new person, not the tombstone.
    const back = await call('PUT', '/v3/rest/people', { email });
    assert.equal(back.status, 201);
    assert.notEqual(back.body.uuid, personUuid);
  });
});
