/**
 * The session drainer: long-lived workflows, `shards` per task queue, whose activity consumes the
 * requested session wakes of its shard from PostgreSQL (see src/agents/drainer.ts and
 * drainer-shards.ts). Started, or found running, by every worker at start.
 */
export const SESSION_DRAINER_WORKFLOW = 'sessionDrainerWorkflow';

/**
 * The task queue the drainers of main queue `taskQueue` run on, workflows and activity alike
 * (decision 0211): a shard's workflow task between two calls never queues behind the sessions'.
 */
export function sessionDrainerTaskQueue(taskQueue: string): string {
  return `${taskQueue}-drainers`;
}

/**
 * Shard `shard` (from 0) of `shards` of main queue `taskQueue`, on the drainers' own queue:
 * `agent-session-drainer/<taskQueue>-drainers/<shard + 1>-of-<shards>`.
 */
export function sessionDrainerWorkflowId(taskQueue: string, shard: number, shards: number): string {
  return mainQueueSessionDrainerWorkflowId(sessionDrainerTaskQueue(taskQueue), shard, shards);
}

/** Before decision 0211: a shard's drainer on the main queue itself (it ends itself now). */
export function mainQueueSessionDrainerWorkflowId(taskQueue: string, shard: number, shards: number): string {
  return `agent-session-drainer/${taskQueue}/${shard + 1}-of-${shards}`;
}

/** Before issue 34: the task queue's one drainer, which drained every session (it ends itself now). */
export function legacySessionDrainerWorkflowId(taskQueue: string): string {
  return `agent-session-drainer/${taskQueue}`;
}

/** The drainer's settings are the worker's own (configuration), read by each activity call. */
export interface SessionDrainerInput {
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1;
  /** The shard (from 0) this drainer drains, of `shards`; both absent: the legacy drainer of every session. */
  shard?: number;
  shards?: number;
  /** Started on the drainers' own queue (decision 0211); absent on a shard's drainer of before, which ends itself. */
  ownTaskQueue?: true;
}

export interface SessionDrainerActivityResult {
  sessions: number;
  events: number;
  analyses: number;
  signals: number;
  /** The call ended early: its worker holds more than its share of the shards (the workflow calls again). */
  yielded?: boolean;
}
