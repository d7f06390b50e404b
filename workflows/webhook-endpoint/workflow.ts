import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from '../../activities/webhooks.js';
import { SEND_CALL_TIMEOUT_MS, wakeSignal, type WebhookEndpointInput } from './contract.js';
import { nextStep } from './state.js';

/** Calls per run before continuing as new (each is a handful of history events). */
const CALLS_PER_RUN = 500;
const DEFAULT_IDLE_SECONDS = 600;

/**
 * Sends one endpoint's deliveries (see contract.ts). A worker that dies mid-call stops heartbeating;
 * the call is retried after the heartbeat timeout and sends the deliveries it had not recorded
 * again, with the same `webhook-id`s (the delivery rows are the state; nothing is lost meanwhile).
 */
export async function webhookEndpointWorkflow(input: WebhookEndpointInput): Promise<void> {
  const { sendDueWebhooks } = proxyActivities<WebhookActivities>({
    // A call stops starting deliveries after 60 s (CALL_BUDGET_MS); each takes at most 15 s.
    startToCloseTimeout: SEND_CALL_TIMEOUT_MS,
    heartbeatTimeout: '15 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  let woken = false;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  const idleMs = (input.idleSeconds ?? DEFAULT_IDLE_SECONDS) * 1000;
  for (let i = 0; i < CALLS_PER_RUN && !workflowInfo().continueAsNewSuggested; i++) {
    woken = false;
    const step = nextStep(await sendDueWebhooks(input.endpointId), Date.now(), idleMs);
    if (step.kind === 'end') return;
    if (step.kind === 'now') continue;
    const wokenUp = await condition(() => woken, step.ms);
    if (!wokenUp && step.endIfQuiet) return;
  }
  await continueAsNew<typeof webhookEndpointWorkflow>(input);
}
