import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import type { MediaIngestionResult } from '../../../workflows/media-ingestion/contract.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { LOOPBACK_POLICY, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { waitFor } from '../../../harness/wait.js';
import { closeServer, listenLocal } from '../../../harness/http.js';
import { writeTone } from '../../../harness/media.js';
import { DEFAULT_FFMPEG_SETTINGS, FfmpegTools } from '../../../src/media/ffmpeg-tools.js';

interface Retry {
  errorCode: string;
  message: string;
  attempt: number;
  nextAttemptAt: string;
}

/**
 * Issue 31, point 4: while URL media is retried the recording tells why (assetRetry: the catalogued
 * code and message, the attempt, the next attempt's time), read from PostgreSQL; it disappears when
 * the media is ready or fails for good.
 */
describe('media ingestion: the retry status of URL media', function () {
  this.timeout(120_000);
  let mediaDir: string;
  let server: Server;
  let port: number;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;
  let tone: Buffer;
  // What the server and the resolver do, per path and host, changed by the tests.
  const answers = new Map<string, number>();
  const unresolvable = new Set<string>();

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-retry-status-'));
    const wav = path.join(mediaDir, 'tone.wav');
    await writeTone(wav, { frequency: 440, seconds: 2 });
    tone = await readFile(wav);
    server = createServer((req, res) => {
      const status = answers.get(req.url ?? '') ?? 200;
      if (status !== 200) return void res.writeHead(status).end();
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': tone.length }).end(tone);
    });
    port = await listenLocal(server);
    pool = await createDatabasePool(await createTestDatabase());
    const resolver = async (host: string): Promise<LookupAddress[]> => {
      if (unresolvable.has(host)) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return [{ address: '127.0.0.1', family: 4 }];
    };
    worker = await startTestWorker(pool, { deps: { mediaDir, resolver, addressPolicy: LOOPBACK_POLICY } });
    api = await startTestApi({
      pool,
      config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue, MEDIA_TRANSFER_RETRY_INITIAL_SECONDS: '1' }),
    });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await closeServer(server);
    await rm(mediaDir, { recursive: true, force: true });
  });

  const create = async (assetUrl: string): Promise<string> => {
    const res = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() }, assetUrl },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const recording = async (id: string) =>
    (await api.request(`/v3/rest/recordings/${id}`, { headers: { 'X-Service-Api-Key': org.apiKey } })).body as {
      asset: { status: string; errorCode: string | null };
      assetRetry?: Retry;
    };
  /** The recording once its retry shows at least `attempt` failed attempts. */
  const retrying = async (id: string, attempt: number) => {
    let last: Awaited<ReturnType<typeof recording>> | undefined;
    const seen = await waitFor(async () => ((last = await recording(id)).assetRetry?.attempt ?? 0) >= attempt, 30_000, 100);
    assert.ok(seen, `no retry with attempt >= ${attempt}: ${JSON.stringify(last)}`);
    return last!;
  };
  const result = (id: string) =>
    api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(id)).result() as Promise<MediaIngestionResult>;

  it('a server answering 503: queued with assetRetry (asset_unavailable, attempt >= 2, next attempt ahead); ready once it recovers', async () => {
    const file = `/overloaded-${randomUUID()}.wav`;
    answers.set(file, 503);
    const id = await create(`http://media.test:${port}${file}`);
    const body = await retrying(id, 2);
    const retry = body.assetRetry!;
    assert.deepEqual(body.asset, { status: 'queued', url: null, errorCode: null }, 'the asset itself is as before');
    assert.deepEqual(Object.keys(retry).sort(), ['attempt', 'errorCode', 'message', 'nextAttemptAt']);
    assert.equal(retry.errorCode, 'asset_unavailable');
    assert.equal(retry.message, 'The media server is unavailable or overloaded (HTTP 503).');
    assert.ok(retry.attempt >= 2);
    // Attempt n failed: the next starts min(1 s × 2^(n−1), 30 min) later, and that is still ahead or just passed.
    const ahead = Date.parse(retry.nextAttemptAt) - Date.now();
    assert.ok(ahead > -1000 && ahead <= 2 ** (retry.attempt - 1) * 1000 + 500, `${retry.nextAttemptAt} is ${ahead} ms ahead`);
    answers.delete(file);
    assert.deepEqual(await result(id), { phase: 'ready', errorCode: null });
    const done = await recording(id);
    assert.equal(done.asset.status, 'completed');
    assert.equal(done.assetRetry, undefined, 'no retry once the media is ready');
  });

  it('a host name that does not resolve: asset_dns_failed with the reason, gone when it resolves', async () => {
    const host = `nowhere-${randomUUID().slice(0, 8)}.test`;
    unresolvable.add(host);
    const id = await create(`http://${host}:${port}/late.wav`);
    const retry = (await retrying(id, 2)).assetRetry!;
    assert.deepEqual(
      [retry.errorCode, retry.message],
      ['asset_dns_failed', "The media URL's host name could not be resolved (DNS: ENOTFOUND)."],
      'the catalogue message with the reason, never the host name',
    );
    assert.ok(Date.parse(retry.nextAttemptAt) > Date.now() - 1000);
    unresolvable.delete(host);
    assert.deepEqual(await result(id), { phase: 'ready', errorCode: null });
    assert.equal((await recording(id)).assetRetry, undefined);
  });

  it('retried, then failed for good: the terminal errorCode and no retry', async () => {
    const file = `/going-${randomUUID()}.wav`;
    answers.set(file, 502);
    const id = await create(`http://media.test:${port}${file}`);
    assert.equal((await retrying(id, 1)).assetRetry?.errorCode, 'asset_unavailable');
    answers.set(file, 404);
    assert.deepEqual(await result(id), { phase: 'failed', errorCode: 'asset_not_found' });
    const body = await recording(id);
    assert.deepEqual([body.asset.status, body.asset.errorCode, body.assetRetry], ['failed', 'asset_not_found', undefined]);
  });

  it('a permanent failure at once shows only the terminal errorCode', async () => {
    const file = `/missing-${randomUUID()}.wav`;
    answers.set(file, 404);
    const id = await create(`http://media.test:${port}${file}`);
    assert.deepEqual(await result(id), { phase: 'failed', errorCode: 'asset_not_found' });
    const body = await recording(id);
    assert.deepEqual([body.asset.status, body.asset.errorCode, body.assetRetry], ['failed', 'asset_not_found', undefined]);
  });

  describe('a direct upload whose encode is retried (no FFmpeg on the worker)', () => {
    let brokenWorker: TestWorker;
    let brokenApi: TestApi;
    before(async () => {
      const missing = path.join(mediaDir, 'no-ffmpeg');
      brokenWorker = await startTestWorker(pool, {
        deps: {
          mediaDir,
          addressPolicy: LOOPBACK_POLICY,
          ffmpeg: new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, ffmpegPath: `${missing}/ffmpeg`, ffprobePath: `${missing}/ffprobe` }),
        },
      });
      brokenApi = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: brokenWorker.taskQueue }) });
    });
    after(async () => {
      await brokenApi?.close();
      await brokenWorker?.stop();
    });

    it('the upload status and the recording show ffmpeg_unavailable while retrying; failed processing_failed without a retry at the end', async () => {
      const headers = { 'X-Service-Api-Key': org.apiKey };
      const created = await brokenApi.request('/v3/rest/recordings', {
        method: 'POST',
        headers,
        json: { record: { externalId: randomUUID() } },
      });
      const recordingId = created.body.id as string;
      const upload = await brokenApi.request(`/v3/rest/recordings/${recordingId}/uploads`, {
        method: 'POST',
        headers,
        json: { fileName: 'tone.wav', fileSize: tone.length },
      });
      assert.equal(upload.status, 201, JSON.stringify(upload.body));
      const sent = await fetch(upload.body.uploadUrl as string, {
        method: 'PATCH',
        body: tone,
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      });
      assert.equal(sent.status, 204);
      const statusPath = `/v3/rest/recordings/${recordingId}/uploads/${upload.body.uploadId as string}`;
      let status: { phase: string; errorCode: string | null; retry?: Retry } | undefined;
      const seen = await waitFor(
        async () => ((status = (await brokenApi.request(statusPath, { headers })).body).retry?.attempt ?? 0) >= 2,
        30_000,
        100,
      );
      assert.ok(seen, JSON.stringify(status));
      assert.deepEqual(
        [status!.phase, status!.errorCode, status!.retry?.errorCode, status!.retry?.message],
        ['encoding', null, 'ffmpeg_unavailable', 'No media encoder is available on the worker right now.'],
        'never the error text (it names paths of the worker)',
      );
      const body = (await brokenApi.request(`/v3/rest/recordings/${recordingId}`, { headers })).body as {
        asset: { status: string };
        assetRetry?: Retry;
      };
      assert.equal(body.asset.status, 'processing');
      assert.equal(body.assetRetry?.errorCode, 'ffmpeg_unavailable');
      // The encode's policy: 5 attempts, 1 s doubling; then the ingestion fails for good.
      const ended = await brokenApi.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();
      assert.deepEqual(ended, { phase: 'failed', errorCode: 'processing_failed' });
      const final = (await brokenApi.request(statusPath, { headers })).body as Record<string, unknown>;
      assert.deepEqual([final.phase, final.errorCode, 'retry' in final], ['failed', 'processing_failed', false]);
      assert.equal('assetRetry' in (await brokenApi.request(`/v3/rest/recordings/${recordingId}`, { headers })).body, false);
    });
  });
});
