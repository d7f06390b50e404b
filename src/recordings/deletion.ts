import type { DatabasePool } from 'slonik';
import { required, type Config } from '../config.js';
import {
  finishRecordingDeletion as finishJob,
  findRecordingDeletion,
  insertRecordingDeletion,
  lockRecordingForDeletion,
  unfinishedRecordingDeletions,
} from '../db/repositories/recording-deletions.js';
import { deleteRecordingRow } from '../db/repositories/recordings.js';
import { forgetSubjectTraces } from '../db/repositories/webhook-deliveries.js';
import { isUuid } from '../db/uuid.js';
import { NotFoundError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { MediaPipeline } from '../media/ingestion/context.js';
import type { TemporalGateway } from '../temporal/gateway.js';
import type { MediaWorkflowSettingsInput } from '../../workflows/media-reconciler/contract.js';
import { startRecordingDeletionWorkflow, type RecordingDeletionSettings } from './deletion-workflow.js';
import { terminateMeetingJoinOf } from './meeting-join-workflow.js';
import { meetingJoinIdFor } from './meeting-joins.js';
import { terminateMediaIngestion } from './media-workflow.js';

/** Past the heartbeat timeout, an activity of a terminated run has heard of it (its heartbeat answered "not found") and stopped. */
const SETTLE_MARGIN_SECONDS = 5;

/** A job older than this without a finished workflow is started again by the media reconciler. */
export const RECORDING_DELETION_STRANDED_AFTER_SECONDS = 120;

export const TERMINATED_FOR_DELETION = 'recording deleted';

/** The deletion workflow's settings, from the media workflows' (the reconciler's schedule carries them). */
export function recordingDeletionSettings(
  media: Pick<MediaWorkflowSettingsInput, 'taskQueue' | 'heartbeatTimeoutSeconds'>,
): RecordingDeletionSettings {
  return { taskQueue: media.taskQueue, settleSeconds: media.heartbeatTimeoutSeconds + SETTLE_MARGIN_SECONDS };
}

/**
 * Deletes a recording of the organization (issue 32, point 1). One transaction deletes its rows
 * (transcript, participants, folders, metadata values, media ingestions, meeting join), the domain
 * events and webhook deliveries about it, and writes the deletion's job: what is outside PostgreSQL
 * (objects in the store, running workflows, a recorder bot). The job's workflow is started after the
 * commit; Temporal unreachable leaves it to the media reconciler, and the delete is done anyway: the
 * recording is gone from every read at the commit.
 */
export async function deleteRecording(
  deps: { pool: DatabasePool; temporal: TemporalGateway; config: Pick<Config, 'temporal' | 'media' | 'auth'>; logger: Logger },
  organizationId: string,
  recordingId: string,
): Promise<void> {
  if (!isUuid(recordingId)) throw new NotFoundError('Recording');
  await deps.pool.transaction(async (tx) => {
    const held = await lockRecordingForDeletion(tx, organizationId, recordingId);
    if (!held) throw new NotFoundError('Recording');
    const meetingWorkflowId =
      held.meetingIdentity === null
        ? null
        : meetingJoinIdFor(required(deps.config.auth.signingSecret, 'SIGNING_SECRET'), organizationId, held.meetingIdentity);
    await insertRecordingDeletion(tx, {
      recordingId,
      organizationId,
      ingestionIds: held.ingestionIds,
      meetingWorkflowId,
      botId: held.botId,
    });
    await forgetSubjectTraces(tx, organizationId, [recordingId]);
    await deleteRecordingRow(tx, organizationId, recordingId);
  });
  const settings = recordingDeletionSettings({
    taskQueue: deps.config.temporal.taskQueue,
    heartbeatTimeoutSeconds: deps.config.media.heartbeatTimeoutSeconds,
  });
  await startRecordingDeletionWorkflow(deps.temporal, settings, { organizationId, recordingId }).catch((error: unknown) =>
    deps.logger.warn(
      { err: error, recordingId },
      'recording deleted; its deletion workflow did not start (the media reconciler starts it)',
    ),
  );
}

/**
 * The deletion workflow's first step: the recording's meeting join and media ingestion are
 * terminated (they write nothing more). Null: no open job (finished already).
 */
export async function stopRecordingWork(deps: { pool: DatabasePool; temporal: TemporalGateway }, recordingId: string) {
  const job = await findRecordingDeletion(deps.pool, recordingId);
  if (!job || job.finished_at) return null;
  // The meeting join first: it may start the media ingestion until it is stopped.
  if (job.meeting_workflow_id) await terminateMeetingJoinOf(deps.temporal, job.meeting_workflow_id, recordingId, TERMINATED_FOR_DELETION);
  await terminateMediaIngestion(deps.temporal, recordingId, TERMINATED_FOR_DELETION);
  return { botId: job.bot_id };
}

/**
 * Deletes what the job lists from the store (renditions, URL downloads, direct uploads' bytes and
 * tus records, scratch files) and, again, the events and deliveries about the recording (a stopped run's last
 * activity may have written one): how many objects it found.
 */
export async function purgeRecording(deps: { pool: DatabasePool; media: MediaPipeline }, recordingId: string): Promise<number> {
  const job = await findRecordingDeletion(deps.pool, recordingId);
  if (!job) return 0;
  const { store, uploads } = deps.media;
  const incoming = (id: string) => deps.media.incoming(id);
  let found = await store.deleteFolder(`renditions/${recordingId}`);
  for (const id of job.ingestion_ids) {
    if (await store.exists(incoming(id))) {
      found += 1;
      await store.delete(incoming(id));
    }
    if ((await uploads.progress(id)) !== null) found += 1;
    // Also what a store keeps beside a record already gone (a partial file, an S3 part).
    await uploads.remove(id);
    // A killed worker's download or partial rendition (scratch is this worker's, or STORAGE_DIR's shared with the others).
    found += await deps.media.dropScratch(id);
  }
  await deps.pool.transaction((tx) => forgetSubjectTraces(tx, job.organization_id, [recordingId]));
  return found;
}

export async function finishRecordingDeletion(pool: DatabasePool, recordingId: string): Promise<void> {
  await finishJob(pool, recordingId);
}

/** Open deletion jobs older than RECORDING_DELETION_STRANDED_AFTER_SECONDS get their workflow (a running one is left alone): how many were started. */
export async function resumeRecordingDeletions(
  pool: DatabasePool,
  temporal: TemporalGateway,
  media: Pick<MediaWorkflowSettingsInput, 'taskQueue' | 'heartbeatTimeoutSeconds'>,
  limit: number,
): Promise<number> {
  let started = 0;
  for (const job of await unfinishedRecordingDeletions(pool, RECORDING_DELETION_STRANDED_AFTER_SECONDS, limit)) {
    const outcome = await startRecordingDeletionWorkflow(temporal, recordingDeletionSettings(media), {
      organizationId: job.organization_id,
      recordingId: job.recording_id,
    });
    if (outcome === 'started') started += 1;
  }
  return started;
}
