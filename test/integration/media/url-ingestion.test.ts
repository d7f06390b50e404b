import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { findIngestion } from '../../../src/db/repositories/media-ingestions.js';
import { RECORDING_ID, STATUS } from '../../../src/temporal/search-attributes.js';
import { sql } from 'slonik';
import { z } from 'zod';
import { TranscriberError, type Transcriber } from '../../../src/providers/transcriber/types.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import type { MediaIngestionResult } from '../../../workflows/media-ingestion/contract.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { LOOPBACK_POLICY, loopbackMediaDeps, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { waitFor } from '../../../harness/wait.js';
import { listenLocal, closeServer } from '../../../harness/http.js';
import { runFfmpeg, writeTone } from '../../../harness/media.js';

/** URL media end to end on the real stack: SSRF-safe transfer, ffprobe, ffmpeg, the recording's asset. */
describe('media ingestion workflow: URL media', function () {
  this.timeout(120_000);
  let mediaDir: string;
  let server: Server;
  let port: number;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;
  let tone: Buffer;
  let flakyCalls = 0;

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-url-media-'));
    const wav = path.join(mediaDir, 'tone.wav');
    await writeTone(wav, { frequency: 330, seconds: 5 });
    tone = await readFile(wav);
    server = createServer((req, res) => {
      // Overloaded, then empty, then the media: each transient failure is retried.
      if (req.url === '/flaky.wav') {
        const n = (flakyCalls += 1);
        if (n === 1) return void res.writeHead(503).end();
        if (n === 2) return void res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': 0 }).end();
        return void res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': tone.length }).end(tone);
      }
      if (req.url === '/tone.wav') return void res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': tone.length }).end(tone);
      if (req.url === '/page.html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
      if (req.url === '/noise.bin')
        return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(5000, 9));
      res.writeHead(404).end();
    });
    port = await listenLocal(server);
    pool = await createDatabasePool(await createTestDatabase());
    const resolver = async (host: string): Promise<LookupAddress[]> => {
      if (host === 'media.test') return [{ address: '127.0.0.1', family: 4 }];
      if (host === 'internal.test') return [{ address: '10.1.2.3', family: 4 }];
      throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    worker = await startTestWorker(pool, {
      deps: { mediaDir, resolver, addressPolicy: LOOPBACK_POLICY },
    });
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

  /** Creates a recording with `assetUrl` (which starts its ingestion) and waits for the ingestion's end. */
  async function ingest(assetUrl: string): Promise<{ recordingId: string; ingestionId: string; result: MediaIngestionResult }> {
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() }, assetUrl },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.asset, { status: 'queued', url: null, errorCode: null });
    const recordingId = created.body.id as string;
    const handle = api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId));
    const result = (await handle.result()) as MediaIngestionResult;
    const ingestionId = await pool.oneFirst(
      sql.type(z.object({ id: z.string() }))`SELECT id FROM media_ingestions WHERE recording_id = ${recordingId}`,
    );
    return { recordingId, ingestionId, result };
  }
  const recording = async (id: string) =>
    (await api.request(`/v3/rest/recordings/${id}`, { headers: { 'X-Service-Api-Key': org.apiKey } })).body;

  it('transfers, encodes and publishes the rendition: asset completed, ingestion ready', async () => {
    const { recordingId, ingestionId, result } = await ingest(`http://media.test:${port}/tone.wav`);
    assert.deepEqual(result, { phase: 'ready', errorCode: null });
    const body = await recording(recordingId);
    assert.deepEqual([body.asset.status, body.asset.errorCode], ['completed', null]);
    const row = await findIngestion(pool, ingestionId);
    // Spec: encodeProgress is null outside the encoding phase.
    assert.deepEqual([row?.phase, row?.encode_progress, row?.bytes_received], ['ready', null, tone.length]);
    assert.deepEqual(await readdir(path.join(mediaDir, 'renditions', recordingId)), [`${ingestionId}.m4a`]);
    assert.equal(existsSync(path.join(mediaDir, 'incoming', ingestionId)), false, 'the download is cleaned up');
    // asset.url: a signed playback URL that serves the rendition, with byte ranges.
    assert.match(body.asset.url, new RegExp(`^${api.url}/v3/media/playback/${recordingId}/${ingestionId}\\.m4a\\?expires=\\d+&signature=`));
    const whole = await fetch(body.asset.url as string);
    assert.deepEqual([whole.status, whole.headers.get('content-type')], [200, 'audio/mp4']);
    const size = (await whole.arrayBuffer()).byteLength;
    const part = await fetch(body.asset.url as string, { headers: { range: 'bytes=0-99' } });
    assert.deepEqual([part.status, part.headers.get('content-range')], [206, `bytes 0-99/${size}`]);
    // No transcription engine is configured here: the transcript says so.
    assert.deepEqual(body.transcript, { status: 'unavailable', source: null });
    const handle = api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId));
    const described = await handle.describe();
    assert.deepEqual(
      [described.typedSearchAttributes.get(RECORDING_ID), described.typedSearchAttributes.get(STATUS)],
      [recordingId, 'ready'],
    );
    // The heavy work ran on the media task queue's own slots; the bookkeeping on the main queue.
    const scheduled = Object.fromEntries(
      ((await handle.fetchHistory()).events ?? [])
        .map((e) => e.activityTaskScheduledEventAttributes)
        .filter((a) => a != null)
        .map((a) => [a.activityType?.name, a.taskQueue?.name]),
    );
    assert.deepEqual(scheduled, {
      awaitIngestion: worker.taskQueue,
      transferUrlMedia: `${worker.taskQueue}-media`,
      encodeMedia: `${worker.taskQueue}-media`,
      finalizeMedia: worker.taskQueue,
      transcribeMedia: `${worker.taskQueue}-media`,
    });
  });

  for (const [name, url, code] of [
    ['not a media type', '/page.html', 'asset_unsupported_content_type'],
    ['missing', '/nothing-here.mp3', 'asset_not_found'],
    ['not decodable media', '/noise.bin', 'processing_failed'],
  ] as const) {
    it(`fails with ${code} when the URL is ${name}`, async () => {
      const { recordingId, result } = await ingest(`http://media.test:${port}${url}`);
      assert.deepEqual(result, { phase: 'failed', errorCode: code });
      const body = await recording(recordingId);
      assert.deepEqual([body.asset.status, body.asset.errorCode, body.asset.url], ['failed', code, null]);
    });
  }

  it('a name that resolves to a private address is blocked in the worker (asset_url_blocked)', async () => {
    const { recordingId, result } = await ingest(`http://internal.test:${port}/tone.wav`);
    assert.deepEqual(result, { phase: 'failed', errorCode: 'asset_url_blocked' });
    assert.equal((await recording(recordingId)).asset.errorCode, 'asset_url_blocked');
  });

  it('retries transient failures (503, an empty answer) while the asset stays queued, then completes', async () => {
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/flaky.wav` },
    });
    const recordingId = created.body.id as string;
    await waitFor(async () => flakyCalls >= 1, 20_000, 50);
    assert.deepEqual((await recording(recordingId)).asset, { status: 'queued', url: null, errorCode: null }, 'queued between attempts');
    const result = await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();
    assert.deepEqual(result, { phase: 'ready', errorCode: null });
    assert.equal(flakyCalls, 3);
    assert.equal((await recording(recordingId)).asset.status, 'completed');
  });

  it("a supplied transcript is never touched by the media's ingestion", async () => {
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: {
        record: { externalId: randomUUID() },
        assetUrl: `http://media.test:${port}/tone.wav`,
        transcript: { utterances: [{ startSec: 0, endSec: 1, speaker: 0, text: 'supplied' }] },
      },
    });
    const recordingId = created.body.id as string;
    await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();
    const body = await recording(recordingId);
    assert.deepEqual([body.asset.status, body.transcript], ['completed', { status: 'completed', source: 'api' }]);
    const transcript = await api.request(`/v3/rest/recordings/${recordingId}/transcript`, { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.deepEqual(
      transcript.body.utterances.map((u: { text: string }) => u.text),
      ['supplied'],
    );
  });
});

/** With a transcription engine (the Transcriber interface; its real implementations come with meeting joins). */
describe('media ingestion workflow: automatic transcription after the media is ready', function () {
  this.timeout(120_000);
  let mediaDir: string;
  let server: Server;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;
  let fail = false;
  const heard: string[] = [];
  /** Stands in for a speech-recognition provider: it reads the file it is given. */
  const transcriber: Transcriber = {
    name: 'test-engine',
    async transcribe(file) {
      heard.push(file);
      if (fail) throw new TranscriberError('engine refused', 'provider_rejected', false);
      const { size } = await stat(file);
      return [
        { startSec: 0, endSec: 2.5, speaker: 0, text: `heard ${size > 0 ? 'audio' : 'nothing'}` },
        { startSec: 2.5, endSec: 5, speaker: 1, text: 'and a reply' },
      ];
    },
  };

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-transcribe-'));
    const wav = path.join(mediaDir, 'tone.wav');
    await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=duration=5', wav]);
    const tone = await readFile(wav);
    server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': tone.length }).end(tone));
    await listenLocal(server);
    pool = await createDatabasePool(await createTestDatabase());
    worker = await startTestWorker(pool, {
      deps: { ...loopbackMediaDeps(mediaDir), transcriber },
    });
    api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue }) });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await closeServer(server);
    await rm(mediaDir, { recursive: true, force: true });
  });

  const run = async () => {
    const port = (server.address() as AddressInfo).port;
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/a.wav` },
    });
    const recordingId = created.body.id as string;
    assert.deepEqual(created.body.transcript, { status: 'waiting', source: null });
    assert.deepEqual(await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result(), {
      phase: 'ready',
      errorCode: null,
    });
    return {
      recordingId,
      body: (await api.request(`/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': org.apiKey } })).body,
    };
  };

  it('transcribes the rendition: status completed, source automatic, utterances and monologues readable', async () => {
    const { recordingId, body } = await run();
    assert.deepEqual(body.transcript, { status: 'completed', source: 'automatic' });
    assert.match(heard.at(-1)!, new RegExp(`renditions/${recordingId}/[0-9a-f-]{36}\\.m4a$`));
    const utterances = await api.request(`/v3/rest/recordings/${recordingId}/transcript`, { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.deepEqual(
      utterances.body.utterances.map((u: { speaker: number; text: string }) => [u.speaker, u.text]),
      [
        [0, 'heard audio'],
        [1, 'and a reply'],
      ],
    );
    const monologues = await api.request(`/v3/rest/recordings/${recordingId}/transcript?type=monologue`, {
      headers: { 'X-Service-Api-Key': org.apiKey },
    });
    assert.equal(monologues.body.monologues.length, 2);
  });

  it('a failed transcription leaves the media ready and the transcript failed', async () => {
    fail = true;
    const { body } = await run();
    fail = false;
    assert.deepEqual([body.asset.status, body.transcript], ['completed', { status: 'failed', source: null }]);
  });
});
