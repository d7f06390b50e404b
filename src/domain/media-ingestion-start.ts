import { MEDIA_INGESTION_WORKFLOW, mediaIngestionWorkflowId, type MediaIngestionInput } from '../../workflows/media-ingestion/contract.js';
import { ORGANIZATION_ID, RECORDING_ID, STATUS } from '../../workflows/search-attributes.js';

export interface MediaIngestionIds {
  organizationId: string;
  recordingId: string;
  ingestionId: string;
  kind: MediaIngestionInput['kind'];
}

/** Settings the input carries when they are given (a child started by a meeting join inherits its parent's task queue). */
export interface MediaIngestionStartSettings {
  taskQueue?: string;
  mediaTaskQueue?: string;
  transferRetryInitialSeconds?: number;
  heartbeatTimeoutSeconds?: number;
}

/**
 * How `media-ingestion/<recordingId>` is started, by the API (a URL or an upload), by the media
 * reconciler and by a meeting join (as its child): one workflow id, one input, one set of search
 * attributes. Pure, so that the meeting-join workflow builds its child's start with it: the
 * commands it produces must stay those its stored histories recorded.
 */
export function mediaIngestionStart(ids: MediaIngestionIds, settings: MediaIngestionStartSettings) {
  const input: MediaIngestionInput = {
    organizationId: ids.organizationId,
    recordingId: ids.recordingId,
    ingestionId: ids.ingestionId,
    kind: ids.kind,
    // Only URL media is transferred.
    ...(ids.kind === 'url' && settings.transferRetryInitialSeconds !== undefined
      ? { transferRetryInitialSeconds: settings.transferRetryInitialSeconds }
      : {}),
    ...(settings.heartbeatTimeoutSeconds !== undefined ? { heartbeatTimeoutSeconds: settings.heartbeatTimeoutSeconds } : {}),
    ...(settings.mediaTaskQueue !== undefined ? { mediaTaskQueue: settings.mediaTaskQueue } : {}),
  };
  return {
    workflowType: MEDIA_INGESTION_WORKFLOW,
    workflowId: mediaIngestionWorkflowId(ids.recordingId),
    ...(settings.taskQueue !== undefined ? { taskQueue: settings.taskQueue } : {}),
    args: [input] as [MediaIngestionInput],
    typedSearchAttributes: [
      { key: ORGANIZATION_ID, value: ids.organizationId },
      { key: RECORDING_ID, value: ids.recordingId },
      // URL media is queued until transferred; a direct upload waits for its bytes.
      { key: STATUS, value: ids.kind === 'url' ? 'queued' : 'waiting' },
    ],
  };
}
