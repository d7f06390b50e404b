import { strict as assert } from 'node:assert';
import { pino } from 'pino';
import type { State } from '@temporalio/worker';
import type { RunningWorker } from '../../../src/main/worker.js';
import { startWorkerHttp } from '../../../src/main/worker-http.js';
import type { OpsServer } from '../../../src/metrics/server.js';

/** The worker's health endpoint over stand-ins for its four Temporal workers (whose state the test sets). */
describe('worker health endpoint', () => {
  const states: { main: State; media: State; webhooks: State; drainers: State } = {
    main: 'RUNNING',
    media: 'RUNNING',
    webhooks: 'RUNNING',
    drainers: 'RUNNING',
  };
  const running = {
    worker: { getState: () => states.main },
    mediaWorker: { getState: () => states.media },
    webhookWorker: { getState: () => states.webhooks },
    drainerWorker: { getState: () => states.drainers },
  } as unknown as RunningWorker;
  let http: OpsServer;

  before(async () => {
    http = await startWorkerHttp({ host: '127.0.0.1', port: 0, running, logger: pino({ level: 'silent' }) });
  });
  after(async () => http?.close());

  it('is 200 while every worker runs, 503 with their states once one stops', async () => {
    const ok = await fetch(`${http.url}/healthz`);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), {
      status: 'ok',
      workers: { main: 'RUNNING', media: 'RUNNING', webhooks: 'RUNNING', drainers: 'RUNNING' },
    });
    states.media = 'FAILED';
    const failed = await fetch(`${http.url}/healthz`);
    assert.equal(failed.status, 503);
    assert.deepEqual(await failed.json(), {
      status: 'unavailable',
      workers: { main: 'RUNNING', media: 'FAILED', webhooks: 'RUNNING', drainers: 'RUNNING' },
    });
    states.media = 'RUNNING';
    states.main = 'DRAINING';
    assert.equal((await fetch(`${http.url}/healthz`)).status, 503);
    states.main = 'RUNNING';
    states.webhooks = 'STOPPED';
    assert.equal((await fetch(`${http.url}/healthz`)).status, 503);
    states.webhooks = 'RUNNING';
    states.drainers = 'FAILED';
    assert.equal((await fetch(`${http.url}/healthz`)).status, 503);
  });

  it('serves nothing else', async () => {
    const res = await fetch(`${http.url}/metrics`);
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { message: 'Not found.', errorCode: 'route_not_found' });
  });
});
