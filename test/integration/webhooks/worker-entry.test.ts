import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startWorker, type RunningWorker } from '../../../src/main/worker.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase, quietLogger, testStack, workflowBundle } from '../../../harness/stack.js';
import { waitFor } from '../../../harness/wait.js';
import { createTestEndpoint, deliveriesOf, record, TestReceiver } from '../../helpers/webhooks.js';

/**
 * The production worker (src/main/worker.ts) as `npm start` runs it (NODE_ENV=development): its
 * LISTEN waker wakes the endpoint's workflow when an event commits, and its sender may reach a
 * loopback receiver, which production refuses.
 */
describe('webhook delivery: the production worker in development', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  let running: RunningWorker | undefined;
  const receiver = new TestReceiver();
  after(async () => {
    await running?.shutdown();
    await receiver.close();
    await pool?.end();
  });

  it('delivers a committed event to a loopback receiver, signed', async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    const stack = await testStack();
    const bundlePath = path.join(stack.tmpDir, `bundle-${process.pid}.js`);
    if (!existsSync(bundlePath)) await writeFile(bundlePath, (await workflowBundle()).code);
    const config = testConfig({
      NODE_ENV: 'development',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporal.address,
      TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
      WORKFLOW_BUNDLE_PATH: bundlePath,
    });
    running = await startWorker(config, quietLogger as never);
    const org = await createTestOrg(pool);
    const endpoint = await createTestEndpoint(pool, org.organizationId, { url: await receiver.listen() });
    receiver.secrets = [endpoint.secret];
    const subjectId = randomUUID();
    await record(pool, {
      type: 'recording.transcript_completed',
      organizationId: org.organizationId,
      subjectId,
      payload: { recordingId: subjectId, source: 'api' },
    });
    // Well within the sweep's 15 s: the notification woke it.
    assert.ok(await waitFor(async () => receiver.received.length > 0, 10_000), 'delivered');
    assert.deepEqual(receiver.received[0]!.verifiedWith, [0]);
    assert.ok(await waitFor(async () => (await deliveriesOf(pool, endpoint.id))[0]?.status === 'succeeded', 10_000));
  });
});
