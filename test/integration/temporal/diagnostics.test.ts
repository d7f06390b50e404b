import { strict as assert } from 'node:assert';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { buildWorkflowBundle } from '../../../src/temporal/build-bundle.js';
import { testActivityDeps } from '../../../harness/worker.js';
import { createWorker } from '../../../src/temporal/worker.js';
import { createActivities } from '../../../activities/index.js';
import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { connectTemporalClient, type TemporalClient } from '../../../src/temporal/connection.js';
import { diagnosticsWorkflowId } from '../../../src/temporal/ids.js';
import { STATUS } from '../../../src/temporal/search-attributes.js';
import { diagnosticsWorkflow } from '../../../workflows/diagnostics/workflow.js';
import { testConfig } from '../../../harness/config.js';
import { createTestDatabase, quietLogger, testStack } from '../../../harness/stack.js';
import { startTestWorker, type TestWorker } from '../../../harness/worker.js';

describe('worker and diagnostics workflow (real Temporal)', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  let worker: TestWorker;
  let temporal: TemporalClient;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    worker = await startTestWorker(pool);
    temporal = await connectTemporalClient({ temporal: { ...testConfig().temporal, address: (await testStack()).temporal.address } });
  });
  after(async () => {
    await worker?.stop();
    await temporal?.connection.close();
    await pool?.end();
  });

  it('runs the workflow end to end: worker polls, activity reaches PostgreSQL, search attributes set', async () => {
    const workflowId = diagnosticsWorkflowId(randomUUID());
    const handle = await temporal.client.workflow.start(diagnosticsWorkflow, {
      workflowId,
      taskQueue: worker.taskQueue,
      args: [{ version: 1, requestedBy: 'test' }],
    });
    const result = await handle.result();
    assert.equal(result.requestedBy, 'test');
    assert.equal(result.worker.taskQueue, worker.taskQueue);
    assert.match(result.database.serverVersion, /^\d+/);
    assert.equal(result.database.migrationsApplied >= 1, true);
    assert.equal(result.database.latestMigration?.endsWith('.sql'), true);
    const description = await handle.describe();
    assert.equal(description.typedSearchAttributes.get(STATUS), 'done');
    assert.equal(workflowId.startsWith('diagnostics/'), true);
  });

  it('runs from the prebuilt bundle production workers load (npm run build, WORKFLOW_BUNDLE_PATH)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-bundle-'));
    const bundlePath = await buildWorkflowBundle(path.join(dir, 'workflow-bundle.js'), quietLogger);
    const connection = await NativeConnection.connect({ address: (await testStack()).temporal.address });
    const taskQueue = `bundle-${randomUUID()}`;
    const prod = await createWorker({
      connection,
      namespace: 'default',
      taskQueue,
      activities: createActivities(testActivityDeps(pool)),
      workflowBundlePath: bundlePath,
      shutdownGraceSeconds: 2,
      payloadKeys: testConfig().temporal.payloadKeys,
    });
    try {
      const result = await prod.runUntil(
        temporal.client.workflow.execute(diagnosticsWorkflow, {
          workflowId: diagnosticsWorkflowId(randomUUID()),
          taskQueue,
          args: [{ version: 1, requestedBy: 'bundle' }],
        }),
      );
      assert.equal(result.requestedBy, 'bundle');
      assert.equal(result.worker.taskQueue, taskQueue);
    } finally {
      await connection.close();
    }
  });
});
