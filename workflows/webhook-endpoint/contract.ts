import { defineSignal } from '@temporalio/workflow';

/**
 * The webhook sender of one endpoint (issue 31): `webhook-endpoint/<endpointId>`, started (or woken)
 * with signal-with-start by src/webhooks/endpoint-workflow.ts whenever deliveries for the endpoint
 * are created, redelivered or found due by the safety sweep. It sends the endpoint's due
 * deliveries, then sleeps until the next is due or it is woken; with nothing pending it ends after
 * a quiet while (the next wake starts it again).
 */
export const WEBHOOK_ENDPOINT_WORKFLOW = 'webhookEndpointWorkflow';

export function webhookEndpointWorkflowId(endpointId: string): string {
  return `webhook-endpoint/${endpointId}`;
}

export interface WebhookEndpointInput {
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1;
  endpointId: string;
  /** With nothing pending and no wake for this long, the workflow ends (default 600). */
  idleSeconds?: number;
}

/**
 * A `sendDueWebhooks` call's start-to-close timeout: the latest a call can still run, which its
 * process announces to the others (src/webhooks/wakes.ts). A call stops starting deliveries after
 * 60 s (CALL_BUDGET_MS) and each takes at most 15 s.
 */
export const SEND_CALL_TIMEOUT_MS = 120_000;

/** Deliveries are due (new, redelivered, or found by the sweep). */
export const wakeSignal = defineSignal('wake');

/** What one call of the `sendDueWebhooks` activity did. */
export interface SendDueResult {
  /** `gone`: deleted; `disabled`: nothing is sent until it is enabled again. */
  endpoint: 'active' | 'disabled' | 'gone';
  /** Deliveries attempted by this call. */
  attempted: number;
  /** More deliveries may be due now (the call stopped at its batch size or time budget). */
  more: boolean;
  /** When the earliest pending delivery that may be sent is due (ISO time), or null: none pending. */
  nextDueAt: string | null;
}
