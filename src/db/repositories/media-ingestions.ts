import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { recordEvent } from './domain-events.js';
import { setAssetStatus, setRendition, unlinkFolder, type AssetStatus } from './recordings.js';

export const ingestionRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  recording_id: z.string(),
  kind: z.enum(['url', 'upload']),
  phase: z.enum(['waiting', 'transferring', 'encoding', 'finalizing', 'ready', 'failed', 'cancelled']),
  encode_progress: z.number().nullable(),
  error_code: z.string().nullable(),
  bytes_received: z.number(),
  file_name: z.string().nullable(),
  file_size: z.number().nullable(),
  folder_id: z.string().nullable(),
  batch_id: z.string().nullable(),
  in_mobile_app: z.boolean(),
  created_by: z.string().nullable(),
  origin: z.string().nullable(),
  cors_origins: z.array(z.string()),
  timeout_seconds: z.number().nullable(),
  began_at: z.string().nullable(),
  last_byte_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  retry_error_code: z.string().nullable(),
  retry_message: z.string().nullable(),
  retry_attempt: z.number().nullable(),
  retry_next_attempt_at: z.string().nullable(),
});
export type IngestionRow = z.infer<typeof ingestionRow>;

/** The ingestion of a URL recording, created with the recording (same transaction). */
export async function insertIngestion(
  tx: CommonQueryMethods,
  i: { id?: string; organizationId: string; recordingId: string; kind: 'url' | 'upload' },
): Promise<IngestionRow> {
  return tx.one(sql.type(ingestionRow)`
    INSERT INTO media_ingestions (id, organization_id, recording_id, kind)
    VALUES (coalesce(${i.id ?? null}::uuid, gen_random_uuid()), ${i.organizationId}, ${i.recordingId}, ${i.kind})
    RETURNING *`);
}

export async function findIngestion(db: CommonQueryMethods, id: string): Promise<IngestionRow | null> {
  return db.maybeOne(sql.type(ingestionRow)`SELECT * FROM media_ingestions WHERE id = ${id}`);
}

/** The recording's latest ingestion, whatever its phase (a meeting's hand-off finds the one it made). */
export async function latestIngestion(db: CommonQueryMethods, recordingId: string): Promise<Pick<IngestionRow, 'id' | 'kind'> | null> {
  return db.maybeOne(sql.type(ingestionRow.pick({ id: true, kind: true }))`
    SELECT id, kind FROM media_ingestions WHERE recording_id = ${recordingId} ORDER BY created_at DESC LIMIT 1`);
}

/** A move to another phase clears a noted retry; a step's retry that moves to its own phase again (an encode) keeps it. */
const keepRetryIf = (phase: string) => sql.fragment`
  retry_error_code = CASE WHEN phase = ${phase} THEN retry_error_code END, retry_message = CASE WHEN phase = ${phase} THEN retry_message END,
  retry_attempt = CASE WHEN phase = ${phase} THEN retry_attempt END,
  retry_next_attempt_at = CASE WHEN phase = ${phase} THEN retry_next_attempt_at END`;

/**
 * Moves an ingestion to a phase (never out of a terminal one) and the recording's asset with it,
 * in one transaction; `ready` and `failed` are announced with it. Returns false when the
 * ingestion already ended (a late retry changes nothing, and announces nothing).
 */
export async function movePhase(
  tx: DatabaseTransactionConnection,
  ingestionId: string,
  to: { phase: IngestionRow['phase']; asset: AssetStatus; errorCode?: string | null; progress?: number | null },
  /** Only from this phase (a direct upload's moves out of `waiting`). */
  from?: IngestionRow['phase'],
): Promise<boolean> {
  const terminal = ['ready', 'failed', 'cancelled'].includes(to.phase);
  const moved = await tx.maybeOne(sql.type(z.object({ recording_id: z.string(), organization_id: z.string() }))`
    UPDATE media_ingestions SET phase = ${to.phase}, error_code = ${to.errorCode ?? null}, encode_progress = ${to.progress ?? null},
      ${keepRetryIf(to.phase)}, updated_at = now(), finished_at = CASE WHEN ${terminal} THEN now() ELSE NULL END
    WHERE id = ${ingestionId} AND phase NOT IN ('ready', 'failed', 'cancelled') AND phase = coalesce(${from ?? null}, phase)
    RETURNING recording_id, organization_id`);
  if (!moved) return false;
  await setAssetStatus(tx, moved.recording_id, to.asset, to.errorCode ?? null);
  const event = { organizationId: moved.organization_id, subjectId: moved.recording_id };
  if (to.phase === 'ready')
    await recordEvent(tx, { ...event, type: 'recording.media_ready', payload: { recordingId: moved.recording_id, ingestionId } });
  if (to.phase === 'failed') {
    await recordEvent(tx, {
      ...event,
      type: 'recording.media_failed',
      payload: { recordingId: moved.recording_id, ingestionId, errorCode: to.errorCode ?? 'processing_failed' },
    });
  }
  return true;
}

/** A step's retryable failure while the ingestion is under way: what its status shows until the next move. */
export interface RetryNote {
  errorCode: string;
  message: string;
  /** The attempt that failed (1-based). */
  attempt: number;
  /** From the failure: when the next attempt starts. */
  delayMs: number;
}

/** Records a retryable failure; an ingestion that already ended keeps its terminal status. */
export async function noteRetry(db: CommonQueryMethods, ingestionId: string, r: RetryNote): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE media_ingestions SET retry_error_code = ${r.errorCode}, retry_message = ${r.message}, retry_attempt = ${r.attempt},
      retry_next_attempt_at = now() + make_interval(secs => ${r.delayMs / 1000}), updated_at = now()
    WHERE id = ${ingestionId} AND phase NOT IN ('ready', 'failed', 'cancelled')`);
}

/** The step succeeded: no retry to show any more (a no-op when none was noted). */
export async function clearRetry(db: CommonQueryMethods, ingestionId: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE media_ingestions SET retry_error_code = NULL, retry_message = NULL, retry_attempt = NULL, retry_next_attempt_at = NULL,
      updated_at = now()
    WHERE id = ${ingestionId} AND retry_error_code IS NOT NULL`);
}

export async function setProgress(db: CommonQueryMethods, ingestionId: string, percent: number): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE media_ingestions SET encode_progress = ${percent}, updated_at = now() WHERE id = ${ingestionId} AND phase = 'encoding'`);
}

export async function setBytes(db: CommonQueryMethods, ingestionId: string, bytes: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE media_ingestions SET bytes_received = ${bytes}, updated_at = now() WHERE id = ${ingestionId}`);
}

/** The rendition is the recording's media now; the ingestion is `ready`, the asset `completed`. */
export async function publishRendition(
  tx: DatabaseTransactionConnection,
  ingestionId: string,
  r: { recordingId: string; file: string; contentType: string; durationSec: number | null },
): Promise<boolean> {
  const moved = await movePhase(tx, ingestionId, { phase: 'ready', asset: 'completed' });
  if (!moved) return false;
  await setRendition(tx, r.recordingId, r);
  return true;
}

/** What a direct upload was created with: the identical-retry rule compares these. */
export interface UploadRequest {
  fileName: string;
  fileSize: number;
  folderId: string | null;
  batchId: string | null;
  inMobileApp: boolean;
  /** 'apiKey:<id>' or 'user:<id>': recorded, not part of the identity. */
  createdBy: string;
  /** The browser Origin of a user request: the tus endpoint answers CORS for it; not part of the identity. */
  origin: string | null;
}

/** The recording's ingestion that has not ended (at most one: a partial unique index), locked. */
export async function activeIngestionForUpdate(tx: DatabaseTransactionConnection, recordingId: string): Promise<IngestionRow | null> {
  return tx.maybeOne(sql.type(ingestionRow)`
    SELECT * FROM media_ingestions WHERE recording_id = ${recordingId} AND phase NOT IN ('ready', 'failed', 'cancelled') FOR UPDATE`);
}

/** A new direct upload, `waiting`; the recording's asset waits with it. */
export async function insertUpload(
  tx: DatabaseTransactionConnection,
  u: UploadRequest & { id: string; organizationId: string; recordingId: string; timeoutSeconds: number },
): Promise<IngestionRow> {
  const row = await tx.one(sql.type(ingestionRow)`
    INSERT INTO media_ingestions (id, organization_id, recording_id, kind, file_name, file_size, folder_id, batch_id, in_mobile_app, created_by, origin,
      cors_origins, timeout_seconds)
    VALUES (${u.id}, ${u.organizationId}, ${u.recordingId}, 'upload', ${u.fileName}, ${u.fileSize}, ${u.folderId}, ${u.batchId}, ${u.inMobileApp},
      ${u.createdBy}, ${u.origin}, ${sql.array(u.origin ? [u.origin] : [], 'text')}, ${u.timeoutSeconds})
    RETURNING *`);
  await setAssetStatus(tx, u.recordingId, 'waiting');
  return row;
}

/** Most browser origins one upload answers CORS for (the creating request's and its retries'). */
export const MAX_CORS_ORIGINS = 16;

/** An identical retry from another browser Origin: the tus endpoint answers CORS for it too. */
export async function addCorsOrigin(tx: DatabaseTransactionConnection, uploadId: string, origin: string): Promise<IngestionRow> {
  const updated = await tx.maybeOne(sql.type(ingestionRow)`
    UPDATE media_ingestions SET cors_origins = array_append(cors_origins, ${origin}), updated_at = now()
    WHERE id = ${uploadId} AND NOT (${origin} = ANY(cors_origins)) AND cardinality(cors_origins) < ${MAX_CORS_ORIGINS}
    RETURNING *`);
  return updated ?? tx.one(sql.type(ingestionRow)`SELECT * FROM media_ingestions WHERE id = ${uploadId}`);
}

/** The most recent ended upload of a recording (its bytes may still be in the store), or null. */
export async function latestEndedUpload(tx: CommonQueryMethods, recordingId: string): Promise<string | null> {
  return tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM media_ingestions WHERE recording_id = ${recordingId} AND kind = 'upload' AND phase IN ('cancelled', 'failed')
    ORDER BY created_at DESC LIMIT 1`);
}

/** A waiting upload expires `timeout_seconds` after its creation, or after its latest byte once bytes flow. */
const deadline = sql.fragment`(coalesce(last_byte_at, created_at) + timeout_seconds * interval '1 second')`;

/** Seconds left before a waiting upload expires (by the database's clock; 0 when past). */
export async function uploadSecondsLeft(db: CommonQueryMethods, uploadId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ left: z.number() }))`
    SELECT greatest(0, ceil(extract(epoch FROM ${deadline} - now())))::int AS left FROM media_ingestions WHERE id = ${uploadId}`);
}

/** A direct upload of the organization's recording, or null (unknown, another recording's, a URL ingestion). */
export async function findUpload(
  db: CommonQueryMethods,
  ids: { organizationId: string; recordingId: string; uploadId: string },
  lock = false,
): Promise<IngestionRow | null> {
  return db.maybeOne(sql.type(ingestionRow)`
    SELECT * FROM media_ingestions
    WHERE id = ${ids.uploadId} AND recording_id = ${ids.recordingId} AND organization_id = ${ids.organizationId} AND kind = 'upload'
    ${lock ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
}

/** A direct upload by id alone (the tus endpoint: the signed URL is the credential). */
export async function findUploadById(db: CommonQueryMethods, uploadId: string): Promise<(IngestionRow & { expired: boolean }) | null> {
  return db.maybeOne(sql.type(ingestionRow.extend({ expired: z.boolean() }))`
    SELECT *, ${deadline} <= now() AS expired FROM media_ingestions WHERE id = ${uploadId} AND kind = 'upload'`);
}

/**
 * Bytes arrived through the tus endpoint: the offset so far, the first and latest byte's time (the
 * deadline moves with it), and the recording's asset is `uploading`. One statement for both tables
 * (every chunk of every upload runs it), so it writes `recordings` here rather than through recordings.ts.
 */
export async function recordUploadBytes(db: CommonQueryMethods, uploadId: string, offset: number | null): Promise<void> {
  await db.query(sql.unsafe`
    WITH moved AS (
      UPDATE media_ingestions SET bytes_received = greatest(bytes_received, coalesce(${offset}::bigint, bytes_received)),
        began_at = coalesce(began_at, now()), last_byte_at = now(), updated_at = now()
      WHERE id = ${uploadId} AND phase = 'waiting'
      RETURNING recording_id
    )
    UPDATE recordings SET asset_status = 'uploading', updated_at = now()
    WHERE id IN (SELECT recording_id FROM moved) AND asset_status = 'waiting'`);
}

/** The upload's phase, deadline and whether it passed, by the database's clock. */
export async function uploadTiming(
  db: CommonQueryMethods,
  uploadId: string,
): Promise<{ phase: string; deadline_ms: number; expired: boolean; began: boolean } | null> {
  return db.maybeOne(sql.type(z.object({ phase: z.string(), deadline_ms: z.number(), expired: z.boolean(), began: z.boolean() }))`
    SELECT phase, (extract(epoch FROM ${deadline}) * 1000)::float8 AS deadline_ms, ${deadline} <= now() AS expired, began_at IS NOT NULL AS began
    FROM media_ingestions WHERE id = ${uploadId}`);
}

/** Batches are user-scoped: true when the batch is the user's. */
export async function userOwnsBatch(db: CommonQueryMethods, userId: string, batchId: string): Promise<boolean> {
  return db.exists(sql.unsafe`SELECT 1 FROM upload_batches WHERE id = ${batchId} AND user_id = ${userId}`);
}

export async function createBatch(db: CommonQueryMethods, organizationId: string, userId: string): Promise<string> {
  return db.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO upload_batches (organization_id, user_id) VALUES (${organizationId}, ${userId}) RETURNING id`);
}

const unfinishedRow = ingestionRow
  .pick({ id: true, organization_id: true, recording_id: true, kind: true, phase: true })
  .extend({ bytes_complete: z.boolean() });

/**
 * Active ingestions unchanged for `olderThanSeconds`, in id order after `after`: the reconciler's
 * candidates. `bytes_complete`: an upload whose recorded bytes reach its declared size.
 */
export async function unfinishedIngestions(
  db: CommonQueryMethods,
  o: { olderThanSeconds: number; limit: number; after: string | null },
): Promise<z.infer<typeof unfinishedRow>[]> {
  const rows = await db.any(sql.type(unfinishedRow)`
    SELECT id, organization_id, recording_id, kind, phase,
      (kind = 'upload' AND file_size > 0 AND bytes_received >= file_size) AS bytes_complete
    FROM media_ingestions
    WHERE phase NOT IN ('ready', 'failed', 'cancelled')
      AND updated_at < now() - make_interval(secs => ${o.olderThanSeconds})
      AND id > coalesce(${o.after}::uuid, '00000000-0000-0000-0000-000000000000'::uuid)
    ORDER BY id LIMIT ${o.limit}`);
  return [...rows];
}

/**
 * Compensation of an upload create whose workflow could not be started: the attempt goes, with the
 * folder link it added. Only while it is still waiting with no byte (nothing else has used it).
 */
export async function deleteUnstartedUpload(
  tx: DatabaseTransactionConnection,
  uploadId: string,
  addedLink: { recordingId: string; folderId: string } | null,
): Promise<void> {
  const deleted = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    DELETE FROM media_ingestions WHERE id = ${uploadId} AND phase = 'waiting' AND bytes_received = 0 RETURNING id`);
  if (deleted && addedLink) await unlinkFolder(tx, addedLink.recordingId, addedLink.folderId);
}

/**
 * Bytes an organization's direct uploads hold or have reserved: every upload that began (its whole
 * declared size) and was not cancelled or failed, this one excepted.
 */
export async function reservedUploadBytes(tx: CommonQueryMethods, organizationId: string, exceptUploadId: string): Promise<number> {
  return tx.oneFirst(sql.type(z.object({ bytes: z.number() }))`
    SELECT coalesce(sum(file_size), 0)::float8 AS bytes FROM media_ingestions
    WHERE organization_id = ${organizationId} AND kind = 'upload' AND began_at IS NOT NULL
      AND phase <> ALL('{cancelled,failed}') AND id <> ${exceptUploadId}`);
}

/** Serializes one organization's quota decisions (transaction-scoped). */
export async function lockOrganizationUploads(tx: DatabaseTransactionConnection, organizationId: string): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`upload-quota:${organizationId}`}, 0))`);
}
