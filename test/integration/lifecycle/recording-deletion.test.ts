import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { upsertPerson } from '../../../src/db/repositories/people.js';
import { createField } from '../../../src/recordings/catalog.js';
import { reconcileMediaIngestions } from '../../../src/recordings/media.js';
import { meetingJoinIdFor } from '../../../src/recordings/meeting-joins.js';
import { LocalRecorder } from '../../../src/providers/recorder/local.js';
import { TemporalGateway } from '../../../src/temporal/gateway.js';
import { mediaIngestionWorkflowId, recordingDeletionWorkflowId } from '../../../src/temporal/ids.js';
import type { RecordingDeletionResult } from '../../../workflows/recording-deletion/contract.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_SIGNING_SECRET, testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { closeServer, listenLocal } from '../../../harness/http.js';
import { writeTone } from '../../../harness/media.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { waitFor } from '../../../harness/wait.js';
import { killWorkerProcess, loopbackMediaDeps, startTestWorker, startWorkerProcess, type TestWorker } from '../../../harness/worker.js';

const count = z.object({ n: z.number() });
const HEARTBEAT_SECONDS = 2;

/** A local recorder whose meeting lasts long enough to be deleted mid-call, and which remembers the bots told to leave. */
class WatchedRecorder extends LocalRecorder {
  readonly left: string[] = [];
  override async leave(botId: string): Promise<void> {
    this.left.push(botId);
    await super.leave(botId);
  }
}

/**
 * DELETE /v3/rest/recordings/{id} (issue 32, point 1): the rows in the request's transaction, the
 * rest (store objects, running workflows, the bot) by `recording-deletion/<id>`, also across a
 * worker killed mid-way.
 */
describe('recording deletion', function () {
  this.timeout(240_000);
  let mediaDir: string;
  let shortTone: string;
  let longTone: string;
  let server: Server;
  let pool: DatabasePool;
  let databaseUrl: string;
  let api: TestApi;
  let org: TestOrg;
  let worker: TestWorker | undefined;
  let child: ChildProcess | undefined;
  const recorder = () => new WatchedRecorder({ dir: path.join(mediaDir, 'recorder'), meetingSeconds: 600 });
  let watched: WatchedRecorder;
  const taskQueue = `recording-deletion-${randomUUID()}`;

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-recording-deletion-'));
    shortTone = path.join(mediaDir, 'short.wav');
    longTone = path.join(mediaDir, 'long.wav');
    await writeTone(shortTone, { frequency: 300, seconds: 3 });
    // Long enough that encoding takes a few seconds on this machine.
    await writeTone(longTone, { frequency: 200, seconds: 600, outputArgs: ['-ar', '48000'] });
    server = createServer((req, res) => {
      const file = req.url === '/long.wav' ? longTone : shortTone;
      void stat(file).then((s) => {
        res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': s.size });
        createReadStream(file).pipe(res);
      });
    });
    await listenLocal(server);
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({
      pool,
      config: testConfig({
        STORAGE_DIR: mediaDir,
        TEMPORAL_TASK_QUEUE: taskQueue,
        MEDIA_HEARTBEAT_TIMEOUT_SECONDS: String(HEARTBEAT_SECONDS),
        MEETING_STATUS_POLL_SECONDS: '1',
      }),
    });
    org = await createTestOrg(pool);
    watched = recorder();
    worker = await startTestWorker(pool, { taskQueue, deps: { ...loopbackMediaDeps(mediaDir), recorder: watched } });
  });
  after(async () => {
    if (child) await killWorkerProcess(child);
    await worker?.stop();
    await api?.close();
    await pool?.end();
    await closeServer(server);
    await rm(mediaDir, { recursive: true, force: true });
  });

  const key = () => ({ 'X-Service-Api-Key': org.apiKey });
  const call = (method: string, p: string, json?: unknown, headers: Record<string, string> = key()) =>
    api.request(p, { method, headers, json });
  const url = (file: 'short.wav' | 'long.wav') => `http://media.test:${(server.address() as AddressInfo).port}/${file}`;
  const rows = (table: string, column: string, id: string) =>
    pool.oneFirst(sql.type(count)`SELECT count(*)::int AS n FROM ${sql.identifier([table])} WHERE ${sql.identifier([column])} = ${id}`);
  /** Every row about the recording, table by table. */
  const leftovers = async (recordingId: string) => ({
    recordings: await rows('recordings', 'id', recordingId),
    transcript_utterances: await rows('transcript_utterances', 'recording_id', recordingId),
    recording_participants: await rows('recording_participants', 'recording_id', recordingId),
    recording_folders: await rows('recording_folders', 'recording_id', recordingId),
    metadata_records: await rows('metadata_records', 'recording_id', recordingId),
    media_ingestions: await rows('media_ingestions', 'recording_id', recordingId),
    meeting_joins: await rows('meeting_joins', 'recording_id', recordingId),
    domain_events: await rows('domain_events', 'subject_id', recordingId),
  });
  const nothingLeft = {
    recordings: 0,
    transcript_utterances: 0,
    recording_participants: 0,
    recording_folders: 0,
    metadata_records: 0,
    media_ingestions: 0,
    meeting_joins: 0,
    domain_events: 0,
  };
  /** Every file under the store for these ids (renditions, URL downloads, uploads and their tus records). */
  const storedFiles = async (ids: readonly string[]) => {
    const all = (await readdir(mediaDir, { recursive: true })).map((f) => String(f));
    return all.filter((f) => ids.some((id) => f.includes(id)));
  };
  const deletion = (recordingId: string) =>
    api.temporal.client.workflow.getHandle(recordingDeletionWorkflowId(recordingId)).result() as Promise<RecordingDeletionResult>;
  const finished = (recordingId: string) =>
    pool.maybeOneFirst(sql.type(z.object({ finished_at: z.string().nullable() }))`
      SELECT finished_at FROM recording_deletions WHERE recording_id = ${recordingId}`);
  const status = async (workflowId: string) => (await api.temporal.client.workflow.getHandle(workflowId).describe()).status.name;

  it('deletes a recording with media, transcript, participants, metadata values and events: 204, then 404; its files go', async () => {
    const field = (await createField(pool, org.organizationId, { name: 'segment', type: 'string' })).id;
    await pool.transaction((tx) => upsertPerson(tx, { organizationId: org.organizationId, email: 'ana@example.com', firstName: 'Ana' }));
    const created = await call('POST', '/v3/rest/recordings', {
      record: { externalId: randomUUID(), values: [{ fieldId: field, value: 'Enterprise' }] },
      name: 'Discovery call',
      assetUrl: url('short.wav'),
      participants: [{ speaker: 0, person: { type: 'upsert', email: 'ana@example.com' } }],
      transcript: { utterances: [{ startSec: 0, endSec: 2, speaker: 0, text: 'Hello there.' }] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    const media = await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(id)).result();
    assert.deepEqual(media, { phase: 'ready', errorCode: null });
    assert.equal((await readdir(path.join(mediaDir, 'renditions', id))).length, 1, 'a rendition is stored');
    const before = await leftovers(id);
    assert.ok(
      before.transcript_utterances === 1 && before.recording_participants === 1 && before.domain_events >= 2,
      JSON.stringify(before),
    );

    const other = await createTestOrg(pool);
    const foreign = await call('DELETE', `/v3/rest/recordings/${id}`, undefined, { 'X-Service-Api-Key': other.apiKey });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, { message: 'Recording not found.', errorCode: 'not_found', resource: 'Recording' });
    const readOnly = await createTestKey(pool, org.organizationId, ['recordings:read']);
    const refused = await call('DELETE', `/v3/rest/recordings/${id}`, undefined, { 'X-Service-Api-Key': readOnly.apiKey });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.errorCode, 'insufficient_scope');
    assert.deepEqual(await leftovers(id), before, 'a refused delete changes nothing');

    const deleted = await call('DELETE', `/v3/rest/recordings/${id}`);
    assert.equal(deleted.status, 204);
    assert.deepEqual(await leftovers(id), nothingLeft, 'the rows are gone at the answer');
    assert.equal((await call('GET', `/v3/rest/recordings/${id}`)).status, 404);
    assert.equal((await call('GET', `/v3/rest/recordings/${id}/transcript`)).status, 404);
    const again = await call('DELETE', `/v3/rest/recordings/${id}`);
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, { message: 'Recording not found.', errorCode: 'not_found', resource: 'Recording' });
    assert.equal((await call('DELETE', '/v3/rest/recordings/not-a-uuid')).status, 404);

    const result = await deletion(id);
    assert.equal(result.objectsDeleted, 1, 'the rendition');
    assert.equal(result.botLeft, null);
    assert.deepEqual(await storedFiles([id]), []);
    assert.notEqual(await finished(id), null);
    const people = await pool.oneFirst(sql.type(count)`
      SELECT count(*)::int AS n FROM people WHERE organization_id = ${org.organizationId} AND email = 'ana@example.com'`);
    assert.equal(people, 1, 'a participant is a person of the organization: deleting a recording does not erase them');
  });

  it('a direct upload under way: its bytes and tus record go, a later PATCH is 404, its workflow is terminated', async () => {
    const created = await call('POST', '/v3/rest/recordings', { record: { externalId: randomUUID() } });
    const id = created.body.id as string;
    const data = await readFile(shortTone);
    const upload = await call('POST', `/v3/rest/recordings/${id}/uploads`, { fileName: 'short.wav', fileSize: data.length });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    const uploadId = upload.body.uploadId as string;
    const patch = (offset: number, bytes: Buffer) =>
      fetch(upload.body.uploadUrl as string, {
        method: 'PATCH',
        body: bytes,
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
      });
    const half = Math.floor(data.length / 2);
    assert.equal((await patch(0, data.subarray(0, half))).status, 204);
    assert.ok(existsSync(path.join(mediaDir, 'uploads', uploadId)), 'half the bytes are stored');
    assert.equal(await status(mediaIngestionWorkflowId(id)), 'RUNNING');

    assert.equal((await call('DELETE', `/v3/rest/recordings/${id}`)).status, 204);
    assert.equal((await patch(half, data.subarray(half))).status, 404, 'the upload is gone with its recording');
    const result = await deletion(id);
    assert.ok(result.objectsDeleted >= 1, JSON.stringify(result));
    // Terminated, or failed first on its own: it found its upload gone.
    assert.ok(['TERMINATED', 'FAILED'].includes(await status(mediaIngestionWorkflowId(id))));
    assert.deepEqual(await storedFiles([id, uploadId]), []);
    assert.deepEqual(await leftovers(id), nothingLeft);
  });

  it('a meeting recording mid-call: the meeting join is terminated and its bot told to leave', async () => {
    const user = await createTestUser(pool, org.organizationId);
    const joined = await call(
      'POST',
      '/v3/rest/recordings/meeting-joins',
      { type: 'meetingUrl', joinUrl: 'https://meet.google.com/del-etem-eet' },
      { Authorization: `Bearer ${user.accessToken}` },
    );
    assert.equal(joined.status, 201, JSON.stringify(joined.body));
    const id = joined.body.recordingId as string;
    const bot = async () =>
      pool.maybeOne(sql.type(z.object({ bot_id: z.string().nullable(), bot_state: z.string() }))`
        SELECT bot_id, bot_state FROM meeting_joins WHERE recording_id = ${id}`);
    assert.ok(await waitFor(async () => (await bot())?.bot_state === 'recording', 30_000), 'the bot records');
    const botId = (await bot())?.bot_id;
    assert.ok(botId);
    const meetingWorkflow = meetingJoinIdFor(TEST_SIGNING_SECRET, org.organizationId, 'google_meet:del-etem-eet');

    assert.equal((await call('DELETE', `/v3/rest/recordings/${id}`)).status, 204);
    const result = await deletion(id);
    assert.equal(result.botLeft, true);
    assert.deepEqual(watched.left, [botId]);
    assert.equal(await status(meetingWorkflow), 'TERMINATED');
    assert.deepEqual(await leftovers(id), nothingLeft);
    // The meeting can be joined again: a new recording.
    const rejoined = await call(
      'POST',
      '/v3/rest/recordings/meeting-joins',
      { type: 'meetingUrl', joinUrl: 'https://meet.google.com/del-etem-eet' },
      { Authorization: `Bearer ${user.accessToken}` },
    );
    assert.equal(rejoined.status, 201);
    assert.notEqual(rejoined.body.recordingId, id);
    assert.equal((await call('DELETE', `/v3/rest/recordings/${rejoined.body.recordingId as string}`)).status, 204);
    assert.equal((await deletion(rejoined.body.recordingId as string)).botLeft, true);
  });

  it('a deletion whose workflow never started is started by the media reconciler', async () => {
    const created = await call('POST', '/v3/rest/recordings', { record: { externalId: randomUUID() }, assetUrl: url('short.wav') });
    const id = created.body.id as string;
    await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(id)).result();
    assert.equal((await call('DELETE', `/v3/rest/recordings/${id}`)).status, 204);
    // As if the API had died between its commit and the start.
    await api.temporal.client.workflow.getHandle(recordingDeletionWorkflowId(id)).terminate('lost start (test)');
    await pool.query(sql.unsafe`UPDATE recording_deletions SET requested_at = now() - interval '1 hour' WHERE recording_id = ${id}`);
    assert.equal(await finished(id), null);
    assert.equal((await readdir(path.join(mediaDir, 'renditions', id))).length, 1, 'the rendition waits for the deletion');

    const settings = {
      taskQueue,
      mediaTaskQueue: `${taskQueue}-media`,
      transferRetryInitialSeconds: 1,
      heartbeatTimeoutSeconds: HEARTBEAT_SECONDS,
    };
    const round = await reconcileMediaIngestions(pool, TemporalGateway.of(api.temporal), settings, {
      olderThanSeconds: 300,
      limit: 100,
      after: null,
    });
    assert.equal(round.deletionsStarted, 1);
    const result = await deletion(id);
    assert.equal(result.objectsDeleted, 1);
    assert.notEqual(await finished(id), null);
    assert.deepEqual(await storedFiles([id]), []);
    const next = await reconcileMediaIngestions(pool, TemporalGateway.of(api.temporal), settings, {
      olderThanSeconds: 300,
      limit: 100,
      after: null,
    });
    assert.equal(next.deletionsStarted, 0, 'a finished job is not started again');
  });

  it('a worker killed (SIGKILL) mid-encode and mid-deletion: another finishes, and nothing is left', async () => {
    await worker?.stop();
    worker = undefined;
    // Only the worker process polls until it is killed.
    child = await startWorkerProcess({ databaseUrl, taskQueue, mediaDir });
    const created = await call('POST', '/v3/rest/recordings', { record: { externalId: randomUUID() }, assetUrl: url('long.wav') });
    assert.equal(created.status, 201);
    const id = created.body.id as string;
    const phase = () =>
      pool.maybeOneFirst(sql.type(z.object({ phase: z.string() }))`SELECT phase FROM media_ingestions WHERE recording_id = ${id}`);
    const ingestionId = await pool.oneFirst(
      sql.type(z.object({ id: z.string() }))`SELECT id FROM media_ingestions WHERE recording_id = ${id}`,
    );
    assert.ok(await waitFor(async () => (await phase()) === 'encoding', 120_000, 20), 'the encode started');
    assert.equal((await storedFiles([ingestionId])).length, 1, 'the download waits in the store for the encode');

    assert.equal((await call('DELETE', `/v3/rest/recordings/${id}`)).status, 204);
    // Mid-deletion: the media ingestion is stopped and the store searched once; the workflow waits to search again.
    const handle = api.temporal.client.workflow.getHandle(recordingDeletionWorkflowId(id));
    const waiting = await waitFor(
      async () => (await handle.fetchHistory()).events?.some((e) => e.timerStartedEventAttributes) ?? false,
      60_000,
      50,
    );
    assert.ok(waiting, 'the deletion reached its wait');
    await killWorkerProcess(child);
    child = undefined;
    assert.equal(await finished(id), null, 'killed before the deletion finished');

    watched = recorder();
    worker = await startTestWorker(pool, { taskQueue, deps: { ...loopbackMediaDeps(mediaDir), recorder: watched } });
    const result = await handle.result();
    assert.ok(result.rounds >= 2, JSON.stringify(result));
    assert.equal(await status(mediaIngestionWorkflowId(id)), 'TERMINATED');
    assert.notEqual(await finished(id), null);
    assert.deepEqual(await leftovers(id), nothingLeft);
    assert.deepEqual(await storedFiles([id, ingestionId]), [], 'no rendition, download or scratch copy');
  });
});
