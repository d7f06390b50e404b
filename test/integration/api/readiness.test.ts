import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { isDatabaseUnavailable, isTemporalUnavailable } from '../../../src/dependency-errors.js';
import { connectTemporalClient, type TemporalClient } from '../../../src/temporal/connection.js';
import { packageVersion } from '../../../src/paths.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase, testStack } from '../../../harness/stack.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';
import { eventually } from '../../../harness/wait.js';

/** PostgreSQL and Temporal reached through proxies this test cuts and restores. */
describe('readiness and dependency outages', function () {
  this.timeout(120_000);
  let dbProxy: TcpProxy;
  let temporalProxy: TcpProxy;
  let pool: DatabasePool;
  let temporal: TemporalClient;
  let api: TestApi;
  let org: TestOrg;

  before(async () => {
    const url = new URL(await createTestDatabase());
    const stack = await testStack();
    dbProxy = await TcpProxy.start(Number(url.port));
    temporalProxy = await TcpProxy.start(Number(stack.temporal.address.split(':')[1]));
    url.port = String(dbProxy.port);
    pool = await createDatabasePool(url.toString());
    temporal = await connectTemporalClient({ temporal: { ...testConfig().temporal, address: `127.0.0.1:${temporalProxy.port}` } });
    api = await startTestApi({ pool, temporal });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await pool?.end();
    await temporal?.connection.close();
    await dbProxy?.down();
    await temporalProxy?.down();
  });

  it('answers /healthz and /readyz with 200 while both are up', async () => {
    assert.deepEqual((await api.request('/healthz')).body, { status: 'ok', version: packageVersion() });
    const ready = await api.request('/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ready', checks: { database: 'ok', temporal: 'ok' } });
  });

  it('answers 503 while PostgreSQL is down and recovers by itself when it returns', async () => {
    await dbProxy.down();
    const ready = await api.request('/readyz');
    assert.equal(ready.status, 503);
    assert.deepEqual(ready.body, {
      status: 'not_ready',
      message: 'PostgreSQL is unavailable.',
      errorCode: 'not_ready',
      checks: { database: 'unavailable', temporal: 'ok' },
    });
    const request = await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.equal(request.status, 503);
    assert.equal(request.body.errorCode, 'database_unavailable');
    assert.equal(request.headers.get('retry-after'), '5');
    assert.ok(!JSON.stringify(request.body).includes('ECONNREFUSED'));

    await dbProxy.up();
    const recovered = await eventually(
      () => api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': org.apiKey } }),
      (r) => r.status === 200,
    );
    assert.equal(recovered.status, 200);
    assert.equal((await api.request('/readyz')).status, 200);
  });

  it('stays ready (200, degraded) while Temporal is down: reads and ingest still work; workflow starts are 503; it recovers by itself', async () => {
    await temporalProxy.down();
    const ready = await eventually(
      () => api.request('/readyz'),
      (r) => r.body?.status === 'degraded',
    );
    assert.equal(ready.status, 200, 'a load balancer keeps the replica: most of the API needs no Temporal');
    assert.deepEqual(ready.body, { status: 'degraded', checks: { database: 'ok', temporal: 'unavailable' } });
    const read = await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.equal(read.status, 200, 'reads are served meanwhile');
    // What a route that starts a workflow meets while Temporal is down: classified as 503 temporal_unavailable.
    const failure: unknown = await temporal.connection
      .withDeadline(Date.now() + 2_000, () =>
        temporal.client.workflow.start('diagnosticsWorkflow', { workflowId: 'outage-probe', taskQueue: 'none', args: [] }),
      )
      .then(
        () => null,
        (e: unknown) => e,
      );
    assert.ok(failure, 'starting a workflow must fail while Temporal is down');
    assert.equal(isTemporalUnavailable(failure), true);
    assert.equal(isDatabaseUnavailable(failure), false);

    await temporalProxy.up();
    const recovered = await eventually(
      () => api.request('/readyz'),
      (r) => r.body?.status === 'ready',
      60_000,
    );
    assert.deepEqual([recovered.status, recovered.body.checks], [200, { database: 'ok', temporal: 'ok' }]);
  });
});
