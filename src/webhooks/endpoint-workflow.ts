import type { TemporalGateway } from '../temporal/gateway.js';
import {
  WEBHOOK_ENDPOINT_WORKFLOW,
  wakeSignal,
  webhookEndpointWorkflowId,
  type WebhookEndpointInput,
} from '../../workflows/webhook-endpoint/contract.js';

/**
 * The gateway of `webhook-endpoint/<endpointId>`: starts the endpoint's sender, or wakes the running
 * one (deliveries were created, redelivered, or found due). Best effort with the `notify` deadline:
 * a wake that fails is made up for by the safety sweep (src/webhooks/waker.ts).
 */
export async function wakeWebhookEndpoint(temporal: TemporalGateway, taskQueue: string, endpointId: string): Promise<void> {
  const input: WebhookEndpointInput = { endpointId };
  await temporal.run('notify', (client) =>
    client.workflow.signalWithStart(WEBHOOK_ENDPOINT_WORKFLOW, {
      workflowId: webhookEndpointWorkflowId(endpointId),
      taskQueue,
      args: [input],
      signal: wakeSignal,
      signalArgs: [],
    }),
  );
}
