import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { connectTemporalClient } from '../../../src/temporal/connection.js';
import { insertIngestion } from '../../../src/db/repositories/media-ingestions.js';
import { mediaWorkflowSettings } from '../../../src/recordings/media.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import type { MediaIngestionResult } from '../../../workflows/media-ingestion/contract.js';
import {
  MEDIA_RECONCILER_WORKFLOW,
  type MediaReconcilerInput,
  type MediaReconcilerResult,
} from '../../../workflows/media-reconciler/contract.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { closeServer, listenLocal } from '../../../harness/http.js';
import { writeTone } from '../../../harness/media.js';
import { createTestDatabase, testStack } from '../../../harness/stack.js';
import { loopbackMediaDeps, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { eventually } from '../../../harness/wait.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';

/**
 * No active ingestion without a workflow: the reconciler (a Temporal Schedule in production)
 * starts a stranded one again and fails one whose run ended mid-way, on the real stack.
 */
describe('media reconciler', function () {
  this.timeout(120_000);
  let dir: string;
  let server: Server;
  let port: number;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-reconciler-'));
    await writeTone(path.join(dir, 'tone.wav'), { seconds: 2 });
    const tone = await readFile(path.join(dir, 'tone.wav'));
    server = createServer((req, res) => {
      if (req.url === '/tone.wav') return void res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': tone.length }).end(tone);
      res.writeHead(503).end(); // always overloaded: its ingestion stays running, retrying
    });
    port = await listenLocal(server);
    pool = await createDatabasePool(await createTestDatabase());
    worker = await startTestWorker(pool, { deps: loopbackMediaDeps(dir) });
    api = await startTestApi({
      pool,
      config: testConfig({ STORAGE_DIR: dir, TEMPORAL_TASK_QUEUE: worker.taskQueue, MEDIA_TRANSFER_RETRY_INITIAL_SECONDS: '1' }),
    });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await closeServer(server);
    await rm(dir, { recursive: true, force: true });
  });

  const createRecording = async (assetUrl?: string) => {
    const res = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() }, ...(assetUrl ? { assetUrl } : {}) },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  /** The rows a create writes, committed after its workflow gave up waiting for them: no workflow runs. */
  const strand = async (recordingId: string, phase: 'waiting' | 'encoding', assetUrl: string) => {
    await pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`UPDATE recordings SET asset_source_url = ${assetUrl}, asset_status = 'queued' WHERE id = ${recordingId}`);
      const row = await insertIngestion(tx, { organizationId: org.organizationId, recordingId, kind: 'url' });
      await tx.query(sql.unsafe`UPDATE media_ingestions SET phase = ${phase} WHERE id = ${row.id}`);
    });
  };
  /** One round of the reconciler, as its schedule runs it (every ingestion older than 0 s). */
  const reconcile = async () => {
    const input: MediaReconcilerInput = { version: 1, olderThanSeconds: 0, settings: mediaWorkflowSettings(api.deps.config) };
    return (await api.temporal.client.workflow.execute(MEDIA_RECONCILER_WORKFLOW, {
      workflowId: `media-reconciler/${randomUUID()}`,
      taskQueue: worker.taskQueue,
      args: [input],
    })) as MediaReconcilerResult;
  };
  const asset = async (recordingId: string) =>
    (await api.request(`/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': org.apiKey } })).body.asset;

  it('starts a stranded ingestion again, fails an interrupted one, and leaves running ones alone', async () => {
    const stranded = await createRecording();
    await strand(stranded, 'waiting', `http://media.test:${port}/tone.wav`);
    const interrupted = await createRecording();
    await strand(interrupted, 'encoding', `http://media.test:${port}/tone.wav`);
    const busy = await createRecording(`http://media.test:${port}/overloaded.wav`);
    // A new upload for the stranded recording is refused while its ingestion is active.
    const blocked = await api.request(`/v3/rest/recordings/${stranded}/uploads`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { fileName: 'a.wav', fileSize: 10 },
    });
    assert.equal(blocked.status, 409);

    assert.deepEqual(await reconcile(), { restarted: 1, failed: 1, told: 0 });

    const restarted = (await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(stranded)).result()) as MediaIngestionResult;
    assert.deepEqual(restarted, { phase: 'ready', errorCode: null });
    assert.equal((await asset(stranded)).status, 'completed');
    assert.deepEqual(await asset(interrupted), { status: 'failed', url: null, errorCode: 'processing_interrupted' });
    const phase = await pool.oneFirst(
      sql.type(z.object({ phase: z.string() }))`SELECT phase FROM media_ingestions WHERE recording_id = ${busy}`,
    );
    assert.notEqual(phase, 'failed', 'a running ingestion is untouched');
    const described = await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(busy)).describe();
    assert.equal(described.status.name, 'RUNNING');
    // The interrupted recording takes a new upload.
    const again = await api.request(`/v3/rest/recordings/${interrupted}/uploads`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { fileName: 'a.wav', fileSize: 10 },
    });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(busy)).terminate('test over');
  });
  it('tells a running workflow whose upload finished while Temporal was unreachable, long before the upload deadline', async () => {
    // An API whose Temporal goes through a proxy: the upload's last PATCH cannot tell the workflow.
    const proxy = await TcpProxy.start(Number((await testStack()).temporal.address.split(':')[1]));
    const config = testConfig({ STORAGE_DIR: dir, TEMPORAL_TASK_QUEUE: worker.taskQueue });
    const temporal = await connectTemporalClient({ temporal: { ...config.temporal, address: `127.0.0.1:${proxy.port}` } });
    const cut = await startTestApi({ pool, config, temporal });
    try {
      const recordingId = await createRecording();
      const tone = await readFile(path.join(dir, 'tone.wav'));
      const created = await cut.request(`/v3/rest/recordings/${recordingId}/uploads`, {
        method: 'POST',
        headers: { 'X-Service-Api-Key': org.apiKey },
        json: { fileName: 'tone.wav', fileSize: tone.length },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      // The workflow has read the upload (no byte yet) and waits: its timer runs to the deadline.
      const handle = api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId));
      await eventually(
        async () => (await handle.fetchHistory()).events?.some((e) => e.timerStartedEventAttributes) ?? false,
        (waiting) => waiting,
        30_000,
      );
      await proxy.down();
      const patched = await fetch(created.body.uploadUrl as string, {
        method: 'PATCH',
        body: tone,
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      });
      assert.equal(patched.status, 204);
      assert.ok(cut.logs.join('').includes('upload finished but its workflow was not told'), 'the API says it could not tell');
      const phase = () =>
        pool.oneFirst(sql.type(z.object({ phase: z.string() }))`SELECT phase FROM media_ingestions WHERE recording_id = ${recordingId}`);
      assert.equal(await phase(), 'waiting', 'unless told, the workflow waits for the upload deadline (an hour after the last byte)');

      assert.equal((await reconcile()).told, 1);
      const done = (await handle.result()) as MediaIngestionResult;
      assert.deepEqual(done, { phase: 'ready', errorCode: null });
      assert.equal((await asset(recordingId)).status, 'completed');
    } finally {
      await cut.close();
      await temporal.connection.close();
      await proxy.down();
    }
  });
});
