import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { DatabasePool } from 'slonik';
import * as tus from 'tus-js-client';
import { createDatabasePool } from '../../../src/db/pool.js';
import { createUploadStore } from '../../../src/media/upload-store.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { startTestS3, type TestS3 } from '../../../harness/s3.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { writeTone } from '../../../harness/media.js';

/** The same upload flow with UPLOAD_STORE=s3, against a local S3-compatible server (multipart uploads). */
describe('direct uploads with an S3-compatible store', function () {
  this.timeout(180_000);
  let mediaDir: string;
  let s3: TestS3;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;
  let audio: Buffer;

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-uploads-s3-'));
    // About 12 MB: three 5 MiB parts, the last one short.
    const wav = path.join(mediaDir, 'long.wav');
    await writeTone(wav, { seconds: 140 });
    audio = await readFile(wav);
    s3 = await startTestS3();
    const config = testConfig({ STORAGE_DIR: mediaDir, ...s3.env });
    pool = await createDatabasePool(await createTestDatabase());
    worker = await startTestWorker(pool, { deps: { mediaDir, uploadStore: createUploadStore(config.media) } });
    api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue, ...s3.env }) });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await s3?.stop();
    await rm(mediaDir, { recursive: true, force: true });
  });

  const headers = () => ({ 'X-Service-Api-Key': org.apiKey });
  const objects = async () =>
    ((await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((o) => o.Key as string).sort();
  async function newUpload(fileSize: number) {
    const recording = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: headers(),
      json: { record: { externalId: randomUUID() } },
    });
    const recordingId = recording.body.id as string;
    const upload = await api.request(`/v3/rest/recordings/${recordingId}/uploads`, {
      method: 'POST',
      headers: headers(),
      json: { fileName: 'long.wav', fileSize },
    });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    return { recordingId, uploadId: upload.body.uploadId as string, uploadUrl: upload.body.uploadUrl as string };
  }
  const result = (recordingId: string) => api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();

  it('resumes across parts, completes the multipart upload, encodes from the bucket and deletes the object', async () => {
    const { recordingId, uploadId, uploadUrl } = await newUpload(audio.length);
    assert.ok((await objects()).includes(`${uploadId}.info`), 'the tus record is in the bucket');
    // The first client stops after one 6 MiB chunk; a second resumes from the stored offset.
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(audio, {
        uploadUrl,
        chunkSize: 6 * 1024 * 1024,
        retryDelays: [],
        onChunkComplete: () => void upload.abort().then(resolve, reject),
        onError: reject,
      });
      upload.start();
    });
    const head = await fetch(uploadUrl, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
    assert.equal(head.headers.get('upload-offset'), String(6 * 1024 * 1024));
    await new Promise<void>((resolve, reject) => {
      new tus.Upload(audio, {
        uploadUrl,
        chunkSize: 6 * 1024 * 1024,
        retryDelays: [0],
        onSuccess: () => resolve(),
        onError: reject,
      }).start();
    });
    assert.deepEqual(await result(recordingId), { phase: 'ready', errorCode: null });
    const recording = await api.request(`/v3/rest/recordings/${recordingId}`, { headers: headers() });
    assert.equal(recording.body.asset.status, 'completed');
    const media = await fetch(recording.body.asset.url as string, { headers: { range: 'bytes=0-9' } });
    assert.equal(media.status, 206);
    assert.deepEqual(
      (await objects()).filter((k) => k.startsWith(uploadId)),
      [],
      'the upload is deleted from the bucket once published',
    );
  });

  it('a cancelled upload leaves nothing in the bucket', async () => {
    const { recordingId, uploadId, uploadUrl } = await newUpload(audio.length);
    const sent = await fetch(uploadUrl, {
      method: 'PATCH',
      body: audio.subarray(0, 1000),
      headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
    });
    assert.deepEqual([sent.status, sent.headers.get('upload-offset')], [204, '1000']);
    const cancelled = await api.request(`/v3/rest/recordings/${recordingId}/uploads/${uploadId}`, { method: 'DELETE', headers: headers() });
    assert.deepEqual([cancelled.status, cancelled.body.phase], [200, 'cancelled']);
    assert.deepEqual(await result(recordingId), { phase: 'cancelled', errorCode: null });
    assert.deepEqual(
      (await objects()).filter((k) => k.startsWith(uploadId)),
      [],
    );
  });
});
