/**
 * Direct uploads through the tus endpoint, with the API in its own process (as `npm start` runs it):
 * - throughput of a 1 GiB upload sent by curl in one tus PATCH, beside the raw write speed of the
 *   same disk measured in the same run (the same bytes streamed from a file to a file), the HTTP floor
 *   (curl to a bare tus endpoint, bench/tus-floor-server.ts) and tus-js-client with its defaults; they
 *   alternate over ROUNDS rounds, each after a `sync`, and the medians are compared (the page
 *   cache's writeback makes single runs vary by a third);
 * - the same under a worker backlog: a worker process (its own, on the API's task queue and storage)
 *   encodes video recordings (MPEG-4 to H.264) while both are measured again;
 * - the API's resident memory while it receives 2 GiB (sampled every 50 ms from /proc): it must
 *   stay flat, the body is streamed to disk, never buffered.
 * Outside the backlog phase no worker runs: the uploads stay `waiting` and are cancelled afterwards.
 * BENCH_PROFILE_DIR: the API process writes a V8 CPU profile there when it stops.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../src/paths.js';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tus from 'tus-js-client';
import { sql } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../src/db/pool.js';
import { startApiProcess } from '../harness/api-process.js';
import { createTestOrg } from '../harness/fixtures.js';
import { TEST_SIGNING_SECRET } from '../harness/config.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';
import { killWorkerProcess, startWorkerProcess } from '../harness/worker.js';
import { writeClip } from '../harness/media.js';
import { listenLocal } from '../harness/http.js';
import { median } from './stats.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';

const GiB = 2 ** 30;
const MiB = 2 ** 20;
/** Raw copy and tus upload, alternated this many times per phase. */
const ROUNDS = 3;
/** The backlog: video recordings the worker encodes while the upload phase under backlog runs. */
const BACKLOG_RECORDINGS = 24;
const BACKLOG_CLIP = { seconds: 60, size: '1280x720', rate: 30, codecArgs: ['-c:v', 'mpeg4', '-q:v', '4', '-c:a', 'aac'] };

const run = promisify(execFile);

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

/**
 * Sends `file` to an upload URL with tus-js-client: in one PATCH streaming the file (its default,
 * chunkSize Infinity, which its documentation recommends) or in PATCH requests of `chunkSize` bytes.
 */
/** Sends `file` in one tus PATCH with curl (`-T` streams it; no `Expect: 100-continue` round trip). */
async function curlSend(uploadUrl: string, file: string): Promise<void> {
  const { stdout } = await run('curl', [
    '-sS',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '-X',
    'PATCH',
    '-T',
    file,
    '-H',
    'Tus-Resumable: 1.0.0',
    '-H',
    'Upload-Offset: 0',
    '-H',
    'Content-Type: application/offset+octet-stream',
    '-H',
    'Expect:',
    uploadUrl,
  ]);
  if (stdout !== '204') throw new Error(`curl PATCH answered ${stdout}`);
}

function tusSend(uploadUrl: string, file: string, chunkSize = Infinity): Promise<void> {
  return new Promise((resolve, reject) => {
    const upload = new tus.Upload(createReadStream(file), {
      uploadUrl,
      chunkSize,
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
  const taskQueue = `bench-uploads-${randomUUID()}`;
  const storage = path.join(dir, 'storage');
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const api = await startApiProcess(
    {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      STORAGE_DIR: storage,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      LOG_LEVEL: 'warn',
    },
    { execArgv: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
  );
  let worker: ChildProcess | undefined;
  let stopFloor = () => undefined as unknown;
  const clipServer = createServer();
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

    // 1 GiB: the disk's raw speed (file to file) and the same bytes through tus, alternated.
    const source = path.join(dir, 'one.bin');
    await makeFile(source, GiB);
    // The HTTP floor: the same client against a bare tus endpoint in its own process.
    const floorDir = path.join(dir, 'floor');
    await mkdir(floorDir);
    const floor = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'bench', 'tus-floor-server.ts'), floorDir], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(floor.stdout, 'data')) as [Buffer];
    const floorUrl = (JSON.parse(line.toString()) as { url: string }).url;
    stopFloor = () => floor.kill('SIGTERM');
    const rounds = async () => {
      const seconds = { raw: [] as number[], curl: [] as number[], floor: [] as number[], tusJs: [] as number[] };
      const timed = async (list: number[], work: () => Promise<void>) => {
        // Each measurement starts with no dirty pages left from the one before (not timed).
        await run('sync');
        const started = performance.now();
        await work();
        list.push((performance.now() - started) / 1000);
      };
      for (let round = 0; round < ROUNDS; round++) {
        await timed(seconds.raw, () => pipeline(createReadStream(source), createWriteStream(path.join(dir, 'raw-copy.bin'))));
        await rm(path.join(dir, 'raw-copy.bin'));
        const viaCurl = await newUpload(GiB);
        await timed(seconds.curl, () => curlSend(viaCurl.uploadUrl, source));
        await cancel(viaCurl);
        await timed(seconds.floor, () => curlSend(`${floorUrl}/round${round}-${GiB}`, source));
        await rm(path.join(floorDir, `round${round}-${GiB}`));
        const viaTusJs = await newUpload(GiB);
        await timed(seconds.tusJs, () => tusSend(viaTusJs.uploadUrl, source));
        await cancel(viaTusJs);
      }
      const mibps = (list: number[]) => Math.round(1024 / median(list));
      return {
        tusMiBps: mibps(seconds.curl),
        rawDiskMiBps: mibps(seconds.raw),
        ratio: Number((median(seconds.raw) / median(seconds.curl)).toFixed(2)),
        httpFloorMiBps: mibps(seconds.floor),
        tusOverHttpFloor: Number((median(seconds.floor) / median(seconds.curl)).toFixed(2)),
        tusJsClientMiBps: mibps(seconds.tusJs),
        tusJsClientRatio: Number((median(seconds.raw) / median(seconds.tusJs)).toFixed(2)),
        tusSeconds: Number(median(seconds.curl).toFixed(2)),
        rawSeconds: Number(median(seconds.raw).toFixed(2)),
        roundsSeconds: Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, v.map((x) => Number(x.toFixed(2)))])),
        client:
          'curl streaming one tus PATCH (the headline and the HTTP floor); tus-js-client 4.3.1 with its defaults (one streaming PATCH); API in its own process',
      };
    };
    const quiet = await rounds();

    // Under a backlog: a worker encodes video recordings (URL media from a local server) meanwhile.
    const clip = path.join(dir, 'clip.mov');
    await writeClip(clip, BACKLOG_CLIP);
    const clipBytes = (await stat(clip)).size;
    clipServer.on('request', (_req, res) => {
      res.writeHead(200, { 'content-type': 'video/quicktime', 'content-length': clipBytes });
      createReadStream(clip).pipe(res);
    });
    await listenLocal(clipServer);
    worker = await startWorkerProcess({ databaseUrl, taskQueue, mediaDir: storage });
    const port = (clipServer.address() as AddressInfo).port;
    const backlog: string[] = [];
    for (let i = 0; i < BACKLOG_RECORDINGS; i++) {
      const created = (await (
        await fetch(`${api.url}/v3/rest/recordings`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ record: { externalId: randomUUID() }, assetUrl: `http://media.test:${port}/clip-${i}.mov` }),
        })
      ).json()) as { id: string };
      backlog.push(created.id);
    }
    const readyCount = () =>
      pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM media_ingestions WHERE recording_id = ANY(${sql.array(backlog, 'uuid')}) AND finished_at IS NOT NULL`);
    // Encoding has started: the worker's CPU is busy before the measurement does.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const underBacklog = await rounds();
    const finishedDuring = await readyCount();
    await killWorkerProcess(worker);
    worker = undefined;

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
    const started = performance.now();
    await tusSend(second.uploadUrl, big);
    const bigSeconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const stored = (await stat(path.join(dir, 'storage', 'uploads', second.uploadId))).size;
    await cancel(second);
    const peak = Math.max(...samples);
    return {
      name: 'uploads',
      throughput1GiB: quiet,
      throughput1GiBUnderWorkerBacklog: {
        ...underBacklog,
        backlog: `${BACKLOG_RECORDINGS} recordings of ${BACKLOG_CLIP.seconds} s ${BACKLOG_CLIP.size} MPEG-4 encoded to H.264 by a worker process; ${finishedDuring} finished during the rounds`,
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
    if (worker) await killWorkerProcess(worker);
    clipServer.close();
    stopFloor();
    await api.stop();
    await pool.end();
    await rm(dir, { recursive: true, force: true });
    await stopTestStack();
  }
}
