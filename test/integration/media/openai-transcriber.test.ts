import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { OpenAiTranscriber, TranscriberError } from '../../../src/providers/transcriber/index.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { loopbackMediaDeps, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { listenLocal, closeServer } from '../../../harness/http.js';
import { runFfmpeg } from '../../../harness/media.js';

const exec = promisify(execFile);
const KEY = 'sk-test-transcriber-key-0123456789';

interface Received {
  authorization: string | undefined;
  model: string | null;
  responseFormat: string | null;
  fileType: string | null;
  fileBytes: number;
}

/** Parses a multipart request the way the provider would. */
async function formOf(req: IncomingMessage): Promise<FormData> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new Request('http://local/', {
    method: 'POST',
    headers: req.headers as Record<string, string>,
    body: Buffer.concat(chunks),
  }).formData();
}

/** The OpenAI-compatible transcription adapter against a local server speaking that API. */
describe('OpenAI-compatible transcriber', function () {
  this.timeout(120_000);
  let dir: string;
  let tone: string;
  let server: Server;
  let baseUrl: string;
  let answer: { status: number; body: string; delayMs?: number };
  const received: Received[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-transcriber-'));
    tone = path.join(dir, 'tone.wav');
    await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=duration=6', tone]);
    server = createServer((req, res) => {
      void (async () => {
        if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') return void res.writeHead(404).end();
        const form = await formOf(req);
        const file = form.get('file');
        received.push({
          authorization: req.headers.authorization,
          model: form.get('model') as string | null,
          responseFormat: form.get('response_format') as string | null,
          fileType: file instanceof Blob ? file.type : null,
          fileBytes: file instanceof Blob ? file.size : 0,
        });
        if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      })();
    });
    baseUrl = `http://127.0.0.1:${await listenLocal(server)}/v1`;
  });
  after(async () => {
    await closeServer(server);
    await rm(dir, { recursive: true, force: true });
  });

  const transcriber = (timeoutMs = 10_000) => new OpenAiTranscriber({ baseUrl, apiKey: KEY, model: 'whisper-1', timeoutMs });
  async function failure(promise: Promise<unknown>): Promise<TranscriberError> {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof TranscriberError, String(error));
      return error;
    }
    assert.fail('expected a TranscriberError');
  }

  it('sends compact speech audio as multipart and maps segments and speakers to utterances', async () => {
    answer = {
      status: 200,
      body: JSON.stringify({
        text: 'Hello there. Hi! How are you?',
        duration: 6,
        segments: [
          { start: 2.5, end: 4, text: ' Hi! ', speaker: 'B' },
          { start: 0, end: 2.4, text: 'Hello   there.', speaker: 'A' },
          { start: 4.1, end: 5.9, text: 'How are you?', speaker: 'A' },
          { start: 5.9, end: 6, text: '   ', speaker: 'C' },
        ],
      }),
    };
    const utterances = await transcriber().transcribe(tone);
    assert.deepEqual(utterances, [
      { startSec: 0, endSec: 2.4, speaker: 0, text: 'Hello there.' },
      { startSec: 2.5, endSec: 4, speaker: 1, text: 'Hi!' },
      { startSec: 4.1, endSec: 5.9, speaker: 0, text: 'How are you?' },
    ]);
    const sent = received.at(-1);
    assert.deepEqual(
      [sent?.authorization, sent?.model, sent?.responseFormat, sent?.fileType],
      [`Bearer ${KEY}`, 'whisper-1', 'verbose_json', 'audio/mpeg'],
    );
    // 6 s of mono 16 kHz speech at 32 kb/s: about 24 kB, not the WAV's 500 kB.
    assert.ok((sent?.fileBytes ?? 0) > 10_000 && (sent?.fileBytes ?? 0) < 60_000, String(sent?.fileBytes));
  });

  it('a text-only answer is one utterance; segments without speakers are speaker 0', async () => {
    answer = { status: 200, body: JSON.stringify({ text: ' Just text. ', duration: 6 }) };
    assert.deepEqual(await transcriber().transcribe(tone), [{ startSec: 0, endSec: 6, speaker: 0, text: 'Just text.' }]);
    answer = {
      status: 200,
      body: JSON.stringify({
        text: 'a b',
        segments: [
          { start: 0, end: 1, text: 'a' },
          { start: 1, end: 2, text: 'b' },
        ],
      }),
    };
    assert.deepEqual(
      (await transcriber().transcribe(tone)).map((u) => u.speaker),
      [0, 0],
    );
  });

  it('failures: 5xx and 429 retryable, 401 not (the key never in the message), nonsense and timeouts retryable', async () => {
    answer = { status: 503, body: '{"error":"overloaded"}' };
    assert.deepEqual(await failure(transcriber().transcribe(tone)).then((e) => [e.code, e.retryable]), ['provider_unavailable', true]);
    answer = { status: 429, body: '{}' };
    assert.deepEqual(await failure(transcriber().transcribe(tone)).then((e) => [e.code, e.retryable]), ['provider_unavailable', true]);
    answer = { status: 401, body: `{"error":"invalid key ${KEY}"}` };
    const unauthorized = await failure(transcriber().transcribe(tone));
    assert.deepEqual([unauthorized.code, unauthorized.retryable], ['provider_unauthorized', false]);
    assert.equal(unauthorized.message.includes(KEY), false);
    answer = { status: 400, body: '{"error":"bad file"}' };
    assert.deepEqual(await failure(transcriber().transcribe(tone)).then((e) => [e.code, e.retryable]), ['provider_rejected', false]);
    answer = { status: 200, body: '<html>' };
    assert.deepEqual(await failure(transcriber().transcribe(tone)).then((e) => [e.code, e.retryable]), ['invalid_response', true]);
    answer = { status: 200, body: '{}', delayMs: 1500 };
    assert.deepEqual(await failure(transcriber(500).transcribe(tone)).then((e) => [e.code, e.retryable]), ['provider_unreachable', true]);
    const unreachable = new OpenAiTranscriber({ baseUrl: 'http://127.0.0.1:9/v1', model: 'whisper-1', timeoutMs: 2000 });
    assert.deepEqual(await failure(unreachable.transcribe(tone)).then((e) => [e.code, e.retryable]), ['provider_unreachable', true]);
    const notMedia = path.join(dir, 'notes.txt');
    await exec('sh', ['-c', `echo hello > ${notMedia}`]);
    assert.deepEqual(await failure(transcriber().transcribe(notMedia)).then((e) => [e.code, e.retryable]), ['transcription_failed', false]);
  });

  describe('in media ingestion', () => {
    let pool: DatabasePool;
    let worker: TestWorker;
    let api: TestApi;
    let org: TestOrg;
    let media: Server;

    before(async () => {
      const wav = await readFile(tone);
      media = createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.length }).end(wav));
      await listenLocal(media);
      pool = await createDatabasePool(await createTestDatabase());
      worker = await startTestWorker(pool, { deps: { ...loopbackMediaDeps(dir), transcriber: transcriber() } });
      api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: dir, TEMPORAL_TASK_QUEUE: worker.taskQueue }) });
      org = await createTestOrg(pool);
    });
    after(async () => {
      await api?.close();
      await worker?.stop();
      await pool?.end();
      await closeServer(media);
    });

    it('a recording without a supplied transcript gets an automatic one: utterances and monologues', async () => {
      answer = {
        status: 200,
        body: JSON.stringify({
          segments: [
            { start: 0, end: 1, text: 'Good morning.', speaker: 'A' },
            { start: 1, end: 2, text: 'Shall we start?', speaker: 'A' },
            { start: 2, end: 4, text: 'Yes, please.', speaker: 'B' },
          ],
        }),
      };
      const port = (media.address() as AddressInfo).port;
      const created = await api.request('/v3/rest/recordings', {
        method: 'POST',
        headers: { 'X-Service-Api-Key': org.apiKey },
        json: { record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/call.wav` },
      });
      const recordingId = created.body.id as string;
      assert.deepEqual(created.body.transcript, { status: 'waiting', source: null });
      await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();
      const recording = await api.request(`/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': org.apiKey } });
      assert.deepEqual(recording.body.transcript, { status: 'completed', source: 'automatic' });
      const utterances = await api.request(`/v3/rest/recordings/${recordingId}/transcript?type=utterance`, {
        headers: { 'X-Service-Api-Key': org.apiKey },
      });
      assert.deepEqual(
        utterances.body.utterances.map((u: { speaker: number; text: string }) => [u.speaker, u.text]),
        [
          [0, 'Good morning.'],
          [0, 'Shall we start?'],
          [1, 'Yes, please.'],
        ],
      );
      const monologues = await api.request(`/v3/rest/recordings/${recordingId}/transcript?type=monologue`, {
        headers: { 'X-Service-Api-Key': org.apiKey },
      });
      assert.deepEqual(
        monologues.body.monologues.map((m: { speaker: number; text: string; startSec: number; endSec: number }) => [
          m.speaker,
          m.startSec,
          m.endSec,
          m.text,
        ]),
        [
          [0, 0, 2, 'Good morning. Shall we start?'],
          [1, 2, 4, 'Yes, please.'],
        ],
      );
    });

    it('an engine that refuses: the transcript is failed, the media stays ready', async () => {
      answer = { status: 400, body: '{"error":"unsupported"}' };
      const port = (media.address() as AddressInfo).port;
      const created = await api.request('/v3/rest/recordings', {
        method: 'POST',
        headers: { 'X-Service-Api-Key': org.apiKey },
        json: { record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/call.wav` },
      });
      const recordingId = created.body.id as string;
      assert.deepEqual(await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result(), {
        phase: 'ready',
        errorCode: null,
      });
      const recording = await api.request(`/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': org.apiKey } });
      assert.deepEqual([recording.body.asset.status, recording.body.transcript.status], ['completed', 'failed']);
    });
  });
});
