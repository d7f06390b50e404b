/**
 * The reconciler of media ingestions, started by the Temporal Schedule `media-reconciler` (or by
 * hand): no active ingestion is left without a running `media-ingestion/<recordingId>` workflow.
 */
export const MEDIA_RECONCILER_WORKFLOW = 'mediaReconcilerWorkflow';
export const MEDIA_RECONCILER_SCHEDULE_ID = 'media-reconciler';

export function mediaReconcilerWorkflowId(): string {
  return 'media-reconciler';
}

/** What starting a media ingestion needs (the schedule carries the worker's settings). */
export interface MediaWorkflowSettingsInput {
  taskQueue: string;
  mediaTaskQueue: string;
  transferRetryInitialSeconds: number;
  heartbeatTimeoutSeconds: number;
}

export interface MediaReconcilerInput {
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1;
  /** Ingestions unchanged for this long are checked (well past the ~63 s a workflow waits for its row). */
  olderThanSeconds: number;
  settings: MediaWorkflowSettingsInput;
  batchSize?: number;
}

export interface MediaReconcilerResult {
  restarted: number;
  failed: number;
  /** Running workflows told that their upload's bytes are all in (0 in runs before this field). */
  told: number;
}
