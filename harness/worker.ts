import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { DatabasePool } from 'slonik';
import { createActivities, type ActivityDeps } from '../activities/index.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { LocalSignalExtractor } from '../src/providers/signal-extractor/local.js';
import { publicAddressProblem } from '../src/domain/asset-url.js';
import { PUBLIC_ADDRESSES, type AddressPolicy } from '../src/media/safe-fetch.js';
import { TEST_MEDIA_DIR, testConfig, testDataConverter } from './config.js';
import { LocalRecorder } from '../src/providers/recorder/local.js';
import { testStack, workflowBundle } from './stack.js';
import { drainerSettings, type DrainerSettings } from '../src/agents/drainer.js';
import { ensureSessionDrainers } from '../src/agents/drainer-workflow.js';
import { sessionDrainerTaskQueue } from '../workflows/session-drainer/contract.js';
import { workerInterceptors } from '../src/temporal/worker.js';
import { workflowSinks } from '../src/temporal/tracing.js';

export interface TestWorker {
  taskQueue: string;
  /** The webhook senders' queue (`<taskQueue>-webhooks`, as testConfig has it): a test's waker wakes them there. */
  webhookTaskQueue: string;
  stop(): Promise<void>;
}

/** Tests may dial their own server on 127.0.0.1; every other address follows the production rule. */
export const LOOPBACK_POLICY: AddressPolicy = { problem: (a) => (a === '127.0.0.1' ? null : publicAddressProblem(a)) };

/** Media activities that store under `mediaDir` and fetch from the test's server: every name resolves to 127.0.0.1. */
export function loopbackMediaDeps(mediaDir: string): Pick<ActivityDeps, 'mediaDir' | 'resolver' | 'addressPolicy'> {
  return { mediaDir, resolver: async () => [{ address: '127.0.0.1', family: 4 }], addressPolicy: LOOPBACK_POLICY };
}

/** The activities' dependencies as tests use them: the local extractor, one credit per analysis. */
export function testActivityDeps(pool: DatabasePool, overrides: Partial<ActivityDeps> = {}): ActivityDeps {
  return {
    pool,
    drainer: drainerSettings(testConfig()),
    extractor: new LocalSignalExtractor(),
    analysisCreditCost: 1,
    mediaDir: TEST_MEDIA_DIR,
    recorder: new LocalRecorder({ dir: path.join(overrides.mediaDir ?? TEST_MEDIA_DIR, 'recorder'), meetingSeconds: 2 }),
    addressPolicy: PUBLIC_ADDRESSES,
    // Webhooks may be sent to the test's receiver on 127.0.0.1.
    webhooks: { payloadKeys: testConfig().temporal.payloadKeys!, policy: LOOPBACK_POLICY },
    ...overrides,
  };
}

/** The activities' dependencies for a worker on `taskQueue`: its drainer tells session workflows on that queue. */
export function onTaskQueue(deps: ActivityDeps, taskQueue: string): ActivityDeps {
  return { ...deps, drainer: { ...deps.drainer, sessions: { ...deps.drainer.sessions, taskQueue } } };
}

/** A real worker on a task queue of its own (or the given one), running the shared prebuilt bundle. */
export async function startTestWorker(
  pool: DatabasePool,
  /** drainer false: the task queue's session drainer is not started (a test runs its own). */
  /** drainerShards: the task queue's drainer shards (1 by default: one drainer of every session). */
  /** temporalAddress: another Temporal server than the test stack's (a restored, empty stack). */
  options: { taskQueue?: string; deps?: Partial<ActivityDeps>; drainer?: boolean; drainerShards?: number; temporalAddress?: string } = {},
): Promise<TestWorker> {
  const address = options.temporalAddress ?? (await testStack()).temporal.address;
  const connection = await NativeConnection.connect({ address });
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  const deps = testActivityDeps(pool, options.deps);
  const stopping = new AbortController();
  const activities = createActivities({ ...onTaskQueue(deps, taskQueue), workerStopping: stopping.signal });
  // The payload codec of the test configuration, as the API's client has it.
  const dataConverter = testDataConverter();
  const interceptors = workerInterceptors(deps);
  const common = { connection, activities, dataConverter, interceptors, shutdownGraceTime: '2s' };
  const workflows = { workflowBundle: await workflowBundle(), sinks: workflowSinks() };
  const worker = await Worker.create({ ...common, ...workflows, taskQueue });
  // The media and webhook queues' workers, as the production worker runs them (testConfig:
  // `<taskQueue>-media`, activities only; `<taskQueue>-webhooks`, the senders' workflows and activities).
  const mediaWorker = await Worker.create({ ...common, taskQueue: `${taskQueue}-media` });
  const webhookWorker = await Worker.create({ ...common, ...workflows, taskQueue: `${taskQueue}-webhooks` });
  // The drainer shards' own queue (decision 0211), their workflows and activity.
  const drainerWorker = await Worker.create({ ...common, ...workflows, taskQueue: sessionDrainerTaskQueue(taskQueue) });
  const running = Promise.all([worker.run(), mediaWorker.run(), webhookWorker.run(), drainerWorker.run()]);
  if (options.drainer !== false)
    await ensureSessionDrainers(new Client({ connection, dataConverter }), taskQueue, options.drainerShards ?? 1);
  return {
    taskQueue,
    webhookTaskQueue: `${taskQueue}-webhooks`,
    async stop() {
      stopping.abort();
      worker.shutdown();
      mediaWorker.shutdown();
      webhookWorker.shutdown();
      drainerWorker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/**
 * A worker in a child process (harness/worker-process.ts): killable with SIGKILL, and on a
 * core of its own beside the API (benchmarks). Resolves once it polls. BENCH_WORKER_CPU_PROF=<dir>:
 * it runs under `--cpu-prof` and writes its profile there when stopped (killWorkerProcess).
 */
export async function startWorkerProcess(o: {
  databaseUrl: string;
  taskQueue: string;
  mediaDir?: string;
  drainer?: DrainerSettings;
  /** A fast webhook retry schedule. */
  webhookRetryDelaysMs?: readonly number[];
  /** Run the webhook waker in the worker process, as src/main/worker.ts does (benchmarks); tests run their own. */
  webhookWaker?: boolean;
  /** The task queue's drainer shards, this worker holding its share beside the others as src/main/worker.ts does. */
  drainShards?: number;
}): Promise<ChildProcess> {
  const stack = await testStack();
  const bundlePath = path.join(stack.tmpDir, `bundle-${process.pid}.js`);
  if (!existsSync(bundlePath)) await writeFile(bundlePath, (await workflowBundle()).code);
  const profileDir = process.env.BENCH_WORKER_CPU_PROF;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const proc = spawn(process.execPath, [...profile, '--import', 'tsx', path.join(PROJECT_ROOT, 'harness', 'worker-process.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: o.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporal.address,
      TASK_QUEUE: o.taskQueue,
      BUNDLE_PATH: bundlePath,
      ...(o.mediaDir ? { MEDIA_DIR: o.mediaDir } : {}),
      ...(o.drainer ? { DRAINER_SETTINGS: JSON.stringify(o.drainer) } : {}),
      ...(o.webhookRetryDelaysMs ? { WEBHOOK_RETRY_DELAYS_MS: JSON.stringify(o.webhookRetryDelaysMs) } : {}),
      ...(o.webhookWaker ? { WEBHOOK_WAKER: '1' } : {}),
      ...(o.drainShards ? { DRAINER_SHARDS: String(o.drainShards), DRAINER_SHARD_HOST: '1' } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(proc.stdout, 'data')) as [Buffer];
  if (chunk.toString().trim() !== 'ready') throw new Error(`worker process said: ${chunk.toString()}`);
  return proc;
}

/** SIGKILL, and wait until the process is gone. */
export async function killWorkerProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, 'exit');
  if (process.env.BENCH_WORKER_CPU_PROF) {
    // A profiled worker stops on SIGTERM, so that it writes its profile (at most 30 s).
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
    return;
  }
  proc.kill('SIGKILL');
  await exited;
}
