import { Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { sendDue, WebhookSender, type WebhookDeliverySettings } from '../src/webhooks/delivery.js';
import type { WebhookWakes } from '../src/webhooks/wakes.js';
import type { SendDueResult } from '../workflows/webhook-endpoint/contract.js';
import { throttledHeartbeat } from './heartbeat.js';

/** Heartbeats while a call waits on slow receivers (each delivery also heartbeats as it ends). */
const HEARTBEAT_EVERY_MS = 5_000;

export function createWebhookActivities(deps: {
  pool: DatabasePool;
  webhooks?: WebhookDeliverySettings | undefined;
  /** This process's wakes, shared with its webhook waker: calls linger for them (decision 0188). */
  webhookWakes?: WebhookWakes | undefined;
  /** Aborted when the worker begins to shut down: a lingering or long call returns at once. */
  workerStopping?: AbortSignal | undefined;
}) {
  let sender: WebhookSender | undefined;
  return {
    /** Sends an endpoint's due deliveries (src/webhooks/delivery.ts). */
    async sendDueWebhooks(endpointId: string): Promise<SendDueResult> {
      if (!deps.webhooks) throw new Error('this worker has no webhook settings');
      sender ??= new WebhookSender(deps.webhooks);
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        const signal = deps.workerStopping ? AbortSignal.any([ctx.cancellationSignal, deps.workerStopping]) : ctx.cancellationSignal;
        return await sendDue(
          {
            pool: deps.pool,
            sender,
            heartbeat: throttledHeartbeat(() => ctx.heartbeat()),
            signal,
            ...(deps.webhookWakes ? { wakes: deps.webhookWakes } : {}),
          },
          endpointId,
        );
      } finally {
        clearInterval(beat);
      }
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
