import { proxyActivities } from '@temporalio/workflow';
import type { SessionWakeActivities } from '../../activities/session-wakes.js';
import { reconcileInRounds } from '../reconciler-rounds.js';
import type { SessionWakesInput, SessionWakesResult } from './contract.js';

const { wakeStrandedSessions } = proxyActivities<SessionWakeActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * One round of reconciliation: wakes stranded sessions a batch at a time until a batch comes back
 * short or wakes none (or after a bounded number of batches; the next scheduled run goes on).
 */
export async function sessionWakesWorkflow(input: SessionWakesInput): Promise<SessionWakesResult> {
  const batchSize = input.batchSize ?? 500;
  let woken = 0;
  // No cursor: a woken session is no longer stranded, so each batch selects the next ones.
  await reconcileInRounds(null, async () => {
    const found = await wakeStrandedSessions(input.settings, input.olderThanSeconds, batchSize);
    woken += found.woken;
    return found.stranded < batchSize || found.woken === 0 ? null : { next: null };
  });
  return { wokenSessions: woken };
}
