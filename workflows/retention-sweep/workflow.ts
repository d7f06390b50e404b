import { continueAsNew, patched, proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../../activities/retention.js';
import {
  AUTHORIZATION_PURGE_BATCH,
  EVENT_PURGE_BATCH,
  IDEMPOTENCY_KEY_PURGE_BATCH,
  type RetentionSweepInput,
  type RetentionSweepResult,
} from './contract.js';

const { deleteExpiredConversations, maintainEventPartitions, purgeExpiredAuthorizations, purgeExpiredEvents, purgeExpiredIdempotencyKeys } =
  proxyActivities<RetentionActivities>({
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });

const BATCHES_PER_RUN = 500;

/** Sweeps since this patch also purge the authorization server's expired rows (issue 20). */
export const PURGE_AUTHORIZATIONS_PATCH = 'retention-purge-authorizations';
/** Activity calls of AUTHORIZATION_PURGE_BATCH rows per sweep at most (the next sweep goes on). */
const AUTHORIZATION_PURGE_BATCHES = 100;

/** Sweeps since this patch also purge domain events past their retention (issue 30, point 6). */
export const PURGE_EVENTS_PATCH = 'retention-purge-domain-events';
/** Activity calls of EVENT_PURGE_BATCH events per sweep at most (the next sweep goes on). */
const EVENT_PURGE_BATCHES = 100;

/** Sweeps since this patch also purge idempotency keys past their 24 hours (issue 31, point 3). */
export const PURGE_IDEMPOTENCY_KEYS_PATCH = 'retention-purge-idempotency-keys';
/** Activity calls of IDEMPOTENCY_KEY_PURGE_BATCH keys per sweep at most (the next sweep goes on). */
const IDEMPOTENCY_KEY_PURGE_BATCHES = 100;

/**
 * Sweeps since this patch first keep agent_events' weekly partitions (decision 0216): the weeks
 * ahead attached, and whole weeks past retention dropped before the row-by-row batches.
 */
export const EVENT_PARTITIONS_PATCH = 'retention-event-partitions';

/**
 * The weekly partitions first (sweeps since EVENT_PARTITIONS_PATCH, once per sweep, not again after
 * a continue-as-new); then deletes every conversation past its application's retention, a batch at a time, until a batch
 * comes back short; then the MCP authorization server's expired codes, tokens, sessions and
 * grants; then the domain events past their retention; then the idempotency keys past their 24 hours. Each batch is its own transaction, so a crash resumes where it stopped.
 */
export async function retentionSweepWorkflow(input: RetentionSweepInput): Promise<RetentionSweepResult> {
  const batchSize = input.batchSize ?? 25;
  let deleted = input.deletedSoFar ?? 0;
  let droppedPartitions = input.droppedPartitionsSoFar ?? 0;
  if (input.deletedSoFar === undefined && patched(EVENT_PARTITIONS_PATCH)) {
    const partitions = await maintainEventPartitions();
    deleted += partitions.deletedSessions;
    droppedPartitions += partitions.dropped;
  }
  for (let i = 0; i < BATCHES_PER_RUN; i++) {
    const n = await deleteExpiredConversations(batchSize);
    deleted += n;
    if (n < batchSize) {
      if (!patched(PURGE_AUTHORIZATIONS_PATCH)) return { deletedSessions: deleted };
      let purged = 0;
      for (let j = 0; j < AUTHORIZATION_PURGE_BATCHES; j++) {
        const m = await purgeExpiredAuthorizations(AUTHORIZATION_PURGE_BATCH);
        purged += m;
        if (m < AUTHORIZATION_PURGE_BATCH) break;
      }
      if (!patched(PURGE_EVENTS_PATCH)) return { deletedSessions: deleted, purgedAuthorizations: purged };
      let events = 0;
      for (let j = 0; j < EVENT_PURGE_BATCHES; j++) {
        const m = await purgeExpiredEvents(EVENT_PURGE_BATCH);
        events += m;
        if (m < EVENT_PURGE_BATCH) break;
      }
      const done = {
        deletedSessions: deleted,
        ...(droppedPartitions ? { droppedPartitions } : {}),
        purgedAuthorizations: purged,
        ...(events ? { purgedEvents: events } : {}),
      };
      if (!patched(PURGE_IDEMPOTENCY_KEYS_PATCH)) return done;
      let keys = 0;
      for (let j = 0; j < IDEMPOTENCY_KEY_PURGE_BATCHES; j++) {
        const m = await purgeExpiredIdempotencyKeys(IDEMPOTENCY_KEY_PURGE_BATCH);
        keys += m;
        if (m < IDEMPOTENCY_KEY_PURGE_BATCH) break;
      }
      return { ...done, ...(keys ? { purgedIdempotencyKeys: keys } : {}) };
    }
  }
  return continueAsNew<typeof retentionSweepWorkflow>({
    ...input,
    deletedSoFar: deleted,
    ...(droppedPartitions ? { droppedPartitionsSoFar: droppedPartitions } : {}),
  });
}
