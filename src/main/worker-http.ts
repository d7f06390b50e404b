import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.js';
import type { RunningWorker } from './worker.js';

export interface WorkerHttp {
  url: string;
  close(): Promise<void>;
}

/**
 * The worker's own HTTP endpoint, for orchestrators: `GET /healthz` answers 200 while both of the
 * process's Temporal workers (main and media queues) run, 503 with their states otherwise (a worker
 * that failed or is shutting down takes no work: restart it). Nothing else is served.
 */
export async function startWorkerHttp(o: { host: string; port: number; running: RunningWorker; logger: Logger }): Promise<WorkerHttp> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/healthz') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not found.', errorCode: 'route_not_found' }));
      return;
    }
    const workers = { main: o.running.worker.getState(), media: o.running.mediaWorker.getState() };
    const ok = workers.main === 'RUNNING' && workers.media === 'RUNNING';
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify({ status: ok ? 'ok' : 'unavailable', workers }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${o.host === '0.0.0.0' ? '127.0.0.1' : o.host}:${port}`;
  o.logger.info({ url }, 'worker health endpoint listening');
  return {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
