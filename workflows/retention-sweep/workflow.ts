import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../../activities/retention.js';
import type { RetentionSweepInput, RetentionSweepResult } from './contract.js';

const { deleteExpiredConversations } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

const BATCHES_PER_RUN = 500;

/**
 * Deletes every conversation past its application's retention, a batch at a time, until a batch
 * comes back short. Each batch is its own transaction, so a crash resumes where it stopped.
 */
export async function retentionSweepWorkflow(input: RetentionSweepInput): Promise<RetentionSweepResult> {
  const batchSize = input.batchSize ?? 25;
  let deleted = input.deletedSoFar ?? 0;
  for (let i = 0; i < BATCHES_PER_RUN; i++) {
    const n = await deleteExpiredConversations(batchSize);
    deleted += n;
    if (n < batchSize) return { deletedSessions: deleted };
  }
  return continueAsNew<typeof retentionSweepWorkflow>({ ...input, deletedSoFar: deleted });
}
