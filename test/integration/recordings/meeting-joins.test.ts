import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { freePort } from '../../../src/dev/net.js';
import { LocalRecorder, RecallRecorder, RecorderError } from '../../../src/providers/recorder/index.js';
import { OpenAiTranscriber } from '../../../src/providers/transcriber/index.js';
import { STATUS } from '../../../src/temporal/search-attributes.js';
import { type MeetingJoinResult } from '../../../workflows/meeting-join/contract.js';
import { meetingJoinIdFor } from '../../../src/recordings/meeting-joins.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_SIGNING_SECRET, testConfig } from '../../../harness/config.js';
import { Client } from '@temporalio/client';
import { EncryptionCodec } from '../../../src/temporal/codec.js';
import { codecServerApp, codecServerHosts } from '../../../src/temporal/codec-server.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { LOOPBACK_POLICY, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { closeServer, listenLocal } from '../../../harness/http.js';
import { runFfmpeg } from '../../../harness/media.js';

const RECALL_KEY = 'recall-test-key-0123456789';

/** A Recall.ai-style bot API: scripted status changes per bot, failures on demand. */
function fakeRecall(mediaUrl: () => string) {
  const bots = new Map<string, { polls: number; script: { code: string; sub_code?: string }[] }>();
  const state = {
    createStatus: 201,
    createDetail: null as string | null,
    nextScript: [] as { code: string; sub_code?: string }[],
    created: 0,
    left: [] as string[],
    auth: [] as (string | undefined)[],
    keys: [] as (string | undefined)[],
  };
  // Recall's idempotency: a POST with a key seen before gets the first answer again.
  const answered = new Map<string, string>();
  const server = createServer((req, res) => {
    state.auth.push(req.headers.authorization);
    const json = (status: number, body: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const bot = /^\/api\/v1\/bot\/([^/]+)\/(leave_call\/)?$/.exec(req.url ?? '');
    if (req.method === 'POST' && req.url === '/api/v1/bot/') {
      if (state.createStatus !== 201)
        return json(state.createStatus, { detail: state.createDetail ?? `cannot create bot (${RECALL_KEY})` });
      const key = req.headers['idempotency-key'] as string | undefined;
      state.keys.push(key);
      if (key && answered.has(key)) return json(201, { id: answered.get(key) });
      const id = randomUUID();
      if (key) answered.set(key, id);
      state.created += 1;
      bots.set(id, { polls: 0, script: state.nextScript });
      return json(201, { id });
    }
    if (bot && req.method === 'POST' && bot[2]) {
      state.left.push(bot[1] ?? '');
      return json(bots.has(bot[1] ?? '') ? 200 : 404, {});
    }
    if (bot && req.method === 'GET') {
      const b = bots.get(bot[1] ?? '');
      if (!b) return json(404, { detail: 'not found' });
      b.polls += 1;
      const changes = b.script.slice(0, Math.min(b.polls, b.script.length));
      const done = changes.at(-1)?.code === 'done';
      return json(200, {
        id: bot[1],
        status_changes: changes.map((c) => ({ ...c, created_at: new Date().toISOString() })),
        recordings: done ? [{ media_shortcuts: { video_mixed: { data: { download_url: mediaUrl() } } } }] : [],
      });
    }
    json(404, {});
  });
  return { server, state };
}

/** `POST /v3/rest/recordings/meeting-joins` on the real stack: the local recorder and a Recall-style API. */
describe('meeting joins', function () {
  this.timeout(180_000);
  let dir: string;
  let pool: DatabasePool;
  let org: TestOrg;
  let user: { userId: string; accessToken: string };
  let media: Server;
  let transcription: Server;
  let recall: ReturnType<typeof fakeRecall>;
  let local: { worker: TestWorker; api: TestApi };
  let viaRecall: { worker: TestWorker; api: TestApi };

  const port = (s: Server) => (s.address() as AddressInfo).port;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-meetings-'));
    const wav = path.join(dir, 'meeting.wav');
    await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=duration=4', wav]);
    const audio = await readFile(wav);
    media = createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': audio.length }).end(audio));
    transcription = createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            segments: [
              { start: 0, end: 1.5, text: 'Welcome to the call.', speaker: 'A' },
              { start: 1.6, end: 3, text: 'Thanks for having me.', speaker: 'B' },
            ],
          }),
        ),
      );
    });
    recall = fakeRecall(() => `http://media.test:${port(media)}/recording.wav`);
    await Promise.all([listenLocal(media), listenLocal(transcription), listenLocal(recall.server)]);
    pool = await createDatabasePool(await createTestDatabase());
    const transcriber = new OpenAiTranscriber({
      baseUrl: `http://127.0.0.1:${port(transcription)}/v1`,
      model: 'whisper-1',
      timeoutMs: 10_000,
    });
    const mediaDeps = {
      mediaDir: dir,
      resolver: async () => [{ address: '127.0.0.1', family: 4 as const }],
      addressPolicy: LOOPBACK_POLICY,
      transcriber,
    };
    const env = { STORAGE_DIR: dir, MEETING_STATUS_POLL_SECONDS: '1' };
    const localWorker = await startTestWorker(pool, {
      deps: { ...mediaDeps, recorder: new LocalRecorder({ dir: path.join(dir, 'recorder'), meetingSeconds: 2 }) },
    });
    local = {
      worker: localWorker,
      api: await startTestApi({ pool, config: testConfig({ ...env, TEMPORAL_TASK_QUEUE: localWorker.taskQueue }) }),
    };
    const recallWorker = await startTestWorker(pool, {
      deps: {
        ...mediaDeps,
        recorder: new RecallRecorder({ baseUrl: `http://127.0.0.1:${port(recall.server)}`, apiKey: RECALL_KEY, timeoutMs: 5000 }),
      },
    });
    viaRecall = {
      worker: recallWorker,
      api: await startTestApi({ pool, config: testConfig({ ...env, TEMPORAL_TASK_QUEUE: recallWorker.taskQueue }) }),
    };
    org = await createTestOrg(pool);
    user = await createTestUser(pool, org.organizationId);
  });
  after(async () => {
    for (const side of [local, viaRecall]) {
      await side?.api.close();
      await side?.worker.stop();
    }
    await pool?.end();
    for (const s of [media, transcription, recall?.server]) {
      await closeServer(s);
    }
    await rm(dir, { recursive: true, force: true });
  });

  const bearer = (token = user.accessToken) => ({ Authorization: `Bearer ${token}` });
  const join = (api: TestApi, json: unknown, headers: Record<string, string> = bearer()) =>
    api.request('/v3/rest/recordings/meeting-joins', { method: 'POST', headers, json });
  const meetingResult = (api: TestApi, identity: string) =>
    api.temporal.client.workflow
      .getHandle(meetingJoinIdFor(TEST_SIGNING_SECRET, org.organizationId, identity))
      .result() as Promise<MeetingJoinResult>;
  const recording = async (api: TestApi, id: string) =>
    (await api.request(`/v3/rest/recordings/${id}`, { headers: { 'X-Service-Api-Key': org.apiKey } })).body;
  const meetingRecordings = (identity: string) =>
    pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM meeting_joins WHERE organization_id = ${org.organizationId} AND meeting_identity = ${identity}`);

  it('the local recorder: 201 at once, then a playable recording with an automatic transcript', async () => {
    const res = await join(local.api, { type: 'meetingUrl', joinUrl: 'https://meet.google.com/abc-defg-hij' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['recordingId']);
    const recordingId = res.body.recordingId as string;
    const first = await recording(local.api, recordingId);
    assert.equal(first.asset.status, 'waiting');
    assert.deepEqual(await meetingResult(local.api, 'google_meet:abc-defg-hij'), { state: 'done', reason: null });
    assert.deepEqual(await local.api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result(), {
      phase: 'ready',
      errorCode: null,
    });
    const done = await recording(local.api, recordingId);
    assert.equal(done.asset.status, 'completed');
    assert.equal((await fetch(done.asset.url as string, { headers: { range: 'bytes=0-9' } })).status, 206);
    assert.deepEqual(done.transcript, { status: 'completed', source: 'automatic' });
    const transcript = await local.api.request(`/v3/rest/recordings/${recordingId}/transcript?type=monologue`, {
      headers: { 'X-Service-Api-Key': org.apiKey },
    });
    assert.deepEqual(
      transcript.body.monologues.map((m: { speaker: number; text: string }) => [m.speaker, m.text]),
      [
        [0, 'Welcome to the call.'],
        [1, 'Thanks for having me.'],
      ],
    );
    const described = await local.api.temporal.client.workflow
      .getHandle(meetingJoinIdFor(TEST_SIGNING_SECRET, org.organizationId, 'google_meet:abc-defg-hij'))
      .describe();
    assert.equal(described.typedSearchAttributes.get(STATUS), 'done');
    const row = await pool.one(sql.type(z.object({ bot_state: z.string(), recorder: z.string(), user_id: z.string().nullable() }))`
      SELECT bot_state, recorder, user_id FROM meeting_joins WHERE recording_id = ${recordingId}`);
    assert.deepEqual(row, { bot_state: 'done', recorder: 'local', user_id: user.userId });
  });

  it('concurrent requests for one meeting (different spellings) share one recording while it is active', async () => {
    const spellings = [
      'https://zoom.us/j/84211234567',
      'https://us02web.zoom.us/j/84211234567?pwd=abc',
      'https://ACME.zoom.us/j/84211234567/?utm_source=x',
      'https://zoom.us/j/84211234567#success',
      'https://zoom.us/j/84211234567?pwd=abc&from=addon',
    ];
    const answers = await Promise.all(spellings.map((joinUrl) => join(local.api, { type: 'meetingUrl', joinUrl })));
    assert.deepEqual(
      answers.map((a) => a.status),
      [201, 201, 201, 201, 201],
    );
    assert.equal(new Set(answers.map((a) => a.body.recordingId as string)).size, 1, JSON.stringify(answers.map((a) => a.body)));
    assert.equal(await meetingRecordings('zoom:84211234567'), 1);
    // Once that recording is no longer active, the same meeting gets a new one.
    await meetingResult(local.api, 'zoom:84211234567');
    const later = await join(local.api, { type: 'meetingUrl', joinUrl: 'https://zoom.us/j/84211234567' });
    assert.equal(later.status, 201);
    assert.notEqual(later.body.recordingId, answers[0]?.body.recordingId);
    await meetingResult(local.api, 'zoom:84211234567');
  });

  it('errors: 400 shape, 401, 403 for an API key, 404 unresolvable user, 409 unsupported URL, 401 not allowed to record', async () => {
    const url = 'https://meet.google.com/xyz-abcd-efg';
    for (const body of [
      { joinUrl: url },
      { type: 'url', joinUrl: url },
      { type: 'meetingUrl', joinUrl: '  ' },
      { type: 'meetingUrl' },
      { type: 'meetingUrl', joinUrl: url, extra: 1 },
      [url],
    ]) {
      const res = await join(local.api, body);
      assert.deepEqual([res.status, res.body.errorCode], [400, 'validation_failed'], JSON.stringify(body));
    }
    const none = await join(local.api, { type: 'meetingUrl', joinUrl: url }, {});
    assert.deepEqual([none.status, none.body.errorCode], [401, 'unauthenticated']);
    const invalid = await join(local.api, { type: 'meetingUrl', joinUrl: url }, bearer('not-a-token'));
    assert.deepEqual([invalid.status, invalid.body.errorCode], [401, 'invalid_credentials']);
    const key = await createTestKey(pool, org.organizationId, ['recordings:write']);
    const apiKey = await join(local.api, { type: 'meetingUrl', joinUrl: url }, { 'X-Service-Api-Key': key.apiKey });
    assert.deepEqual([apiKey.status, apiKey.body.errorCode], [403, 'principal_not_allowed']);
    const gone = await createTestUser(pool, org.organizationId);
    await pool.query(sql.unsafe`DELETE FROM users WHERE id = ${gone.userId}`);
    const unresolvable = await join(local.api, { type: 'meetingUrl', joinUrl: url }, bearer(gone.accessToken));
    assert.deepEqual([unresolvable.status, unresolvable.body.errorCode, unresolvable.body.message], [404, 'not_found', 'User not found.']);
    const unsupported = await join(local.api, { type: 'meetingUrl', joinUrl: 'https://whereby.com/team-room' });
    assert.deepEqual([unsupported.status, unsupported.body.errorCode], [409, 'meeting_url_not_supported']);
    const noRecording = await createTestOrg(pool, { recordingAllowed: false });
    const theirUser = await createTestUser(pool, noRecording.organizationId);
    const notAllowed = await join(local.api, { type: 'meetingUrl', joinUrl: url }, bearer(theirUser.accessToken));
    assert.deepEqual([notAllowed.status, notAllowed.body.errorCode], [401, 'recording_not_allowed']);
    assert.equal(await meetingRecordings('google_meet:xyz-abcd-efg'), 0, 'no error stored anything');
  });

  it('a recorder that cannot create the bot: 502, nothing left behind; a later request succeeds', async () => {
    const url = 'https://teams.live.com/meet/9398850720211?p=secret';
    recall.state.createStatus = 400;
    const refused = await join(viaRecall.api, { type: 'meetingUrl', joinUrl: url });
    assert.deepEqual([refused.status, refused.body.errorCode], [502, 'recorder_failed']);
    assert.equal(JSON.stringify(refused.body).includes(RECALL_KEY), false, 'the provider key never reaches the caller');
    assert.deepEqual(await meetingResult(viaRecall.api, 'microsoft_teams:meet/9398850720211'), {
      state: 'bot_not_created',
      reason: `Recorder provider answered HTTP 400: {"detail":"cannot create bot ([redacted])"}`,
    });
    assert.equal(await meetingRecordings('microsoft_teams:meet/9398850720211'), 0);
    recall.state.createStatus = 201;
    recall.state.nextScript = [
      { code: 'joining_call' },
      { code: 'in_waiting_room' },
      { code: 'in_call_recording' },
      { code: 'call_ended' },
      { code: 'done' },
    ];
    const accepted = await join(viaRecall.api, { type: 'meetingUrl', joinUrl: url });
    assert.equal(accepted.status, 201);
    assert.deepEqual(await meetingResult(viaRecall.api, 'microsoft_teams:meet/9398850720211'), { state: 'done', reason: null });
    await viaRecall.api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(accepted.body.recordingId as string)).result();
    const done = await recording(viaRecall.api, accepted.body.recordingId as string);
    assert.deepEqual([done.asset.status, done.transcript.status], ['completed', 'completed']);
    assert.ok(recall.state.auth.every((a) => a === `Token ${RECALL_KEY}`));
    // The presigned download URL was asked of the recorder when the transfer ran, never stored.
    const stored = await pool.oneFirst(sql.type(z.object({ asset_source_url: z.string().nullable() }))`
      SELECT asset_source_url FROM recordings WHERE id = ${accepted.body.recordingId as string}`);
    assert.equal(stored, null);
  });

  it('a bot that fails in the meeting: the recording says so, with the reason kept', async () => {
    recall.state.nextScript = [{ code: 'joining_call' }, { code: 'in_waiting_room' }, { code: 'fatal', sub_code: 'waiting_room_timeout' }];
    const res = await join(viaRecall.api, { type: 'meetingUrl', joinUrl: 'https://acme.webex.com/meet/jane.doe' });
    assert.equal(res.status, 201);
    assert.deepEqual(await meetingResult(viaRecall.api, 'webex:acme/jane.doe'), { state: 'failed', reason: 'waiting_room_timeout' });
    const failed = await recording(viaRecall.api, res.body.recordingId as string);
    assert.deepEqual([failed.asset.status, failed.asset.errorCode, failed.transcript.status], ['failed', 'recorder_failed', 'failed']);
    const row = await pool.one(sql.type(z.object({ bot_state: z.string(), bot_reason: z.string().nullable() }))`
      SELECT bot_state, bot_reason FROM meeting_joins WHERE recording_id = ${res.body.recordingId as string}`);
    assert.deepEqual(row, { bot_state: 'failed', bot_reason: 'waiting_room_timeout' });
  });

  it('the Recall adapter reads failures: 401 permanent, 429 and 5xx retryable, leaving a gone bot is fine', async () => {
    const adapter = (status: number) =>
      new RecallRecorder({
        baseUrl: 'http://127.0.0.1:1',
        apiKey: RECALL_KEY,
        timeoutMs: 2000,
        fetch: async () => new Response(JSON.stringify({ detail: `no (${RECALL_KEY})` }), { status }),
      });
    const meeting = { joinUrl: 'https://zoom.us/j/84211234567', platform: 'zoom' as const, botName: 'Bot' };
    for (const [status, code, retryable] of [
      [401, 'provider_unauthorized', false],
      [429, 'provider_unavailable', true],
      [503, 'provider_unavailable', true],
      [400, 'provider_rejected', false],
    ] as const) {
      const error = await adapter(status)
        .createBot(meeting)
        .then(
          () => null,
          (e: unknown) => e,
        );
      assert.ok(error instanceof RecorderError);
      assert.deepEqual([error.code, error.retryable, error.message.includes(RECALL_KEY)], [code, retryable, false], String(status));
    }
    await adapter(404).leave('gone');
    const unreachable = await new RecallRecorder({ baseUrl: 'http://127.0.0.1:9', apiKey: RECALL_KEY, timeoutMs: 2000 })
      .botStatus('x')
      .then(
        () => null,
        (e: unknown) => e,
      );
    assert.ok(unreachable instanceof RecorderError && unreachable.code === 'provider_unreachable' && unreachable.retryable);
  });

  it('creates one bot per recording: a retried createBot with the same key gets the same bot (Recall and local)', async () => {
    const meeting = { joinUrl: 'https://zoom.us/j/84211234599', platform: 'zoom' as const, botName: 'Bot' };
    const adapter = new RecallRecorder({ baseUrl: `http://127.0.0.1:${port(recall.server)}`, apiKey: RECALL_KEY, timeoutMs: 5000 });
    const before = recall.state.created;
    const key = randomUUID();
    const first = await adapter.createBot(meeting, { idempotencyKey: key });
    const retry = await adapter.createBot(meeting, { idempotencyKey: key });
    assert.equal(retry.botId, first.botId);
    assert.equal(recall.state.created, before + 1, 'the provider made one bot');
    assert.equal(recall.state.keys.at(-1), key, 'the key travels as Idempotency-Key');
    assert.notEqual((await adapter.createBot(meeting, { idempotencyKey: randomUUID() })).botId, first.botId);

    const localRecorder = new LocalRecorder({ dir: path.join(dir, 'recorder-keys'), meetingSeconds: 2 });
    const [a, b] = await Promise.all([
      localRecorder.createBot(meeting, { idempotencyKey: key }),
      localRecorder.createBot(meeting, { idempotencyKey: key }),
    ]);
    assert.equal(a.botId, b.botId);
    // Another worker of this machine (another instance) finds it too.
    const other = new LocalRecorder({ dir: path.join(dir, 'recorder-keys'), meetingSeconds: 2 });
    assert.equal((await other.createBot(meeting, { idempotencyKey: key })).botId, a.botId);
  });

  it('keeps the meeting passcode out of Temporal: the raw history holds ciphertext, the codec server decodes it', async () => {
    const passcode = 'SuperSecretPass1';
    const res = await join(local.api, { type: 'meetingUrl', joinUrl: `https://zoom.us/j/84211234588?pwd=${passcode}` });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    await meetingResult(local.api, 'zoom:84211234588');
    const workflowId = meetingJoinIdFor(TEST_SIGNING_SECRET, org.organizationId, 'zoom:84211234588');
    // A client without the codec sees what the server stores.
    const raw = new Client({ connection: local.api.temporal.connection });
    const history = await raw.workflow.getHandle(workflowId).fetchHistory();
    const bytes = (value: unknown): Buffer[] => {
      if (value instanceof Uint8Array) return [Buffer.from(value)];
      if (Array.isArray(value)) return value.flatMap(bytes);
      if (value && typeof value === 'object') return Object.values(value).flatMap(bytes);
      return typeof value === 'string' ? [Buffer.from(value)] : [];
    };
    const stored = Buffer.concat(bytes(history));
    assert.ok(stored.length > 1000, 'the history was read');
    assert.ok(!stored.includes(passcode), 'no passcode in the raw history');
    assert.ok(stored.includes('binary/encrypted'), 'the payloads are encrypted');
    // An operator with the key decodes the workflow input with the codec server, as the Temporal UI does.
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    const codecPort = await freePort();
    const codecToken = 'the-operators-codec-token-0123456789abcdef';
    const codec = codecServerApp(new EncryptionCodec(testConfig().temporal.payloadKeys ?? []), {
      allowedOrigins: ['http://localhost:8233'],
      allowedHosts: codecServerHosts('127.0.0.1', codecPort),
      token: codecToken,
    }).listen(codecPort, '127.0.0.1');
    await once(codec, 'listening');
    try {
      const url = `http://127.0.0.1:${codecPort}/decode`;
      const body = JSON.stringify({
        payloads: input.map((p) => ({
          metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
          data: Buffer.from(p.data as Uint8Array).toString('base64'),
        })),
      });
      assert.equal(
        (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://localhost:8233' }, body }))
          .status,
        401,
        'not without the token',
      );
      const decoded = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://localhost:8233', authorization: `Bearer ${codecToken}` },
        body,
      });
      assert.equal(decoded.status, 200);
      assert.equal(decoded.headers.get('access-control-allow-origin'), 'http://localhost:8233');
      const payloads = ((await decoded.json()) as { payloads: { data: string }[] }).payloads;
      assert.match(Buffer.from(payloads[0]!.data, 'base64').toString(), new RegExp(`pwd=${passcode}`));
      const elsewhere = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
      assert.equal(elsewhere.status, 403);
      assert.equal(elsewhere.headers.get('access-control-allow-origin'), null);
    } finally {
      codec.close();
    }
  });

  it('Temporal keeps no meeting identity in clear: workflow ids hold a keyed hash, failure messages and stacks are encrypted', async () => {
    // A provider that quotes the meeting it refused (a Teams thread id lets whoever reads it join).
    const thread = '19:meeting_NzQ1ZTRhYjMtZGVhZC1iZWVmLTk5OTktMTIzNDU2Nzg5MGFi@thread.v2';
    const url = `https://teams.microsoft.com/l/meetup-join/${encodeURIComponent(thread)}/0?context=%7b%22Tid%22%3a%22t%22%7d`;
    recall.state.createStatus = 400;
    recall.state.createDetail = `cannot join ${url} (${thread})`;
    try {
      assert.equal((await join(viaRecall.api, { type: 'meetingUrl', joinUrl: url })).status, 502);
    } finally {
      recall.state.createStatus = 201;
      recall.state.createDetail = null;
    }
    const raw = new Client({ connection: viaRecall.api.temporal.connection });
    // Every meeting join of the organization as Temporal lists it (the UI's list): no code, no thread.
    const ids: string[] = [];
    for await (const w of raw.workflow.list({ query: `WorkflowType = 'meetingJoinWorkflow'` })) {
      if (w.workflowId.startsWith(`meeting-join/${org.organizationId}/`)) ids.push(w.workflowId);
    }
    assert.ok(ids.length >= 3, ids.join(' '));
    for (const id of ids) {
      assert.match(id, new RegExp(`^meeting-join/${org.organizationId}/[A-Za-z0-9_-]{22}$`));
      for (const clear of ['abc-defg-hij', '84211234588', '9398850720211', 'NzQ1ZTRhYjMtZGVhZC1iZWVm', 'thread'])
        assert.ok(!id.includes(clear), `${id} names the meeting`);
    }
    const refusedId = meetingJoinIdFor(TEST_SIGNING_SECRET, org.organizationId, `microsoft_teams:${thread}`);
    assert.ok(ids.includes(refusedId), 'the id is the keyed hash of the identity: the same meeting, the same id');
    const history = await raw.workflow.getHandle(refusedId).fetchHistory();
    const stored = JSON.stringify(history, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
    assert.ok(!stored.includes('NzQ1ZTRhYjMtZGVhZC1iZWVm'), 'no thread id in the raw history');
    // The failures Temporal keeps: the activity's and the update's, each "Encoded failure" with an encrypted payload.
    const failures: {
      message?: string | null;
      stackTrace?: string | null;
      encodedAttributes?: { metadata?: Record<string, Uint8Array> | null } | null;
    }[] = [];
    const collect = (value: unknown): void => {
      if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
      for (const [key, inner] of Object.entries(value)) {
        if ((key === 'failure' || key === 'cause') && inner && typeof inner === 'object') failures.push(inner as (typeof failures)[number]);
        collect(inner);
      }
    };
    collect(history.events);
    assert.ok(failures.length >= 1, 'the refusal left failures in the history');
    for (const f of failures) {
      assert.equal(f.message, 'Encoded failure');
      assert.ok(!f.stackTrace);
      assert.equal(Buffer.from(f.encodedAttributes?.metadata?.encoding ?? []).toString(), 'binary/encrypted');
    }
  });

  it('the workflow asks for its bot with the recording id as the key', async () => {
    recall.state.nextScript = [{ code: 'joining_call' }, { code: 'fatal', sub_code: 'meeting_not_found' }];
    const res = await join(viaRecall.api, { type: 'meetingUrl', joinUrl: 'https://zoom.us/j/84211234577' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(recall.state.keys.at(-1), res.body.recordingId);
    await meetingResult(viaRecall.api, 'zoom:84211234577');
  });
});
