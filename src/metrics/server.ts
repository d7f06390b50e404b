import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.js';
import type { ErrorKey } from '../errors.js';

export interface OpsResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface OpsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * A process's operational endpoint on METRICS_HOST:METRICS_PORT, apart from the API's port (not
 * behind the load balancer, not published): `GET /metrics` for Prometheus, and `/healthz` on the
 * worker. Only the paths given are served.
 */
export async function startOpsServer(o: {
  host: string;
  port: number;
  logger: Logger;
  routes: Record<string, () => Promise<OpsResponse>>;
}): Promise<OpsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = o.routes[path];
    if (req.method !== 'GET' || !route) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ message: 'Not found.', errorCode: 'route_not_found' satisfies ErrorKey }));
      return;
    }
    route().then(
      (answer) => res.writeHead(answer.status, { 'content-type': answer.contentType, 'cache-control': 'no-store' }).end(answer.body),
      (error: unknown) => {
        o.logger.warn({ err: error, path }, 'operational endpoint failed');
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'Internal error.', errorCode: 'internal_error' satisfies ErrorKey }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${o.host === '0.0.0.0' ? '127.0.0.1' : o.host}:${port}`;
  o.logger.info({ url, paths: Object.keys(o.routes) }, 'operational endpoint listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
