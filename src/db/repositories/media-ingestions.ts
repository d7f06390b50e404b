import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export const ingestionRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  recording_id: z.string(),
  kind: z.enum(['url', 'upload']),
  phase: z.enum(['waiting', 'transferring', 'encoding', 'finalizing', 'ready', 'failed', 'cancelled']),
  encode_progress: z.number().nullable(),
  error_code: z.string().nullable(),
  bytes_received: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
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

export async function sourceUrl(db: CommonQueryMethods, recordingId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ asset_source_url: z.string().nullable() }))`
    SELECT asset_source_url FROM recordings WHERE id = ${recordingId}`);
}

type AssetStatus = 'queued' | 'uploading' | 'processing' | 'completed' | 'failed' | 'cancelled';

/**
 * Moves an ingestion to a phase (never out of a terminal one) and the recording's asset with it,
 * in one transaction. Returns false when the ingestion already ended (a late retry changes nothing).
 */
export async function movePhase(
  tx: CommonQueryMethods,
  ingestionId: string,
  to: { phase: IngestionRow['phase']; asset: AssetStatus; errorCode?: string | null; progress?: number | null },
): Promise<boolean> {
  const terminal = ['ready', 'failed', 'cancelled'].includes(to.phase);
  const moved = await tx.maybeOne(sql.type(z.object({ recording_id: z.string() }))`
    UPDATE media_ingestions SET phase = ${to.phase}, error_code = ${to.errorCode ?? null}, encode_progress = ${to.progress ?? null},
      updated_at = now(), finished_at = CASE WHEN ${terminal} THEN now() ELSE NULL END
    WHERE id = ${ingestionId} AND phase NOT IN ('ready', 'failed', 'cancelled')
    RETURNING recording_id`);
  if (!moved) return false;
  await tx.query(sql.unsafe`
    UPDATE recordings SET asset_status = ${to.asset}, asset_error_code = ${to.errorCode ?? null}, updated_at = now()
    WHERE id = ${moved.recording_id}`);
  return true;
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
  tx: CommonQueryMethods,
  ingestionId: string,
  r: { recordingId: string; file: string; contentType: string; durationSec: number | null },
): Promise<boolean> {
  const moved = await movePhase(tx, ingestionId, { phase: 'ready', asset: 'completed' });
  if (!moved) return false;
  await tx.query(sql.unsafe`
    UPDATE recordings SET asset_rendition_file = ${r.file}, asset_content_type = ${r.contentType}, asset_duration_sec = ${r.durationSec}
    WHERE id = ${r.recordingId}`);
  return true;
}

type TranscriptStatus = 'processing' | 'completed' | 'failed' | 'unavailable';

/**
 * Moves an automatic transcript's status. A supplied transcript (source `api`) is never touched:
 * the update matches only recordings whose transcript is not from the API.
 */
export async function setAutomaticTranscript(db: CommonQueryMethods, recordingId: string, status: TranscriptStatus): Promise<boolean> {
  const row = await db.maybeOne(sql.type(z.object({ id: z.string() }))`
    UPDATE recordings SET transcript_status = ${status}, transcript_source = ${status === 'completed' ? 'automatic' : null}, updated_at = now()
    WHERE id = ${recordingId} AND transcript_source IS DISTINCT FROM 'api'
    RETURNING id`);
  return row !== null;
}

export async function renditionFile(db: CommonQueryMethods, recordingId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ asset_rendition_file: z.string().nullable() }))`
    SELECT asset_rendition_file FROM recordings WHERE id = ${recordingId}`);
}
