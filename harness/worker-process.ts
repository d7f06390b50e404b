/**
 * A worker in a process of its own, so that a test can kill it with SIGKILL mid-batch (no graceful
 * shutdown, no finally blocks): env DATABASE_URL, TEMPORAL_ADDRESS, TASK_QUEUE, BUNDLE_PATH.
 * Prints "ready" once it polls.
 */
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import os from 'node:os';
import { ensureSessionDrainers } from '../src/agents/drainer-workflow.js';
import { sessionDrainerTaskQueue } from '../workflows/session-drainer/contract.js';
import { DrainerShardHost } from '../src/agents/drainer-shards.js';
import type { DrainerSettings } from '../src/agents/drainer.js';
import { createActivities } from '../activities/index.js';
import { DEFAULT_FFMPEG_SETTINGS, FfmpegTools } from '../src/media/ffmpeg-tools.js';
import { createDatabasePool } from '../src/db/pool.js';
import { loopbackMediaDeps, onTaskQueue, testActivityDeps } from './worker.js';
import { testConfig, testDataConverter } from './config.js';
import { workflowSinks } from '../src/temporal/tracing.js';
import { TemporalGateway } from '../src/temporal/gateway.js';
import { startWebhookWaker } from '../src/webhooks/waker.js';
import { WebhookWakes } from '../src/webhooks/wakes.js';

Runtime.install({ logger: new DefaultLogger('ERROR') });
const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const pool = await createDatabasePool(env('DATABASE_URL'));
const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
const taskQueue = env('TASK_QUEUE');
// MEDIA_DIR set: media activities store there and may fetch from the test's own loopback server
// (`media.test` resolves to 127.0.0.1); production code has no such switch.
// DRAINER_SETTINGS: the drainer's settings as the test's configuration has them (JSON).
// WEBHOOK_RETRY_DELAYS_MS: a fast webhook retry schedule (JSON array of milliseconds).
// WEBHOOK_WAKER=1: the webhook waker runs here, with its production settings, as in src/main/worker.ts.
const base = testActivityDeps(pool);
const deps = testActivityDeps(pool, {
  ...(process.env.MEDIA_DIR ? loopbackMediaDeps(process.env.MEDIA_DIR) : {}),
  ...(process.env.DRAINER_SETTINGS ? { drainer: JSON.parse(process.env.DRAINER_SETTINGS) as DrainerSettings } : {}),
  // FFMPEG_NICENESS: FFmpeg's niceness as the variable sets it in production (benchmarks compare 0 and the default).
  ...(process.env.FFMPEG_NICENESS
    ? { ffmpeg: new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, niceness: Number(process.env.FFMPEG_NICENESS) }) }
    : {}),
  ...(process.env.WEBHOOK_RETRY_DELAYS_MS
    ? { webhooks: { ...base.webhooks!, retryDelaysMs: JSON.parse(process.env.WEBHOOK_RETRY_DELAYS_MS) as number[] } }
    : {}),
});
// With the waker here, sender calls linger for its wakes, as in src/main/worker.ts.
const webhookWakes = process.env.WEBHOOK_WAKER ? new WebhookWakes() : undefined;
// DRAINER_SHARDS: the task queue's drainer shards (1 by default: one drainer of every session).
const shards = Number(process.env.DRAINER_SHARDS ?? '1');
// DRAINER_SHARD_HOST=1: this worker holds its share of the shards beside other workers, as
// src/main/worker.ts does (announced in PostgreSQL, one set of lanes and one signal pace).
const drainerShards = process.env.DRAINER_SHARD_HOST
  ? new DrainerShardHost({
      pool,
      taskQueue,
      worker: `${process.pid}@${os.hostname()}`,
      shards,
      lanes: deps.drainer.concurrency,
      routineSignalsPerSecond: deps.drainer.routineSignalsPerSecond,
      databaseUrl: env('DATABASE_URL'),
    })
  : undefined;
await drainerShards?.start();
const activities = createActivities(
  onTaskQueue({ ...deps, ...(webhookWakes ? { webhookWakes } : {}), ...(drainerShards ? { drainerShards } : {}) }, taskQueue),
);
const dataConverter = testDataConverter();
const common = { connection, activities, dataConverter };
const workflows = { workflowBundle: { codePath: env('BUNDLE_PATH') }, sinks: workflowSinks() };
const worker = await Worker.create({ ...common, ...workflows, taskQueue });
// The media queue's activity slots as production has them (MEDIA_WORKER_ACTIVITY_SLOTS): encodes wait their turn.
const mediaWorker = await Worker.create({
  ...common,
  taskQueue: `${taskQueue}-media`,
  maxConcurrentActivityTaskExecutions: testConfig().temporal.mediaActivitySlots,
});
const webhookWorker = await Worker.create({ ...common, ...workflows, taskQueue: `${taskQueue}-webhooks` });
// The drainer shards' own queue (decision 0211), their workflows and activity.
const drainerWorker = await Worker.create({ ...common, ...workflows, taskQueue: sessionDrainerTaskQueue(taskQueue) });
const running = Promise.all([worker.run(), mediaWorker.run(), webhookWorker.run(), drainerWorker.run()]);
const client = new Client({ connection, dataConverter });
await ensureSessionDrainers(client, taskQueue, shards);
const waker = process.env.WEBHOOK_WAKER
  ? await startWebhookWaker({
      databaseUrl: env('DATABASE_URL'),
      pool,
      temporal: new TemporalGateway(client),
      taskQueue: `${taskQueue}-webhooks`,
      ...(webhookWakes ? { wakes: webhookWakes } : {}),
    })
  : undefined;
process.stdout.write('ready\n');
// SIGTERM (the Runtime's shutdown signal) drains the worker; then close what it used and exit.
await running;
await drainerShards?.stop();
await waker?.close();
await connection.close();
await pool.end();
