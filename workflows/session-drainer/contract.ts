/**
 * The session drainer: one long-lived workflow per task queue whose activity consumes the requested
 * session wakes from PostgreSQL (see src/agents/drainer.ts). Started, or found running, by every
 * worker at start.
 */
export const SESSION_DRAINER_WORKFLOW = 'sessionDrainerWorkflow';

export function sessionDrainerWorkflowId(taskQueue: string): string {
  return `agent-session-drainer/${taskQueue}`;
}

/** The drainer's settings are the worker's own (configuration), read by each activity call. */
export interface SessionDrainerInput {
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1;
}

export interface SessionDrainerActivityResult {
  sessions: number;
  events: number;
  analyses: number;
  signals: number;
}
