/**
 * The rest of a recording's deletion, `recording-deletion/<recordingId>` (issue 32): the request's
 * transaction deleted the recording's rows and wrote its job (`recording_deletions`); this workflow
 * stops the recording's workflows, tells its bot to leave, deletes its objects in the store, and
 * marks the job finished. Started by the API after the commit, or by the media reconciler for a job
 * left without its workflow.
 */
export const RECORDING_DELETION_WORKFLOW = 'recordingDeletionWorkflow';

export function recordingDeletionWorkflowId(recordingId: string): string {
  return `recording-deletion/${recordingId}`;
}

export interface RecordingDeletionInput {
  recordingId: string;
  /**
   * How long an activity of a stopped run may go on writing (it hears of the stop at its next
   * heartbeat): the store is searched again after this, until a search finds nothing.
   */
  settleSeconds: number;
}

export interface RecordingDeletionResult {
  /** Objects deleted from the store (renditions, URL downloads, direct uploads). */
  objectsDeleted: number;
  /** Searches of the store; the last found nothing (or the rounds ran out). */
  rounds: number;
  /** Whether the recorder took the bot's leave; null: the recording had no bot. */
  botLeft: boolean | null;
}

/** A search of the store that finds objects again is followed by another, at most this many in all. */
export const RECORDING_PURGE_ROUNDS = 5;
