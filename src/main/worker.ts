import { prepareEventPartitions } from '../agents/event-partitions.js';
import { Runtime, type Worker } from '@temporalio/worker';
import type { DatabasePool } from 'slonik';
import { ConfigError, loadConfig, required, type Config } from '../config.js';
import { transcriberUnusable } from '../providers/transcriber/index.js';
import { createDatabasePool } from '../db/pool.js';
import { warnOfUnboundedPooler } from '../db/pooler.js';
import { createLogger, type Logger } from '../logger.js';
import { ensureSearchAttributes } from '../temporal/search-attributes.js';
import { connectTemporalClient, connectTemporalWorker } from '../temporal/connection.js';
import { ensureMediaReconcilerSchedule, ensureRetentionSchedule, ensureSessionWakesSchedule } from '../temporal/schedules.js';
import { MEDIA_STRANDED_AFTER_SECONDS, mediaWorkflowSettings } from '../recordings/media.js';
import { sessionWorkflowSettings } from '../agents/session-workflow.js';
import { ensureSessionDrainers } from '../agents/drainer-workflow.js';
import { DrainerShardHost } from '../agents/drainer-shards.js';
import { sdkLogger, sdkLogging } from '../temporal/sdk-logger.js';
import { taskQueues } from '../temporal/task-queues.js';
import { createWorker, workerIdentity } from '../temporal/worker.js';
import { retryStartup } from './retry.js';
import { startTracing, stopTracing } from '../telemetry/tracing.js';
import { startWorkerHttp } from './worker-http.js';
import type { ActivityMetrics } from '../metrics/activity-metrics.js';
import { createWorkerMetrics, sdkPrometheus } from '../metrics/worker-metrics.js';
import { freePort } from '../dev/net.js';
import { activityDeps, createActivities } from '../../activities/index.js';
import { Client } from '@temporalio/client';
import { temporalDataConverter } from '../temporal/codec.js';
import { TemporalGateway } from '../temporal/gateway.js';
import { startWebhookWaker } from '../webhooks/waker.js';
import { WebhookWakes } from '../webhooks/wakes.js';
import { isEntryPoint } from '../entry-point.js';

export interface RunningWorker {
  /** The main queue's worker (workflows and light activities). */
  worker: Worker;
  /** The media queue's worker (transfers, encodes, transcription). */
  mediaWorker: Worker;
  /** The webhook queue's worker (the senders' workflows and activities). */
  webhookWorker: Worker;
  /** The drainers' queue's worker (the session drainer shards' workflows and activity, decision 0211). */
  drainerWorker: Worker;
  /** The worker's PostgreSQL pool (the backlog gauges read it). */
  pool: DatabasePool;
  /** Resolves when the worker has drained and every connection is closed. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startWorker(config: Config, logger: Logger, o: { metrics?: ActivityMetrics } = {}): Promise<RunningWorker> {
  // Production installs nothing at run time: an engine that would need it is refused before anything starts.
  const unusable = await transcriberUnusable(config.transcriber);
  if (unusable) throw new ConfigError(unusable);
  // Production runs the bundle the build made: the image leaves out the bundler's compiler (@swc/core).
  if (config.env === 'production' && !config.temporal.workflowBundlePath)
    throw new ConfigError(
      'WORKFLOW_BUNDLE_PATH is required with NODE_ENV=production: production workers run the prebuilt workflow bundle (`npm run build` writes dist/workflow-bundle.js; the image and `npm run start:prod:worker` set it)',
    );
  const pool = await createDatabasePool(required(config.database.url, 'DATABASE_URL'), config.database);
  await warnOfUnboundedPooler(pool, config.database, logger);
  await prepareEventPartitions(pool, logger);
  const admin = await retryStartup('Temporal', logger, () => connectTemporalClient(config));
  try {
    await ensureSearchAttributes(admin.connection, config.temporal.namespace, logger);
    await ensureRetentionSchedule(
      admin.client,
      { taskQueue: taskQueues(config).main, everyMinutes: config.agents.retentionSweepMinutes },
      logger,
    );
    await ensureSessionWakesSchedule(
      admin.client,
      {
        taskQueue: taskQueues(config).main,
        everySeconds: config.agents.wakeReconcileSeconds,
        settings: sessionWorkflowSettings(config),
      },
      logger,
    );
    await ensureMediaReconcilerSchedule(
      admin.client,
      {
        taskQueue: taskQueues(config).main,
        everySeconds: config.media.reconcileSeconds,
        olderThanSeconds: MEDIA_STRANDED_AFTER_SECONDS,
        settings: mediaWorkflowSettings(config),
      },
      logger,
    );
    await ensureSessionDrainers(admin.client, taskQueues(config).main, config.agents.drainShards);
  } finally {
    await admin.connection.close();
  }
  const connection = await connectTemporalWorker(config);
  const stopping = new AbortController();
  const deps = activityDeps(pool, config, (m) => logger.info(m));
  // Located (installed, the first time) in the background: media work waits for it, nothing else does.
  deps.ffmpeg?.binaries().then(
    (b) => logger.info({ ffmpeg: b.ffmpeg, ffprobe: b.ffprobe, source: b.source, sandbox: b.sandbox.kind }, b.version),
    (error: unknown) => logger.warn({ err: error }, 'no FFmpeg: media encodes will be retried until one is installed'),
  );
  // A sender call lingers for wakes from this process's waker instead of a workflow round trip (decision 0188).
  const webhookWakes = new WebhookWakes();
  // This worker's side of the session drainer shards: it says it is alive, and holds its share (decision 0199).
  const drainerShards = new DrainerShardHost({
    pool,
    taskQueue: taskQueues(config).main,
    worker: workerIdentity(),
    shards: config.agents.drainShards,
    lanes: config.agents.drainConcurrency,
    routineSignalsPerSecond: config.agents.workflowSignalsPerSecond,
    databaseUrl: required(config.database.sessionUrl, 'DATABASE_SESSION_URL'),
    logger,
  });
  await drainerShards.start();
  const activities = {
    ...deps,
    workerStopping: stopping.signal,
    webhookWakes,
    drainerShards,
    ...(o.metrics ? { metrics: o.metrics } : {}),
  };
  const common = {
    connection,
    namespace: config.temporal.namespace,
    metrics: o.metrics,
    workflowBundlePath: config.temporal.workflowBundlePath,
    shutdownGraceSeconds: config.temporal.shutdownGraceSeconds,
    payloadKeys: required(config.temporal.payloadKeys, 'TEMPORAL_PAYLOAD_KEYS or SIGNING_SECRET'),
  };
  const worker = await createWorker({ ...common, activities: createActivities(activities), taskQueue: taskQueues(config).main });
  const mediaWorker = await createWorker({
    ...common,
    activities: createActivities(activities),
    taskQueue: taskQueues(config).media,
    activitiesOnly: { maxConcurrent: config.temporal.mediaActivitySlots },
  });
  const webhookWorker = await createWorker({ ...common, activities: createActivities(activities), taskQueue: taskQueues(config).webhooks });
  const drainerWorker = await createWorker({ ...common, activities: createActivities(activities), taskQueue: taskQueues(config).drainers });
  // Every worker of the process stops when one does (stopAll below), so the main one's state says
  // when the drain runs on the drainers' queue must end too.
  abortWhenStopping(worker, stopping);
  // Wakes the webhook senders of endpoints with new deliveries (LISTEN), and sweeps for stranded ones.
  const webhookWaker = await startWebhookWaker({
    databaseUrl: required(config.database.sessionUrl, 'DATABASE_SESSION_URL'),
    pool,
    temporal: new TemporalGateway(
      new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal.payloadKeys) }),
    ),
    taskQueue: taskQueues(config).webhooks,
    wakes: webhookWakes,
    log: logger,
  });
  // One stops, all stop (the Runtime's SIGTERM stops them at once).
  const workers = [worker, mediaWorker, webhookWorker, drainerWorker];
  const stopAll = () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  };
  const done = Promise.allSettled(workers.map((w) => w.run().finally(stopAll))).then(async (results) => {
    await webhookWaker.close().catch((err: unknown) => logger.warn({ err }, 'closing the webhook waker failed'));
    await drainerShards.stop();
    await connection.close();
    await pool.end();
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  });
  return {
    worker,
    mediaWorker,
    webhookWorker,
    drainerWorker,
    pool,
    done,
    async shutdown() {
      stopAll();
      await done;
    },
  };
}

/**
 * Aborts `controller` once the worker leaves RUNNING, however its shutdown began (a signal the SDK
 * Runtime handles, or shutdown()).
 */
export function abortWhenStopping(worker: Pick<Worker, 'getState'>, controller: AbortController, everyMs = 200): void {
  const timer = setInterval(() => {
    if (worker.getState() === 'INITIALIZED' || worker.getState() === 'RUNNING') return;
    controller.abort();
    clearInterval(timer);
  }, everyMs);
  timer.unref();
}

if (isEntryPoint(import.meta.url)) {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'intake-worker');
  // The SDK Runtime shuts the worker down gracefully on SIGINT/SIGTERM (in-flight activities get
  // WORKER_SHUTDOWN_GRACE_SECONDS to finish); run() then resolves.
  const metrics = config.metrics.port === null ? null : createWorkerMetrics({ sdkPort: await freePort() });
  Runtime.install({
    logger: sdkLogger(logger),
    telemetryOptions: { logging: sdkLogging(config.logLevel), ...(metrics ? { metrics: sdkPrometheus(metrics.sdkBindAddress) } : {}) },
  });
  startTracing(config, 'intake-worker');
  const running = await startWorker(config, logger, metrics ? { metrics: metrics.activities } : {});
  logger.info({ taskQueues: taskQueues(config) }, 'worker running');
  metrics?.watch(running.pool);
  const health =
    config.metrics.port === null || !metrics
      ? null
      : await startWorkerHttp({ host: config.metrics.host, port: config.metrics.port, running, logger, metrics: () => metrics.scrape() });
  await running.done;
  await stopTracing();
  await health?.close();
  logger.info('worker stopped');
}
