import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { Config } from '../config.js';
import { movePhase, unfinishedIngestions } from '../db/repositories/media-ingestions.js';
import type { TemporalClient } from '../temporal/connection.js';
import { ORGANIZATION_ID, RECORDING_ID, STATUS } from '../temporal/search-attributes.js';
import { taskQueues } from '../temporal/task-queues.js';
import { MEDIA_INGESTION_WORKFLOW, mediaIngestionWorkflowId, type MediaIngestionInput } from '../../workflows/media-ingestion/contract.js';
import type { MediaWorkflowSettingsInput } from '../../workflows/media-reconciler/contract.js';

const START_DEADLINE_MS = 10_000;
/** An active ingestion unchanged this long without a running workflow is stranded (the workflow waits ~63 s for its row). */
export const MEDIA_STRANDED_AFTER_SECONDS = 300;

type IngestionIds = { organizationId: string; recordingId: string; ingestionId: string; kind: MediaIngestionInput['kind'] };

/** What the workflow needs from configuration (the reconciler's schedule carries it too). */
export function mediaWorkflowSettings(config: Pick<Config, 'temporal' | 'media'>): MediaWorkflowSettingsInput {
  return {
    taskQueue: config.temporal.taskQueue,
    mediaTaskQueue: taskQueues(config).media,
    transferRetryInitialSeconds: config.media.transferRetryInitialSeconds,
    heartbeatTimeoutSeconds: config.media.heartbeatTimeoutSeconds,
  };
}

async function start(client: Client, settings: MediaWorkflowSettingsInput, ids: IngestionIds): Promise<void> {
  const input: MediaIngestionInput = {
    version: 1,
    ...ids,
    ...(ids.kind === 'url' ? { transferRetryInitialSeconds: settings.transferRetryInitialSeconds } : {}),
    heartbeatTimeoutSeconds: settings.heartbeatTimeoutSeconds,
    mediaTaskQueue: settings.mediaTaskQueue,
  };
  await client.workflow.start(MEDIA_INGESTION_WORKFLOW, {
    workflowId: mediaIngestionWorkflowId(ids.recordingId),
    taskQueue: settings.taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: ORGANIZATION_ID, value: ids.organizationId },
      { key: RECORDING_ID, value: ids.recordingId },
      { key: STATUS, value: ids.kind === 'url' ? 'queued' : 'waiting' },
    ],
  });
}

/**
 * Starts `media-ingestion/<recordingId>` (Temporal's id uniqueness: one per recording at a time):
 * URL media is `queued` until transferred, a direct upload is `waiting` for its bytes.
 */
export async function startMediaIngestion(
  temporal: TemporalClient,
  config: Pick<Config, 'temporal' | 'media'>,
  ids: IngestionIds,
): Promise<void> {
  await temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () => start(temporal.client, mediaWorkflowSettings(config), ids));
}

async function running(client: Client, recordingId: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).describe()).status.name === 'RUNNING';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/**
 * No active ingestion is left without its workflow (a create that committed after the workflow
 * gave up waiting for it, a run an operator terminated): one that has not begun (`waiting`) is
 * started again; one that stopped mid-way is failed with `processing_interrupted`, so the recording
 * is terminal and takes a new upload.
 */
export async function reconcileMediaIngestions(
  pool: DatabasePool,
  client: Client,
  settings: MediaWorkflowSettingsInput,
  o: { olderThanSeconds: number; limit: number; after: string | null },
): Promise<{ checked: number; restarted: number; failed: number; last: string | null }> {
  const rows = await unfinishedIngestions(pool, o);
  let restarted = 0;
  let failed = 0;
  for (const row of rows) {
    if (await running(client, row.recording_id)) continue;
    if (row.phase === 'waiting') {
      try {
        await start(client, settings, {
          organizationId: row.organization_id,
          recordingId: row.recording_id,
          ingestionId: row.id,
          kind: row.kind,
        });
        restarted += 1;
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    } else if (
      await pool.transaction((tx) => movePhase(tx, row.id, { phase: 'failed', asset: 'failed', errorCode: 'processing_interrupted' }))
    ) {
      failed += 1;
    }
  }
  return { checked: rows.length, restarted, failed, last: rows.at(-1)?.id ?? null };
}
