import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { z } from 'zod';
import { loadConfig } from '../../../src/config.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { createMediaStore } from '../../../src/media/media-store.js';
import { mediaIngestionWorkflowId, recordingDeletionWorkflowId } from '../../../src/temporal/ids.js';
import { createUploadStore } from '../../../src/media/upload-store.js';
import type { MediaIngestionResult } from '../../../workflows/media-ingestion/contract.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { closeServer, listenLocal } from '../../../harness/http.js';
import { startTestS3, type TestS3 } from '../../../harness/s3.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { LOOPBACK_POLICY, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { writeTone } from '../../../harness/media.js';

/**
 * MEDIA_STORE=s3 on a real S3 API (moto): URL media is downloaded by one activity and stored in the
 * bucket, encoded by another from the bucket, its rendition stored in the bucket; the worker's
 * scratch directory is empty after; playback answers 302 to a presigned URL of the object, which
 * serves byte ranges.
 */
describe('media store in an S3-compatible bucket (MEDIA_STORE=s3)', function () {
  this.timeout(120_000);
  let mediaDir: string;
  let s3: TestS3;
  let server: Server;
  let port: number;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;
  let tone: Buffer;

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-media-s3-'));
    const wav = path.join(mediaDir, 'tone.wav');
    await writeTone(wav, { frequency: 330, seconds: 5 });
    tone = await readFile(wav);
    await rm(wav);
    server = createServer((req, res) => {
      if (req.url === '/tone.wav') return void res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': tone.length }).end(tone);
      res.writeHead(404).end();
    });
    port = await listenLocal(server);
    s3 = await startTestS3('intake-media');
    const env = { ...s3.env, MEDIA_STORE: 's3', STORAGE_DIR: mediaDir };
    pool = await createDatabasePool(await createTestDatabase());
    const { media } = loadConfig({ ...env, DATA_DIR: mediaDir });
    worker = await startTestWorker(pool, {
      deps: {
        mediaDir,
        addressPolicy: LOOPBACK_POLICY,
        resolver: async () => [{ address: '127.0.0.1', family: 4 }],
        mediaStore: createMediaStore(media),
        uploadStore: createUploadStore(media),
      },
    });
    api = await startTestApi({
      pool,
      config: testConfig({ ...env, TEMPORAL_TASK_QUEUE: worker.taskQueue, MEDIA_HEARTBEAT_TIMEOUT_SECONDS: '3' }),
    });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await s3?.stop();
    if (server) await closeServer(server);
    await rm(mediaDir, { recursive: true, force: true });
  });

  const keys = async () => ((await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((o) => o.Key);

  it('URL media: the download and the rendition go through the bucket, playback redirects to a presigned URL with byte ranges', async () => {
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/tone.wav` },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const recordingId = created.body.id as string;
    const result = (await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result()) as MediaIngestionResult;
    assert.deepEqual(result, { phase: 'ready', errorCode: null });
    const ingestionId = await pool.oneFirst(
      sql.type(z.object({ id: z.string() }))`SELECT id FROM media_ingestions WHERE recording_id = ${recordingId}`,
    );
    const rendition = `media/renditions/${recordingId}/${ingestionId}.m4a`;
    assert.deepEqual(await keys(), [rendition], 'the rendition is in the bucket; the download was deleted');
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: rendition }));
    assert.equal(head.ContentType, 'audio/mp4');
    // Nothing of the media stays on the worker: its scratch directory is empty, and nothing else was written.
    assert.deepEqual(await readdir(mediaDir).then((d) => d.filter((x) => x !== 'scratch')), []);
    assert.deepEqual(await readdir(path.join(mediaDir, 'scratch')), []);
    // Playback: our signed URL, then the bucket's presigned one, which serves ranges.
    const asset = (await api.request(`/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': org.apiKey } })).body.asset;
    const redirect = await fetch(asset.url as string, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    const location = redirect.headers.get('location') ?? '';
    assert.ok(location.startsWith(`${s3.endpoint}/${s3.bucket}/${rendition}?`) && location.includes('X-Amz-Signature='), location);
    const whole = await fetch(location);
    assert.equal(whole.status, 200);
    const bytes = Buffer.from(await whole.arrayBuffer());
    assert.equal(bytes.length, head.ContentLength);
    const part = await fetch(location, { headers: { range: 'bytes=0-99' } });
    assert.deepEqual([part.status, part.headers.get('content-range')], [206, `bytes 0-99/${bytes.length}`]);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(0, 100)));
    // A tampered signature is still ours to refuse.
    const bad = await fetch((asset.url as string).replace(/signature=[^&]+/, 'signature=x'), { redirect: 'manual' });
    assert.equal(bad.status, 403);
  });

  it('a deleted recording: its rendition and its direct upload leave the bucket', async () => {
    const headers = { 'X-Service-Api-Key': org.apiKey };
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers,
      json: { record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/tone.wav` },
    });
    const recordingId = created.body.id as string;
    await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();
    // A second recording with a direct upload half done: its tus object and record are in the bucket too.
    const other = await api.request('/v3/rest/recordings', { method: 'POST', headers, json: { record: { externalId: randomUUID() } } });
    const otherId = other.body.id as string;
    const upload = await api.request(`/v3/rest/recordings/${otherId}/uploads`, {
      method: 'POST',
      headers,
      json: { fileName: 'tone.wav', fileSize: tone.length },
    });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    const patched = await fetch(upload.body.uploadUrl as string, {
      method: 'PATCH',
      body: tone.subarray(0, 1000),
      headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
    });
    assert.equal(patched.status, 204);
    const mine = async (id: string) => (await keys()).filter((k) => k?.includes(id));
    assert.equal((await mine(recordingId)).length, 1, 'the rendition');
    assert.ok((await mine(upload.body.uploadId as string)).length >= 1, 'the upload');

    for (const id of [recordingId, otherId]) {
      assert.equal((await api.request(`/v3/rest/recordings/${id}`, { method: 'DELETE', headers })).status, 204);
      await api.temporal.client.workflow.getHandle(recordingDeletionWorkflowId(id)).result();
    }
    assert.deepEqual(await mine(recordingId), []);
    assert.deepEqual(await mine(upload.body.uploadId as string), []);
  });
});
