import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { SessionDrainerActivities } from '../../activities/session-drainer.js';
import type { SessionDrainerInput } from './contract.js';

/** Calls per run before continuing as new. */
const CALLS_PER_RUN = 100;

/**
 * Keeps the drain activity running: a call runs for a minute or so (AGENT_DRAIN_RUN_SECONDS of the
 * worker that takes it), heartbeating, then returns and the
 * next one starts. A worker that dies stops heartbeating; the call is retried (on another worker)
 * after the heartbeat timeout. Nothing is lost meanwhile: the wakes wait in PostgreSQL.
 */
export async function sessionDrainerWorkflow(input: SessionDrainerInput): Promise<void> {
  const { drainSessionWakes } = proxyActivities<SessionDrainerActivities>({
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
  });
  for (let i = 0; i < CALLS_PER_RUN && !workflowInfo().continueAsNewSuggested; i++) await drainSessionWakes(input);
  await continueAsNew<typeof sessionDrainerWorkflow>(input);
}
