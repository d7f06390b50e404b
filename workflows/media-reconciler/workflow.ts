import { proxyActivities } from '@temporalio/workflow';
import type { MediaReconcilerActivities } from '../../activities/media-reconciler.js';
import { reconcileInRounds } from '../reconciler-rounds.js';
import type { MediaReconcilerInput, MediaReconcilerResult } from './contract.js';

const { reconcileMediaIngestions } = proxyActivities<MediaReconcilerActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * One round: active ingestions whose workflow is not running are started again (nothing happened
 * yet: `waiting`) or failed (`processing_interrupted`: a run ended mid-way), and running ones still
 * waiting for an upload whose bytes are all in are told, a batch at a time.
 */
export async function mediaReconcilerWorkflow(input: MediaReconcilerInput): Promise<MediaReconcilerResult> {
  const batchSize = input.batchSize ?? 200;
  const total = { restarted: 0, failed: 0, told: 0 };
  await reconcileInRounds<string | null>(null, async (after) => {
    const round = await reconcileMediaIngestions(input.settings, input.olderThanSeconds, batchSize, after);
    total.restarted += round.restarted;
    total.failed += round.failed;
    // A round of an earlier version has no `told`.
    total.told += round.told ?? 0;
    return round.checked < batchSize || round.last === null ? null : { next: round.last };
  });
  return total;
}
