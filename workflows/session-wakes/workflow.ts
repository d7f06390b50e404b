import { proxyActivities } from '@temporalio/workflow';
import type { SessionWakeActivities } from '../../activities/session-wakes.js';
import type { SessionWakesInput, SessionWakesResult } from './contract.js';

const { wakeStrandedSessions } = proxyActivities<SessionWakeActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const ROUNDS_PER_RUN = 20;

/**
 * One round of reconciliation: wakes stranded sessions a batch at a time until a batch comes back
 * short (or after a bounded number of batches; the next scheduled run goes on).
 */
export async function sessionWakesWorkflow(input: SessionWakesInput): Promise<SessionWakesResult> {
  const batchSize = input.batchSize ?? 500;
  let woken = 0;
  for (let i = 0; i < ROUNDS_PER_RUN; i++) {
    const found = await wakeStrandedSessions(input.settings, input.olderThanSeconds, batchSize);
    woken += found.woken;
    if (found.stranded < batchSize || found.woken === 0) break;
  }
  return { wokenSessions: woken };
}
