import { Runtime, type Worker } from '@temporalio/worker';
import { loadConfig, required, type Config } from '../config.js';
import { createDatabasePool } from '../db/pool.js';
import { createLogger, type Logger } from '../logger.js';
import { ensureSearchAttributes } from '../temporal/search-attributes.js';
import { connectTemporalClient, connectTemporalWorker } from '../temporal/connection.js';
import { ensureRetentionSchedule, ensureSessionWakesSchedule } from '../temporal/schedules.js';
import { sessionWorkflowSettings } from '../agents/session-workflow.js';
import { ensureSessionDrainer } from '../agents/drainer-workflow.js';
import { sdkLogger } from '../temporal/sdk-logger.js';
import { taskQueues } from '../temporal/task-queues.js';
import { createWorker } from '../temporal/worker.js';
import { retryStartup } from './retry.js';
import { activityDeps } from '../../activities/index.js';

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has drained and every connection is closed. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  const pool = await createDatabasePool(required(config.database.url, 'DATABASE_URL'), config.database);
  const admin = await retryStartup('Temporal', logger, () => connectTemporalClient(config));
  try {
    await ensureSearchAttributes(admin.connection, config.temporal.namespace, logger);
    await ensureRetentionSchedule(admin.client, { taskQueue: taskQueues(config).main, everyMinutes: config.agents.retentionSweepMinutes }, logger);
    await ensureSessionWakesSchedule(admin.client, {
      taskQueue: taskQueues(config).main, everySeconds: config.agents.wakeReconcileSeconds, settings: sessionWorkflowSettings(config),
    }, logger);
    await ensureSessionDrainer(admin.client, taskQueues(config).main);
  } finally {
    await admin.connection.close();
  }
  const connection = await connectTemporalWorker(config);
  const stopping = new AbortController();
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: taskQueues(config).main,
    activities: { ...activityDeps(pool, config), workerStopping: stopping.signal },
    workflowBundlePath: config.temporal.workflowBundlePath,
    shutdownGraceSeconds: config.temporal.shutdownGraceSeconds,
  });
  abortWhenStopping(worker, stopping);
  const done = worker.run().finally(async () => {
    await connection.close();
    await pool.end();
  });
  return {
    worker,
    done,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'intake-worker');
  // The SDK Runtime shuts the worker down gracefully on SIGINT/SIGTERM (in-flight activities get
  // WORKER_SHUTDOWN_GRACE_SECONDS to finish); run() then resolves.
  Runtime.install({ logger: sdkLogger(config.logLevel) });
  const running = await startWorker(config, logger);
  logger.info({ taskQueue: taskQueues(config).main }, 'worker running');
  await running.done;
  logger.info('worker stopped');
}
