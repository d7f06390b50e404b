/**
 * The reconciler of agent session wakes, started by the Temporal Schedule `agent-session-wakes`
 * (or by hand): wakes the sessions whose requested wake was never taken.
 */
export const SESSION_WAKES_WORKFLOW = 'sessionWakesWorkflow';
export const SESSION_WAKES_SCHEDULE_ID = 'agent-session-wakes';

export function sessionWakesWorkflowId(): string {
  return 'agent-session-wakes';
}

/** What starting a session workflow needs (the schedule carries the worker's settings). */
export interface SessionWorkflowSettingsInput {
  taskQueue: string;
  idleTimeoutSeconds: number;
  billingRecheckSeconds: number;
  activityTimeoutSeconds: number;
  historyLimit: number;
}

export interface SessionWakesInput {
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1;
  /** A wake requested longer ago than this was not taken. */
  olderThanSeconds: number;
  settings: SessionWorkflowSettingsInput;
  /** Sessions woken per activity call. */
  batchSize?: number;
}

export interface SessionWakesResult {
  wokenSessions: number;
}
