import type { Logger } from '../logger.js';
import { startOpsServer, type OpsServer } from '../metrics/server.js';
import type { RunningWorker } from './worker.js';

/**
 * The worker's operational endpoint: `GET /healthz` answers 200 while every one of the process's
 * Temporal workers (main, media, webhooks and drainers queues) runs, 503 with their states otherwise (a worker that
 * failed or is shutting down takes no work: restart it); `GET /metrics` when `metrics` is given.
 */
export function startWorkerHttp(o: {
  host: string;
  port: number;
  running: RunningWorker;
  logger: Logger;
  metrics?: () => Promise<string>;
}): Promise<OpsServer> {
  const metrics = o.metrics;
  return startOpsServer({
    host: o.host,
    port: o.port,
    logger: o.logger,
    routes: {
      '/healthz': async () => {
        const workers = {
          main: o.running.worker.getState(),
          media: o.running.mediaWorker.getState(),
          webhooks: o.running.webhookWorker.getState(),
          drainers: o.running.drainerWorker.getState(),
        };
        const ok = Object.values(workers).every((state) => state === 'RUNNING');
        return {
          status: ok ? 200 : 503,
          contentType: 'application/json',
          body: JSON.stringify({ status: ok ? 'ok' : 'unavailable', workers }),
        };
      },
      ...(metrics
        ? { '/metrics': async () => ({ status: 200, contentType: 'text/plain; version=0.0.4; charset=utf-8', body: await metrics() }) }
        : {}),
    },
  });
}
