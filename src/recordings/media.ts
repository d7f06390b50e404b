import type { DatabasePool } from 'slonik';
import type { Config } from '../config.js';
import { movePhase, unfinishedIngestions } from '../db/repositories/media-ingestions.js';
import type { MediaIngestionIds } from '../domain/media-ingestion-start.js';
import type { TemporalGateway } from '../temporal/gateway.js';
import { taskQueues } from '../temporal/task-queues.js';
import type { MediaWorkflowSettingsInput } from '../../workflows/media-reconciler/contract.js';
import { mediaIngestionRunning, startMediaIngestionWorkflow, tellUploadFinished } from './media-workflow.js';
import { resumeRecordingDeletions } from './deletion.js';
import { resumePersonErasures } from '../people/erasure.js';

/** An active ingestion unchanged this long without a running workflow is stranded (the workflow waits ~63 s for its row). */
export const MEDIA_STRANDED_AFTER_SECONDS = 300;

/** What the workflow needs from configuration (the reconciler's schedule carries it too). */
export function mediaWorkflowSettings(config: Pick<Config, 'temporal' | 'media'>): MediaWorkflowSettingsInput {
  return {
    taskQueue: config.temporal.taskQueue,
    mediaTaskQueue: taskQueues(config).media,
    transferRetryInitialSeconds: config.media.transferRetryInitialSeconds,
    heartbeatTimeoutSeconds: config.media.heartbeatTimeoutSeconds,
  };
}

/**
 * Starts `media-ingestion/<recordingId>` (Temporal's id uniqueness: one per recording at a time):
 * URL media is `queued` until transferred, a direct upload is `waiting` for its bytes.
 */
export async function startMediaIngestion(
  temporal: TemporalGateway,
  config: Pick<Config, 'temporal' | 'media'>,
  ids: MediaIngestionIds,
): Promise<'started' | 'already_started'> {
  return startMediaIngestionWorkflow(temporal, mediaWorkflowSettings(config), ids);
}

/**
 * No active ingestion is left without its workflow (a create that committed after the workflow
 * gave up waiting for it, a run an operator terminated): one that has not begun (`waiting`) is
 * started again; one that stopped mid-way is failed with `processing_interrupted`, so the recording
 * is terminal and takes a new upload. A running workflow still waiting for an upload whose bytes are
 * all in is told (`told`): the last PATCH's signal failed. The first batch of a round also starts the workflow of
 * recording deletions and person erasures left without one (`deletionsStarted`, `erasuresStarted`).
 */
export async function reconcileMediaIngestions(
  pool: DatabasePool,
  temporal: TemporalGateway,
  settings: MediaWorkflowSettingsInput,
  o: { olderThanSeconds: number; limit: number; after: string | null },
): Promise<{
  checked: number;
  restarted: number;
  failed: number;
  told: number;
  last: string | null;
  deletionsStarted: number;
  erasuresStarted: number;
}> {
  const deletionsStarted = o.after === null ? await resumeRecordingDeletions(pool, temporal, settings, o.limit) : 0;
  const erasuresStarted = o.after === null ? await resumePersonErasures(pool, temporal, settings, o.limit) : 0;
  const rows = await unfinishedIngestions(pool, o);
  let restarted = 0;
  let failed = 0;
  let told = 0;
  for (const row of rows) {
    if (await mediaIngestionRunning(temporal, row.recording_id)) {
      // Its last PATCH could not tell it (Temporal unreachable or slow then): told now, not at the upload's deadline.
      if (row.phase === 'waiting' && row.bytes_complete && (await tellUploadFinished(temporal, row.recording_id))) told += 1;
      continue;
    }
    if (row.phase === 'waiting') {
      const ids = { organizationId: row.organization_id, recordingId: row.recording_id, ingestionId: row.id, kind: row.kind };
      if ((await startMediaIngestionWorkflow(temporal, settings, ids)) === 'started') restarted += 1;
    } else if (
      await pool.transaction((tx) => movePhase(tx, row.id, { phase: 'failed', asset: 'failed', errorCode: 'processing_interrupted' }))
    ) {
      failed += 1;
    }
  }
  return { checked: rows.length, restarted, failed, told, last: rows.at(-1)?.id ?? null, deletionsStarted, erasuresStarted };
}
