/** The retention sweep, started by the Temporal Schedule `agent-retention-sweep` (or by hand). */
export const RETENTION_SWEEP_WORKFLOW = 'retentionSweepWorkflow';
export const RETENTION_SCHEDULE_ID = 'agent-retention-sweep';

export function retentionSweepWorkflowId(): string {
  return 'retention-sweep';
}

/** Expired authorization rows deleted per call (the sweep's activity, and `intake retention sweep`). */
export const AUTHORIZATION_PURGE_BATCH = 1000;

/** Domain events past DOMAIN_EVENT_RETENTION_DAYS deleted per call (the sweep's activity, and `intake retention sweep`). */
export const EVENT_PURGE_BATCH = 5000;

/** Idempotency keys past their 24 hours deleted per call (the sweep's activity, and `intake retention sweep`). */
export const IDEMPOTENCY_KEY_PURGE_BATCH = 5000;

export interface RetentionSweepInput {
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1;
  /** Conversations deleted per activity call. */
  batchSize?: number;
  /** Carried over continue-as-new. */
  deletedSoFar?: number;
  /** Carried over continue-as-new (sweeps since EVENT_PARTITIONS_PATCH). */
  droppedPartitionsSoFar?: number;
}

/** What the sweep's partition work did (decision 0216). */
export interface EventPartitionsOutcome {
  /** Weekly partitions attached ahead. */
  attached: number;
  /** Weekly partitions dropped, every session of theirs past retention. */
  dropped: number;
  /** The conversations deleted with them. */
  deletedSessions: number;
  /** Droppable partitions whose locks were busy (the next sweep tries again). */
  busy: number;
}

export interface RetentionSweepResult {
  /** Conversations deleted, those of dropped partitions included. */
  deletedSessions: number;
  /** Weekly partitions of agent_events dropped; absent when none were (and in sweeps before it). */
  droppedPartitions?: number;
  /** Expired rows of the MCP authorization server deleted (codes, tokens, sessions, grants); absent in sweeps before it. */
  purgedAuthorizations?: number;
  /** Domain events past their retention deleted; absent when none were (and in sweeps before it). */
  purgedEvents?: number;
  /** Idempotency keys past their 24 hours deleted; absent when none were (and in sweeps before it). */
  purgedIdempotencyKeys?: number;
}
