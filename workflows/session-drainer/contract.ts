/**
 * The session drainer: long-lived workflows, `shards` per task queue, whose activity consumes the
 * requested session wakes of its shard from PostgreSQL (see src/agents/drainer.ts and
 * drainer-shards.ts). Started, or found running, by every worker at start.
 */
export const SESSION_DRAINER_WORKFLOW = 'sessionDrainerWorkflow';

/** Shard `shard` (from 0) of `shards`: `agent-session-drainer/<taskQueue>/<shard + 1>-of-<shards>`. */
export function sessionDrainerWorkflowId(taskQueue: string, shard: number, shards: number): string {
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
}

export interface SessionDrainerActivityResult {
  sessions: number;
  events: number;
  analyses: number;
  signals: number;
  /** The call ended early: its worker holds more than its share of the shards (the workflow calls again). */
  yielded?: boolean;
}
