import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createReadStream, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { waitFor } from '../../../harness/wait.js';
import { killWorkerProcess, loopbackMediaDeps, startTestWorker, startWorkerProcess, type TestWorker } from '../../../harness/worker.js';
import { listenLocal, closeServer } from '../../../harness/http.js';
import { writeTone } from '../../../harness/media.js';

/** A worker killed (SIGKILL) in the middle of encoding: another finishes; one rendition, one `ready`. */
describe('media ingestion: a worker killed mid-encode', function () {
  this.timeout(240_000);
  let mediaDir: string;
  let source: string;
  let server: Server;
  let pool: DatabasePool;
  let databaseUrl: string;
  let api: TestApi;
  let org: TestOrg;
  let child: ChildProcess | undefined;
  let replacement: TestWorker | undefined;
  const taskQueue = `media-crash-${randomUUID()}`;

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-media-crash-'));
    source = path.join(mediaDir, 'long.wav');
    // Long enough that encoding takes a few seconds on this machine.
    await writeTone(source, { frequency: 200, seconds: 600, outputArgs: ['-ar', '48000'] });
    const size = (await stat(source)).size;
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': size });
      createReadStream(source).pipe(res);
    });
    await listenLocal(server);
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({
      pool,
      config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: taskQueue, MEDIA_HEARTBEAT_TIMEOUT_SECONDS: '3' }),
    });
    org = await createTestOrg(pool);
  });
  after(async () => {
    if (child) await killWorkerProcess(child);
    await replacement?.stop();
    await api?.close();
    await pool?.end();
    await closeServer(server);
    await rm(mediaDir, { recursive: true, force: true });
  });

  const ingestion = (recordingId: string) =>
    pool.maybeOne(sql.type(z.object({ id: z.string(), phase: z.string(), encode_progress: z.number().nullable() }))`
    SELECT id, phase, encode_progress FROM media_ingestions WHERE recording_id = ${recordingId}`);

  it('restarts the encode on another worker and publishes one rendition', async () => {
    child = await startWorkerProcess({ databaseUrl, taskQueue, mediaDir });
    const port = (server.address() as AddressInfo).port;
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/long.wav` },
    });
    assert.equal(created.status, 201);
    const recordingId = created.body.id as string;
    const encoding = await waitFor(async () => (await ingestion(recordingId))?.phase === 'encoding', 120_000, 20);
    assert.ok(encoding, 'the encode started');
    await killWorkerProcess(child);
    child = undefined;
    const atKill = await ingestion(recordingId);
    assert.equal(atKill?.phase, 'encoding', 'killed mid-encode');
    replacement = await startTestWorker(pool, {
      taskQueue,
      deps: loopbackMediaDeps(mediaDir),
    });
    const result = await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();
    assert.deepEqual(result, { phase: 'ready', errorCode: null });
    const done = await ingestion(recordingId);
    assert.equal(done?.phase, 'ready');
    assert.deepEqual(await readdir(path.join(mediaDir, 'renditions', recordingId)), [`${done.id}.m4a`], 'one rendition, no partial left');
    const rows = await pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM media_ingestions WHERE recording_id = ${recordingId}`,
    );
    assert.equal(rows, 1);
    const recording = await api.request(`/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.equal(recording.body.asset.status, 'completed');
  });

  it('a direct upload: the encode restarts from the stored upload, which is kept until the rendition is published', async () => {
    // Only the worker process polls until it is killed.
    await replacement?.stop();
    replacement = undefined;
    child = await startWorkerProcess({ databaseUrl, taskQueue, mediaDir });
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() } },
    });
    const recordingId = created.body.id as string;
    const data = await readFile(source);
    const upload = await api.request(`/v3/rest/recordings/${recordingId}/uploads`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { fileName: 'long.wav', fileSize: data.length },
    });
    assert.equal(upload.status, 201);
    const put = await fetch(upload.body.uploadUrl as string, {
      method: 'PATCH',
      body: data,
      headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
    });
    assert.equal(put.status, 204);
    assert.ok(await waitFor(async () => (await ingestion(recordingId))?.phase === 'encoding', 120_000, 20), 'the encode started');
    await killWorkerProcess(child);
    child = undefined;
    assert.equal((await ingestion(recordingId))?.phase, 'encoding', 'killed mid-encode');
    replacement = await startTestWorker(pool, { taskQueue, deps: loopbackMediaDeps(mediaDir) });
    assert.ok(existsSync(path.join(mediaDir, 'uploads', upload.body.uploadId as string)), 'the upload is still there for the restart');
    const result = await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();
    assert.deepEqual(result, { phase: 'ready', errorCode: null });
    assert.deepEqual(
      await readdir(path.join(mediaDir, 'renditions', recordingId)),
      [`${upload.body.uploadId as string}.m4a`],
      'one rendition, no partial left',
    );
    assert.equal(existsSync(path.join(mediaDir, 'uploads', upload.body.uploadId as string)), false, 'the upload is deleted once published');
  });
});
