import { defineSignal } from '@temporalio/workflow';

/** One media ingestion of a recording (a URL transfer or a direct upload), `media-ingestion/<recordingId>`. */
export const MEDIA_INGESTION_WORKFLOW = 'mediaIngestionWorkflow';

export function mediaIngestionWorkflowId(recordingId: string): string {
  return `media-ingestion/${recordingId}`;
}

export interface MediaIngestionInput {
  /**
   * Never read: a workflow's inputs evolve by optional fields and its code by `patched()`, so new
   * starts leave it out; stored inputs of older runs still carry it (harmless).
   */
  version?: 1;
  organizationId: string;
  recordingId: string;
  ingestionId: string;
  /** `url`: transfer the recording's assetUrl; `upload`: wait for the bytes of a direct (tus) upload. */
  kind: 'url' | 'upload';
  /** First retry delay of a transient transfer failure (doubling up to 30 minutes); default 10. */
  transferRetryInitialSeconds?: number;
  /** A transfer or encode without a heartbeat for this long is retried (a dead worker); default 120. */
  heartbeatTimeoutSeconds?: number;
  /** The task queue of the heavy activities (transfer, encode, transcribe); absent: the workflow's own (runs started before media had a queue). */
  mediaTaskQueue?: string;
}

export interface MediaIngestionResult {
  phase: 'ready' | 'failed' | 'cancelled';
  errorCode: string | null;
}

export interface Rendition {
  file: string;
  contentType: string;
  durationSec: number | null;
}

/** Where a direct upload stands, as the worker sees it (database and upload store). */
export interface UploadState {
  /** The ingestion's phase: anything but `waiting` means the upload is no longer waiting for bytes. */
  phase: string;
  /** Every declared byte is stored. */
  complete: boolean;
  /** Epoch ms: no byte by then (since creation, or since the latest byte) and the upload expires. */
  deadlineMs: number;
  /** The deadline has passed (by the database's clock). */
  expired: boolean;
}

/** The tus endpoint received the last byte (the workflow also finds out by itself at its deadline). */
export const uploadFinishedSignal = defineSignal('uploadFinished');
/** `DELETE` of a waiting upload: the API has already moved it to `cancelled`; clean up and end. */
export const uploadCancelledSignal = defineSignal('uploadCancelled');
