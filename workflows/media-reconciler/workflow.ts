import { proxyActivities } from '@temporalio/workflow';
import type { MediaReconcilerActivities } from '../../activities/media-reconciler.js';
import type { MediaReconcilerInput, MediaReconcilerResult } from './contract.js';

const { reconcileMediaIngestions } = proxyActivities<MediaReconcilerActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const ROUNDS_PER_RUN = 20;

/**
 * One round: active ingestions whose workflow is not running are started again (nothing happened
 * yet: `waiting`) or failed (`processing_interrupted`: a run ended mid-way), a batch at a time.
 */
export async function mediaReconcilerWorkflow(input: MediaReconcilerInput): Promise<MediaReconcilerResult> {
  const batchSize = input.batchSize ?? 200;
  const total = { restarted: 0, failed: 0 };
  let after: string | null = null;
  for (let i = 0; i < ROUNDS_PER_RUN; i++) {
    const round: { checked: number; restarted: number; failed: number; last: string | null } = await reconcileMediaIngestions(
      input.settings,
      input.olderThanSeconds,
      batchSize,
      after,
    );
    total.restarted += round.restarted;
    total.failed += round.failed;
    if (round.checked < batchSize || round.last === null) break;
    after = round.last;
  }
  return total;
}
