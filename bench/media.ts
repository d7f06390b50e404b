/**
 * Media ingestion: time from the last byte of a 10-minute audio file to `ready` (probe, encode to
 * AAC, publish), for URL media transferred from a local server, with the worker in its own
 * process. The direct-upload figures (tus throughput beside raw disk speed, API memory while
 * uploading 2 GiB) are in bench/uploads.ts.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../src/db/pool.js';
import { mediaIngestionWorkflowId } from '../src/temporal/ids.js';
import { startTestApi } from '../harness/app.js';
import { testConfig } from '../harness/config.js';
import { createTestOrg } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack } from '../harness/stack.js';
import { killWorkerProcess, startWorkerProcess } from '../harness/worker.js';
import { percentile } from './stats.js';
import { listenLocal } from '../harness/http.js';
import { writeTone } from '../harness/media.js';
import { installQuietRuntime } from './runtime.js';

const RUNS = 3;
const SECONDS_OF_AUDIO = 600;

export async function benchMedia(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-bench-media-'));
  // An MP3 (copied into the rendition) and a WAV of the same audio (encoded to AAC).
  const sources = { mp3: { type: 'audio/mpeg', args: ['-b:a', '128k'] }, wav: { type: 'audio/wav', args: [] as string[] } };
  const sizes: Record<string, number> = {};
  for (const [ext, { args }] of Object.entries(sources)) {
    const file = path.join(mediaDir, `ten-minutes.${ext}`);
    await writeTone(file, { frequency: 300, seconds: SECONDS_OF_AUDIO, outputArgs: args });
    sizes[ext] = (await stat(file)).size;
  }
  let lastByteAt = 0;
  const server = createServer((req, res) => {
    const ext = req.url?.endsWith('.wav') ? 'wav' : 'mp3';
    res.writeHead(200, { 'content-type': sources[ext].type, 'content-length': sizes[ext] });
    const stream = createReadStream(path.join(mediaDir, `ten-minutes.${ext}`));
    stream.on('end', () => (lastByteAt = performance.now()));
    stream.pipe(res);
  });
  await listenLocal(server);
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl);
  const taskQueue = `bench-media-${randomUUID()}`;
  const api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: taskQueue }) });
  const worker = await startWorkerProcess({ databaseUrl, taskQueue, mediaDir });
  const durations: Record<string, number[]> = { mp3: [], wav: [] };
  try {
    const org = await createTestOrg(pool);
    const port = (server.address() as AddressInfo).port;
    for (let i = 0; i < RUNS * 2; i++) {
      const ext = i % 2 === 0 ? 'mp3' : 'wav';
      const created = await api.request('/v3/rest/recordings', {
        method: 'POST',
        headers: { 'X-Service-Api-Key': org.apiKey },
        json: { record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/a.${ext}` },
      });
      const recordingId = (created.body as { id: string }).id;
      await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result();
      // Ready is the commit of the publish; the row's finished_at marks it.
      const readyAt = await pool.oneFirst(sql.type(z.object({ ms: z.number() }))`
        SELECT (extract(epoch FROM finished_at) * 1000)::float8 AS ms FROM media_ingestions WHERE recording_id = ${recordingId}`);
      durations[ext]!.push(readyAt - (performance.timeOrigin + lastByteAt));
    }
  } finally {
    await killWorkerProcess(worker);
    await api.close();
    await pool.end();
    server.close();
    await rm(mediaDir, { recursive: true, force: true });
    await stopTestStack();
  }
  const summary = (ext: 'mp3' | 'wav', how: string) => {
    const sorted = [...(durations[ext] ?? [])].sort((a, b) => a - b);
    return {
      how,
      sourceBytes: sizes[ext],
      runs: RUNS,
      p50: Math.round(percentile(sorted, 50)),
      max: Math.round(percentile(sorted, 100)),
      all: sorted.map((d) => Math.round(d)),
    };
  };
  return {
    name: 'media',
    audioSeconds: SECONDS_OF_AUDIO,
    lastByteToReadyMs: {
      mp3: summary('mp3', 'MP3 128 kb/s, copied into the rendition'),
      wav: summary('wav', 'WAV, encoded to AAC 128 kb/s in M4A'),
    },
    before: 'MP3 was encoded to AAC too: p50 16.8 s (16.0, 16.8, 19.1 s)',
  };
}
