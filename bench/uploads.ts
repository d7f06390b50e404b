/**
 * Direct uploads through the tus endpoint, with the API in its own process (as `npm start` runs it):
 * - throughput of a 1 GiB upload with tus-js-client, beside the raw write speed of the same disk
 *   measured in the same run (the same bytes streamed from a file to a file), and their ratio;
 * - the API's resident memory while it receives 2 GiB (sampled every 50 ms from /proc): it must
 *   stay flat, the body is streamed to disk, never buffered.
 * No worker runs: the uploads stay `waiting` and are cancelled afterwards, so that encoding does
 * not compete with the transfer for the two cores.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tus from 'tus-js-client';
import { createDatabasePool } from '../src/db/pool.js';
import { startApiProcess } from '../harness/api-process.js';
import { createTestOrg } from '../harness/fixtures.js';
import { TEST_SIGNING_SECRET } from '../harness/config.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

/** A file of `bytes` incompressible bytes (a random MiB repeated). */
async function makeFile(file: string, bytes: number): Promise<void> {
  const block = randomBytes(MiB);
  const handle = await open(file, 'w');
  try {
    for (let written = 0; written < bytes; written += MiB) await handle.write(block, 0, Math.min(MiB, bytes - written));
  } finally {
    await handle.close();
  }
}

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

function tusSend(uploadUrl: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const upload = new tus.Upload(createReadStream(file), {
      uploadUrl,
      chunkSize: 64 * MiB,
      retryDelays: [],
      onSuccess: () => resolve(),
      onError: reject,
    });
    upload.start();
  });
}

export async function benchUploads(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-bench-uploads-'));
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl);
  const { temporal } = await testStack();
  const api = await startApiProcess({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: `bench-uploads-${randomUUID()}`,
    STORAGE_DIR: path.join(dir, 'storage'),
    SIGNING_SECRET: TEST_SIGNING_SECRET,
    LOG_LEVEL: 'warn',
  });
  try {
    const org = await createTestOrg(pool);
    const headers = { 'X-Service-Api-Key': org.apiKey, 'content-type': 'application/json' };
    const newUpload = async (size: number) => {
      const recording = (await (
        await fetch(`${api.url}/v3/rest/recordings`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ record: { externalId: randomUUID() } }),
        })
      ).json()) as { id: string };
      const upload = (await (
        await fetch(`${api.url}/v3/rest/recordings/${recording.id}/uploads`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ fileName: 'big.bin', fileSize: size }),
        })
      ).json()) as { uploadId: string; uploadUrl: string };
      return { ...upload, recordingId: recording.id };
    };
    const cancel = (u: { recordingId: string; uploadId: string }) =>
      fetch(`${api.url}/v3/rest/recordings/${u.recordingId}/uploads/${u.uploadId}`, { method: 'DELETE', headers });

    // 1 GiB: the disk's raw speed (file to file), then the same bytes through tus.
    const source = path.join(dir, 'one.bin');
    await makeFile(source, GiB);
    let started = performance.now();
    await pipeline(createReadStream(source), createWriteStream(path.join(dir, 'raw-copy.bin')));
    const rawSeconds = (performance.now() - started) / 1000;
    await rm(path.join(dir, 'raw-copy.bin'));
    const first = await newUpload(GiB);
    started = performance.now();
    await tusSend(first.uploadUrl, source);
    const tusSeconds = (performance.now() - started) / 1000;
    await cancel(first);

    // 2 GiB with the API's memory sampled throughout.
    const big = path.join(dir, 'two.bin');
    await makeFile(big, 2 * GiB);
    await rm(source);
    const second = await newUpload(2 * GiB);
    const pid = api.child.pid as number;
    const before = await rssKiB(pid);
    const samples: number[] = [];
    const sampler = setInterval(() => {
      rssKiB(pid).then(
        (kib) => samples.push(kib),
        () => undefined,
      );
    }, 50);
    started = performance.now();
    await tusSend(second.uploadUrl, big);
    const bigSeconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const stored = (await stat(path.join(dir, 'storage', 'uploads', second.uploadId))).size;
    await cancel(second);
    const peak = Math.max(...samples);
    return {
      name: 'uploads',
      throughput1GiB: {
        tusMiBps: Math.round(1024 / tusSeconds),
        rawDiskMiBps: Math.round(1024 / rawSeconds),
        ratio: Number((rawSeconds / tusSeconds).toFixed(2)),
        tusSeconds: Number(tusSeconds.toFixed(2)),
        rawSeconds: Number(rawSeconds.toFixed(2)),
        client: 'tus-js-client 4.3.1, 64 MiB PATCH requests, API in its own process',
      },
      apiRssWhileUploading2GiB: {
        beforeMiB: Math.round(before / 1024),
        peakMiB: Math.round(peak / 1024),
        growthMiB: Math.round((peak - before) / 1024),
        samples: samples.length,
        // The peak of each quarter of the transfer: flat means streamed, rising means buffered.
        quarterPeaksMiB: [0, 1, 2, 3].map((q) =>
          Math.round(Math.max(...samples.slice(Math.floor((q * samples.length) / 4), Math.floor(((q + 1) * samples.length) / 4))) / 1024),
        ),
        storedBytes: stored,
        seconds: Number(bigSeconds.toFixed(2)),
      },
    };
  } finally {
    await api.stop();
    await pool.end();
    await rm(dir, { recursive: true, force: true });
    await stopTestStack();
  }
}
