import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { listEvents, type DomainEventRow } from '../../../src/db/repositories/domain-events.js';
import { findIngestion } from '../../../src/db/repositories/media-ingestions.js';
import { FileUploadStore, uploadsDirectory } from '../../../src/media/upload-store.js';
import { LocalRecorder } from '../../../src/providers/recorder/index.js';
import { OpenAiTranscriber } from '../../../src/providers/transcriber/index.js';
import { meetingJoinIdFor } from '../../../src/recordings/meeting-joins.js';
import { createMeetingRecording, failMeeting, handOffMedia, type MeetingBotDeps } from '../../../src/recordings/meeting-bots.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import type { MeetingJoinInput, MeetingJoinResult } from '../../../workflows/meeting-join/contract.js';
import type { MediaIngestionResult } from '../../../workflows/media-ingestion/contract.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_SIGNING_SECRET, testConfig } from '../../../harness/config.js';
import { createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { closeServer, listenLocal } from '../../../harness/http.js';
import { writeTone } from '../../../harness/media.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { loopbackMediaDeps, startTestWorker, type TestWorker } from '../../../harness/worker.js';

/**
 * The event seam's recording and meeting-join events on the real stack: each is in the outbox
 * exactly when its change committed, once, with the payload an integrator will get.
 */
describe('domain events: media, transcripts and meeting joins', function () {
  this.timeout(180_000);
  let dir: string;
  let media: Server;
  let mediaPort: number;
  let transcription: Server;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;
  let recorder: LocalRecorder;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-domain-events-'));
    const wav = path.join(dir, 'tone.wav');
    await writeTone(wav, { frequency: 440, seconds: 3 });
    const tone = await readFile(wav);
    media = createServer((req, res) => {
      if (req.url === '/tone.wav') return void res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': tone.length }).end(tone);
      if (req.url === '/page.html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
      res.writeHead(404).end();
    });
    transcription = createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ segments: [{ start: 0, end: 1.5, text: 'A tone.', speaker: 'A' }] })),
      );
    });
    mediaPort = await listenLocal(media);
    const transcriptionPort = await listenLocal(transcription);
    pool = await createDatabasePool(await createTestDatabase());
    recorder = new LocalRecorder({ dir: path.join(dir, 'recorder'), meetingSeconds: 2 });
    worker = await startTestWorker(pool, {
      deps: {
        ...loopbackMediaDeps(dir),
        recorder,
        transcriber: new OpenAiTranscriber({ baseUrl: `http://127.0.0.1:${transcriptionPort}/v1`, model: 'whisper-1', timeoutMs: 10_000 }),
      },
    });
    api = await startTestApi({
      pool,
      config: testConfig({ STORAGE_DIR: dir, TEMPORAL_TASK_QUEUE: worker.taskQueue, MEETING_STATUS_POLL_SECONDS: '1' }),
    });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await closeServer(media);
    await closeServer(transcription);
    await rm(dir, { recursive: true, force: true });
  });

  /** The organization's events about one recording, as [type, payload]. */
  const eventsOf = async (recordingId: string) =>
    (await listEvents(pool, org.organizationId))
      .filter((e: DomainEventRow) => e.subject_id === recordingId)
      .map((e: DomainEventRow) => [e.type, e.payload] as const);

  async function createWithUrl(assetUrl: string): Promise<{ recordingId: string; result: MediaIngestionResult }> {
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() }, assetUrl },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const recordingId = created.body.id as string;
    const result = (await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result()) as MediaIngestionResult;
    return { recordingId, result };
  }

  it('URL media that is published: recording.media_ready, then recording.transcript_completed (automatic)', async () => {
    const { recordingId, result } = await createWithUrl(`http://media.test:${mediaPort}/tone.wav`);
    assert.deepEqual(result, { phase: 'ready', errorCode: null });
    const ingestion = await pool.oneFirst(
      sql.type(z.object({ id: z.string() }))`SELECT id FROM media_ingestions WHERE recording_id = ${recordingId}`,
    );
    assert.deepEqual(await eventsOf(recordingId), [
      ['recording.media_ready', { recordingId, ingestionId: ingestion }],
      ['recording.transcript_completed', { recordingId, source: 'automatic' }],
    ]);
  });

  it('URL media that fails: recording.media_failed with the asset errorCode, nothing else', async () => {
    const { recordingId, result } = await createWithUrl(`http://media.test:${mediaPort}/page.html`);
    assert.deepEqual(result, { phase: 'failed', errorCode: 'asset_unsupported_content_type' });
    const events = await eventsOf(recordingId);
    assert.equal(events.length, 1, JSON.stringify(events));
    const [type, payload] = events[0] ?? [];
    assert.equal(type, 'recording.media_failed');
    assert.deepEqual(payload && { ...payload, ingestionId: typeof payload.ingestionId }, {
      recordingId,
      ingestionId: 'string',
      errorCode: 'asset_unsupported_content_type',
    });
    const ingestion = await findIngestion(pool, payload?.ingestionId as string);
    assert.deepEqual([ingestion?.recording_id, ingestion?.phase], [recordingId, 'failed']);
  });

  it('a transcript supplied with the create: recording.transcript_completed (api) with the recording; a refused create records nothing', async () => {
    const externalId = randomUUID();
    const body = { record: { externalId }, transcript: { utterances: [{ startSec: 0, endSec: 1, speaker: 0, text: 'Hello.' }] } };
    const created = await api.request('/v3/rest/recordings', { method: 'POST', headers: { 'X-Service-Api-Key': org.apiKey }, json: body });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const recordingId = created.body.id as string;
    assert.deepEqual(await eventsOf(recordingId), [['recording.transcript_completed', { recordingId, source: 'api' }]]);
    const before = (await listEvents(pool, org.organizationId)).length;
    // The same external id again: 409, and the rolled-back create left no event behind.
    const again = await api.request('/v3/rest/recordings', { method: 'POST', headers: { 'X-Service-Api-Key': org.apiKey }, json: body });
    assert.equal(again.status, 409);
    assert.equal((await listEvents(pool, org.organizationId)).length, before);
  });

  it('a meeting whose bot is done: meeting_join.ended (done) with the hand-off, then the media and transcript events', async () => {
    const user = await createTestUser(pool, org.organizationId);
    const joined = await api.request('/v3/rest/recordings/meeting-joins', {
      method: 'POST',
      headers: { Authorization: `Bearer ${user.accessToken}` },
      json: { type: 'meetingUrl', joinUrl: 'https://meet.google.com/evt-abcd-efg' },
    });
    assert.equal(joined.status, 201, JSON.stringify(joined.body));
    const recordingId = joined.body.recordingId as string;
    const meeting = api.temporal.client.workflow.getHandle(
      meetingJoinIdFor(TEST_SIGNING_SECRET, org.organizationId, 'google_meet:evt-abcd-efg'),
    );
    assert.deepEqual(await meeting.result(), { state: 'done', reason: null } satisfies MeetingJoinResult);
    assert.deepEqual(await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result(), {
      phase: 'ready',
      errorCode: null,
    });
    const events = await eventsOf(recordingId);
    assert.deepEqual(
      events.map(([type]) => type),
      ['meeting_join.ended', 'recording.media_ready', 'recording.transcript_completed'],
    );
    assert.deepEqual(events[0]?.[1], { recordingId, botState: 'done', reason: null });
    assert.deepEqual(events[2]?.[1], { recordingId, source: 'automatic' });
  });

  describe('the meeting steps, called as a retrying worker calls them', () => {
    let deps: MeetingBotDeps;
    let userId: string;
    const input = (recordingId: string): MeetingJoinInput => ({
      version: 1,
      organizationId: org.organizationId,
      userId,
      recordingId,
      platform: 'zoom',
      meetingIdentity: `zoom:${Date.now()}`,
      joinUrl: 'https://zoom.us/j/84211234567',
      botName: 'Bot',
      pollSeconds: 1,
      maxHours: 1,
    });
    before(async () => {
      userId = (await createTestUser(pool, org.organizationId)).userId;
      deps = { pool, recorder, uploadStore: new FileUploadStore(uploadsDirectory(dir)) };
    });

    it('a bot that failed: meeting_join.ended (failed, with the reason) and recording.media_failed (recorder_failed), once', async () => {
      const recordingId = randomUUID();
      await createMeetingRecording(deps, input(recordingId));
      await failMeeting(deps, recordingId, 'waiting_room_timeout');
      await failMeeting(deps, recordingId, 'waiting_room_timeout');
      assert.deepEqual(await eventsOf(recordingId), [
        ['meeting_join.ended', { recordingId, botState: 'failed', reason: 'waiting_room_timeout' }],
        ['recording.media_failed', { recordingId, ingestionId: null, errorCode: 'recorder_failed' }],
      ]);
    });

    it('the hand-off is one transaction and a retry finds its ingestion: one meeting_join.ended', async () => {
      const recordingId = randomUUID();
      await createMeetingRecording(deps, input(recordingId));
      const first = await handOffMedia(deps, recordingId, { kind: 'url', url: 'https://recorder.example/media.mp4' });
      const retry = await handOffMedia(deps, recordingId, { kind: 'url', url: 'https://recorder.example/media.mp4' });
      assert.deepEqual(retry, first);
      assert.equal(first.kind, 'url');
      assert.deepEqual(await eventsOf(recordingId), [['meeting_join.ended', { recordingId, botState: 'done', reason: null }]]);
      const ingestion = await findIngestion(pool, first.ingestionId);
      assert.deepEqual([ingestion?.recording_id, ingestion?.kind], [recordingId, 'url']);
      // A recording that does not exist: nothing is written, not even the join's end.
      const missing = randomUUID();
      await assert.rejects(handOffMedia(deps, missing, { kind: 'url', url: 'https://recorder.example/media.mp4' }));
      assert.deepEqual(await eventsOf(missing), []);
    });
  });
});
