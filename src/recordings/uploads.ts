import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { credentialOf, type Principal } from '../auth/principal.js';
import type { Config } from '../config.js';
import { folderIdsIn } from '../db/repositories/metadata.js';
import {
  activeIngestionForUpdate,
  addCorsOrigin,
  deleteUnstartedUpload,
  findUpload,
  findUploadById,
  insertUpload,
  latestEndedUpload,
  movePhase,
  recordUploadBytes,
  uploadSecondsLeft,
  userOwnsBatch,
  type IngestionRow,
  type UploadRequest,
} from '../db/repositories/media-ingestions.js';
import { linkFolder, lockRecordingAsset } from '../db/repositories/recordings.js';
import { findOrganization } from '../db/repositories/organizations.js';
import { AppError, ConflictError, ForbiddenError, NotFoundError } from '../errors.js';
import type { UploadStore } from '../media/upload-store.js';
import type { TemporalGateway } from '../temporal/gateway.js';
import { startMediaIngestion } from './media.js';
import { admitUploadBytes } from './upload-quota.js';
import { tellUploadCancelled, tellUploadFinished, terminateMediaIngestion } from './media-workflow.js';
import type { CreateUploadBody, UploadStatus } from '../contracts/uploads.js';
import { presentRetry } from '../contracts/retry.js';

export type { CreateUploadBody, UploadStatus } from '../contracts/uploads.js';

export interface UploadServiceDeps {
  pool: DatabasePool;
  temporal: TemporalGateway;
  config: Pick<Config, 'temporal' | 'media'>;
  store: UploadStore;
}

const TERMINAL = new Set(['ready', 'failed', 'cancelled']);

export function uploadStatus(row: IngestionRow): UploadStatus {
  const retry = presentRetry(row);
  // A direct upload is never `transferring` (that is URL media); it waits for its bytes instead.
  const phase = row.phase === 'transferring' ? 'waiting' : row.phase;
  return {
    recordingId: row.recording_id,
    uploadId: row.id,
    phase,
    encodeProgress: phase === 'encoding' ? row.encode_progress : null,
    errorCode: phase === 'failed' ? row.error_code : null,
    ...(retry && !TERMINAL.has(phase) ? { retry } : {}),
  };
}

/**
 * Spec: an identical retry names the same recording, `fileName`, `fileSize`, source, `folderId` and
 * `batchId`, and nothing else: another credential of the organization, or another browser Origin,
 * retries the same upload. The source is where the file comes from: the mobile app (`inMobileApp`) or not.
 */
function sameRequest(row: IngestionRow, r: UploadRequest): boolean {
  return (
    row.kind === 'upload' &&
    row.file_name === r.fileName &&
    row.file_size === r.fileSize &&
    row.folder_id === r.folderId &&
    row.batch_id === r.batchId &&
    row.in_mobile_app === r.inMobileApp
  );
}

/** 401 when the organization may not record (spec: on recording upload and meeting join). */
export async function requireRecordingAllowed(pool: DatabasePool, organizationId: string): Promise<void> {
  const org = await findOrganization(pool, organizationId);
  if (!org?.recording_allowed) {
    throw new AppError('recording_not_allowed');
  }
}

/**
 * Creates a direct upload: validates the destination, then, under a lock on the recording, returns
 * the waiting attempt of an identical retry, refuses a second active ingestion (409), or stores the
 * attempt and commits. Only then, holding no lock and no connection, it creates the tus resource and
 * starts `media-ingestion/<recordingId>`; if that fails (Temporal unreachable or slow: 503), the
 * attempt is deleted again (compensation), so nothing is stored.
 */
export async function createUpload(
  deps: UploadServiceDeps,
  principal: Principal,
  recordingId: string,
  body: CreateUploadBody,
  origin: string | null,
): Promise<{ row: IngestionRow; timeoutSeconds: number; created: boolean }> {
  const request: UploadRequest = {
    fileName: body.fileName,
    fileSize: body.fileSize,
    folderId: body.folderId?.toLowerCase() ?? null,
    batchId: body.batchId?.toLowerCase() ?? null,
    inMobileApp: body.inMobileApp ?? false,
    createdBy: credentialOf(principal),
    origin,
  };
  if (request.fileSize > deps.config.media.uploadMaxBytes) {
    throw new AppError('upload_too_large', {
      message: `fileSize is ${request.fileSize} bytes; an upload may have at most ${deps.config.media.uploadMaxBytes}.`,
      details: { maxBytes: deps.config.media.uploadMaxBytes },
    });
  }
  await requireRecordingAllowed(deps.pool, principal.organizationId);
  if (request.batchId && principal.kind !== 'user') {
    throw new ForbiddenError('batch_user_scoped');
  }
  if (request.folderId && !(await folderIdsIn(deps.pool, principal.organizationId, [request.folderId])).has(request.folderId)) {
    throw new NotFoundError('Folder');
  }
  if (request.batchId && principal.kind === 'user' && !(await userOwnsBatch(deps.pool, principal.userId, request.batchId))) {
    throw new NotFoundError('Batch');
  }
  const stored = await deps.pool.transaction(async (tx) => {
    const asset = await lockRecordingAsset(tx, principal.organizationId, recordingId);
    if (asset === null) throw new NotFoundError('Recording');
    const active = await activeIngestionForUpdate(tx, recordingId);
    if (active) {
      const left = active.phase === 'waiting' ? await uploadSecondsLeft(tx, active.id) : 0;
      if (sameRequest(active, request) && left > 0) {
        const row =
          request.origin && !active.cors_origins.includes(request.origin) ? await addCorsOrigin(tx, active.id, request.origin) : active;
        return { row, timeoutSeconds: left, created: false, newFolderLink: false };
      }
      throw new ConflictError('media_ingestion_active', undefined, active.kind === 'upload' ? { uploadId: active.id } : {});
    }
    if (asset === 'completed') {
      throw new ConflictError('asset_already_completed');
    }
    const timeoutSeconds = deps.config.media.uploadTimeoutSeconds;
    const row = await insertUpload(tx, {
      ...request,
      id: randomUUID(),
      organizationId: principal.organizationId,
      recordingId,
      timeoutSeconds,
    });
    // The upload's folder files the recording there, as `folderIds` does on create.
    const newFolderLink = request.folderId ? await linkFolder(tx, recordingId, request.folderId) : false;
    return { row, timeoutSeconds, created: true, newFolderLink };
  });
  const { newFolderLink, ...result } = stored;
  if (!result.created) return result;
  try {
    await deps.store.create(result.row.id, request.fileSize);
    await startUploadWorkflow(deps, { organizationId: principal.organizationId, recordingId, ingestionId: result.row.id });
  } catch (error) {
    // Compensation. A run that did start meanwhile finds no row and ends by itself (abandoned).
    await deps.pool.transaction((tx) =>
      deleteUnstartedUpload(tx, result.row.id, newFolderLink && request.folderId ? { recordingId, folderId: request.folderId } : null),
    );
    await deps.store.remove(result.row.id).catch(() => undefined);
    throw error;
  }
  return result;
}

/**
 * Starts the upload's `media-ingestion/<recordingId>`. Under the recording's lock, with no active
 * ingestion in the database, a run of that id still open belongs to an ingestion that has ended (a
 * cancelled upload still closing) or to a request that stored nothing: the spec releases the
 * recording when the cancel is answered, so that run is superseded (terminated, the ended upload's
 * bytes released here instead) and the new upload starts at once.
 */
async function startUploadWorkflow(deps: UploadServiceDeps, ids: { organizationId: string; recordingId: string; ingestionId: string }) {
  const start = () => startMediaIngestion(deps.temporal, deps.config, { ...ids, kind: 'upload' });
  if ((await start()) === 'started') return;
  // Closed meanwhile (not found): fine.
  await terminateMediaIngestion(deps.temporal, ids.recordingId, `superseded by upload ${ids.ingestionId}: this run's ingestion had ended`);
  const ended = await latestEndedUpload(deps.pool, ids.recordingId);
  if (ended) await deps.store.remove(ended);
  if ((await start()) === 'already_started') {
    throw new ConflictError(
      'media_ingestion_active',
      'Another media ingestion of this recording started at the same moment; retry in a moment.',
    );
  }
}

/**
 * Cancels a waiting upload (spec moves): `waiting` to `cancelled`, committed, then its workflow is
 * told, holding no lock. Told or not, it ends: it reads the phase whenever it wakes, and a new
 * upload of the recording supersedes a run still open. `cancelled` again returns the same body;
 * any later phase is 409.
 */
export async function cancelUpload(
  deps: UploadServiceDeps,
  ids: { organizationId: string; recordingId: string; uploadId: string },
  log: { warn(o: object, msg: string): void },
): Promise<UploadStatus> {
  const outcome = await deps.pool.transaction(async (tx) => {
    const row = await findUpload(tx, ids, true);
    if (!row) throw new NotFoundError('Upload');
    if (row.phase === 'cancelled') return { row, moved: false };
    if (row.phase !== 'waiting') {
      const begun = row.phase !== 'failed';
      throw new ConflictError(
        begun ? 'upload_processing_begun' : 'upload_failed',
        begun ? 'Processing has begun: the upload can no longer be cancelled; keep polling its status.' : 'The upload has already failed.',
        { phase: uploadStatus(row).phase },
      );
    }
    await movePhase(tx, row.id, { phase: 'cancelled', asset: 'cancelled' }, 'waiting');
    return { row, moved: true };
  });
  if (!outcome.moved) return uploadStatus(outcome.row);
  // No run to tell (it ended), or Temporal unreachable: the committed move is the cancel.
  await tellUploadCancelled(deps.temporal, ids.recordingId).catch((error: unknown) =>
    log.warn({ err: error, uploadId: ids.uploadId }, "the cancelled upload's workflow was not told; it sees the phase when it wakes"),
  );
  return { ...uploadStatus({ ...outcome.row, retry_error_code: null }), phase: 'cancelled', encodeProgress: null, errorCode: null };
}

/** The upload a tus URL names (its signed segment checked by the caller), with whether it expired; null: none. */
export async function findTusUpload(pool: DatabasePool, uploadId: string): Promise<(IngestionRow & { expired: boolean }) | null> {
  return findUploadById(pool, uploadId);
}

/** Before a tus PATCH appends bytes: a closed upload is 410, a complete one 409, and the bytes must fit the quota. */
export async function admitUploadPatch(
  deps: { pool: DatabasePool; config: Pick<Config, 'media'> },
  row: IngestionRow & { expired: boolean },
): Promise<void> {
  if (row.phase === 'cancelled' || row.phase === 'failed' || (row.phase === 'waiting' && row.expired)) {
    throw new AppError('upload_closed', {
      message: `The upload is ${row.phase === 'waiting' ? 'expired' : row.phase}; create a new upload.`,
    });
  }
  if (row.phase !== 'waiting') throw new AppError('upload_complete');
  await admitUploadBytes(deps.pool, row, deps.config.media.uploadQuotaBytes);
}

/** Bytes of a tus upload arrived: its progress (the offset) is stored. */
export async function recordUploadProgress(pool: DatabasePool, uploadId: string, offset: number): Promise<void> {
  await recordUploadBytes(pool, uploadId, offset);
}

/**
 * The last byte of a tus upload is stored: its offset is recorded, then its workflow told. Told or
 * not (Temporal unreachable, the signal lost), the workflow finds the complete upload at its deadline.
 */
export async function finishUpload(
  deps: Pick<UploadServiceDeps, 'pool' | 'temporal'>,
  uploadId: string,
  offset: number,
  log: { warn(o: object, msg: string): void },
): Promise<void> {
  const row = await findUploadById(deps.pool, uploadId);
  if (!row) return;
  await recordUploadBytes(deps.pool, uploadId, offset);
  await tellUploadFinished(deps.temporal, row.recording_id).then(
    (told) => {
      if (!told) log.warn({ uploadId }, 'upload finished but its workflow was not told; it finds out at its deadline');
    },
    (error: unknown) => log.warn({ err: error, uploadId }, 'upload finished but its workflow was not told; it finds out at its deadline'),
  );
}
