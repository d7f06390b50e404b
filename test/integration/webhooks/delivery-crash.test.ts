import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startWebhookWaker, type WebhookWaker } from '../../../src/webhooks/waker.js';
import { createTestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { waitFor } from '../../../harness/wait.js';
import { killWorkerProcess, startTestWorker, startWorkerProcess, type TestWorker } from '../../../harness/worker.js';
import { createTestEndpoint, deliveriesOf, record, testGateway, TestReceiver } from '../../helpers/webhooks.js';

const EVENTS = 12;

/** Nothing lost, nothing sent under a new id: a worker SIGKILLed mid-delivery (issue 31). */
describe('webhook delivery: a worker killed mid-delivery', function () {
  this.timeout(180_000);
  let pool: DatabasePool;
  let child: ChildProcess | undefined;
  let replacement: TestWorker | undefined;
  let waker: WebhookWaker | undefined;
  let temporal: Awaited<ReturnType<typeof testGateway>> | undefined;
  const receiver = new TestReceiver();

  after(async () => {
    if (child) await killWorkerProcess(child);
    await waker?.close();
    await replacement?.stop();
    await temporal?.close();
    await receiver.close();
    await pool?.end();
  });

  it('the next worker resends the delivery in flight with the same webhook-id, and every event reaches the receiver once by id', async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    const org = await createTestOrg(pool);
    const taskQueue = `test-${randomUUID()}`;
    child = await startWorkerProcess({ databaseUrl, taskQueue, webhookRetryDelaysMs: [200, 200, 200] });
    temporal = await testGateway();
    waker = await startWebhookWaker({ databaseUrl, pool, temporal: temporal.gateway, taskQueue: `${taskQueue}-webhooks`, sweepMs: 2000 });
    const endpoint = await createTestEndpoint(pool, org.organizationId, { url: await receiver.listen() });
    receiver.secrets = [endpoint.secret];

    // The 4th request is held unanswered: the worker is killed while it waits for the answer.
    let holding: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (holding = resolve));
    receiver.answer = (_r, i) => {
      if (i !== 3) return 200;
      holding!();
      return 'hang';
    };
    for (let i = 0; i < EVENTS; i++) {
      const subjectId = randomUUID();
      await record(pool, {
        type: 'recording.media_ready',
        organizationId: org.organizationId,
        subjectId,
        payload: { recordingId: subjectId, ingestionId: randomUUID() },
      });
    }
    await held;
    const inFlight = receiver.received[3]!.id;
    await killWorkerProcess(child);
    child = undefined;

    // A new worker on the task queue: the activity is retried after its heartbeat timeout.
    replacement = await startTestWorker(pool, { taskQueue, drainer: false });
    assert.ok(
      await waitFor(async () => (await deliveriesOf(pool, endpoint.id)).every((d) => d.status === 'succeeded'), 90_000),
      'every delivery succeeded',
    );

    const deliveries = await deliveriesOf(pool, endpoint.id);
    assert.equal(deliveries.length, EVENTS);
    assert.equal(new Set(deliveries.map((d) => d.event_id)).size, EVENTS);
    // Each event by one id: the ids the receiver saw are exactly the deliveries' ids...
    assert.deepEqual([...new Set(receiver.ids())].sort(), deliveries.map((d) => d.id).sort());
    // ... the one in flight again under its id, every request signed.
    assert.ok(receiver.ids().filter((id) => id === inFlight).length >= 2);
    assert.ok(receiver.received.every((r) => r.verifiedWith.length === 1));
    // Each id always carried the same body.
    for (const d of deliveries) assert.ok(receiver.received.filter((r) => r.id === d.id).every((r) => r.body === d.body));
  });
});
