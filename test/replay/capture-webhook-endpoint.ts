/**
 * Captures the webhook endpoint workflow's history (issue 31) like capture-histories.ts does for the
 * others: `npx tsx test/replay/capture-webhook-endpoint.ts`. One run: a delivery answered 500 and
 * retried after a timer, a wake for a second event, then the quiet end.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { createDatabasePool } from '../../src/db/pool.js';
import { testDataConverter, testConfig } from '../../harness/config.js';
import { createTestOrg } from '../../harness/fixtures.js';
import { createTestDatabase, stopTestStack, testStack } from '../../harness/stack.js';
import { LOOPBACK_POLICY, startTestWorker } from '../../harness/worker.js';
import { createTestEndpoint, deliveriesOf, record, TestReceiver } from '../helpers/webhooks.js';
import {
  WEBHOOK_ENDPOINT_WORKFLOW,
  wakeSignal,
  webhookEndpointWorkflowId,
  type WebhookEndpointInput,
} from '../../workflows/webhook-endpoint/contract.js';
import { saveHistory } from './save-history.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

const databaseUrl = await createTestDatabase();
const pool = await createDatabasePool(databaseUrl);
const worker = await startTestWorker(pool, {
  drainer: false,
  deps: { webhooks: { payloadKeys: testConfig().temporal.payloadKeys!, policy: LOOPBACK_POLICY, retryDelaysMs: [500] } },
});
const connection = await Connection.connect({ address: (await testStack()).temporal.address });
const client = new Client({ connection, dataConverter: testDataConverter() });
const receiver = new TestReceiver();
try {
  const org = await createTestOrg(pool);
  const endpoint = await createTestEndpoint(pool, org.organizationId, { url: await receiver.listen() });
  receiver.answer = (_r, i) => (i === 0 ? 500 : 200);
  const event = () => {
    const id = randomUUID();
    return record(pool, {
      type: 'recording.media_ready',
      organizationId: org.organizationId,
      subjectId: id,
      payload: { recordingId: id, ingestionId: randomUUID() },
    });
  };
  await event();
  const input: WebhookEndpointInput = { endpointId: endpoint.id, idleSeconds: 3 };
  const start = () =>
    client.workflow.signalWithStart(WEBHOOK_ENDPOINT_WORKFLOW, {
      workflowId: webhookEndpointWorkflowId(endpoint.id),
      taskQueue: worker.taskQueue,
      args: [input],
      signal: wakeSignal,
      signalArgs: [],
    });
  const handle = await start();
  const settled = async (n: number) => {
    for (;;) {
      const rows = await deliveriesOf(pool, endpoint.id);
      if (rows.length === n && rows.every((d) => d.status === 'succeeded')) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await settled(1);
  await event();
  await start();
  await settled(2);
  await handle.result();
  await saveHistory('webhook-endpoint', 'v1', handle);
} finally {
  await receiver.close();
  await worker.stop();
  await connection.close();
  await pool.end();
  await stopTestStack();
}
