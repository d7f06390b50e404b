/** One media ingestion of a recording (a URL transfer; direct uploads follow), `media-ingestion/<recordingId>`. */
export const MEDIA_INGESTION_WORKFLOW = 'mediaIngestionWorkflow';

export function mediaIngestionWorkflowId(recordingId: string): string {
  return `media-ingestion/${recordingId}`;
}

export interface MediaIngestionInput {
  version: 1;
  organizationId: string;
  recordingId: string;
  ingestionId: string;
  kind: 'url';
  /** First retry delay of a transient transfer failure (doubling up to 30 minutes); default 10. */
  transferRetryInitialSeconds?: number;
  /** A transfer or encode without a heartbeat for this long is retried (a dead worker); default 120. */
  heartbeatTimeoutSeconds?: number;
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
