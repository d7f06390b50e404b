import type { Config } from '../config.js';
import type { TemporalClient } from '../temporal/connection.js';
import { taskQueues } from '../temporal/task-queues.js';
import { ORGANIZATION_ID, RECORDING_ID, STATUS } from '../temporal/search-attributes.js';
import { MEDIA_INGESTION_WORKFLOW, mediaIngestionWorkflowId, type MediaIngestionInput } from '../../workflows/media-ingestion/contract.js';

const START_DEADLINE_MS = 10_000;

/**
 * Starts `media-ingestion/<recordingId>` (Temporal's id uniqueness: one per recording at a time):
 * URL media is `queued` until transferred, a direct upload is `waiting` for its bytes.
 */
export async function startMediaIngestion(
  temporal: TemporalClient,
  config: Pick<Config, 'temporal' | 'media'>,
  ids: { organizationId: string; recordingId: string; ingestionId: string; kind: MediaIngestionInput['kind'] },
): Promise<void> {
  const input: MediaIngestionInput = { version: 1, ...ids,
    ...(ids.kind === 'url' ? { transferRetryInitialSeconds: config.media.transferRetryInitialSeconds } : {}),
    heartbeatTimeoutSeconds: config.media.heartbeatTimeoutSeconds,
    mediaTaskQueue: taskQueues(config).media,
  };
  await temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () => temporal.client.workflow.start(MEDIA_INGESTION_WORKFLOW, {
    workflowId: mediaIngestionWorkflowId(ids.recordingId),
    taskQueue: config.temporal.taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: ORGANIZATION_ID, value: ids.organizationId },
      { key: RECORDING_ID, value: ids.recordingId },
      { key: STATUS, value: ids.kind === 'url' ? 'queued' : 'waiting' },
    ],
  }));
}
