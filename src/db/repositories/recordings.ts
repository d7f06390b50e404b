import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { Utterance } from '../../domain/transcript.js';
import { isUuid } from '../uuid.js';
import { recordEvent } from './domain-events.js';
import { contains, scrubbedText, type Needle, type ScrubTarget } from './text-scrub.js';

/*
 * This module owns the writes to `recordings` and its transcript (`transcript_utterances`,
 * `recording_participants`, `recording_folders`): the ingestion and meeting-join repositories
 * change a recording's asset and transcript through the functions here. The one exception is
 * `recordUploadBytes` (media-ingestions.ts), one statement on the tus endpoint's hot path.
 */

export interface NewRecording {
  id: string;
  organizationId: string;
  name: string;
  recordedAt: string | null;
  assetSourceUrl: string | null;
  transcriptSupplied: boolean;
  createdBy: { userId: string | null; apiKeyId: string | null };
}

/**
 * The recording row; media waits (`waiting`) or, with a URL, is `queued` for the ingestion worker.
 * A supplied transcript is `completed` at once, and announced.
 */
export async function insertRecording(tx: DatabaseTransactionConnection, r: NewRecording): Promise<string> {
  const id = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO recordings (id, organization_id, name, recorded_at, asset_status, asset_source_url, transcript_status, transcript_source,
      created_by_user_id, created_by_api_key_id)
    VALUES (${r.id}, ${r.organizationId}, ${r.name}, coalesce(${r.recordedAt}::timestamptz, now()), ${r.assetSourceUrl ? 'queued' : 'waiting'},
      ${r.assetSourceUrl}, ${r.transcriptSupplied ? 'completed' : 'waiting'}, ${r.transcriptSupplied ? 'api' : null},
      ${r.createdBy.userId}, ${r.createdBy.apiKeyId})
    RETURNING id`);
  if (r.transcriptSupplied) await transcriptCompleted(tx, { organizationId: r.organizationId, recordingId: id, source: 'api' });
  return id;
}

function transcriptCompleted(
  tx: DatabaseTransactionConnection,
  e: { organizationId: string; recordingId: string; source: 'api' | 'automatic' },
): Promise<void> {
  return recordEvent(tx, {
    type: 'recording.transcript_completed',
    organizationId: e.organizationId,
    subjectId: e.recordingId,
    payload: { recordingId: e.recordingId, source: e.source },
  });
}

/**
 * The canonical record, or the recording that already holds its external id. ON CONFLICT waits for
 * a racing create to commit, so exactly one of many concurrent creates gets the record.
 */
export async function insertRecord(
  tx: DatabaseTransactionConnection,
  input: { organizationId: string; sourceId: string; externalId: string; recordingId: string },
): Promise<{ recordId: string } | { existingRecordingId: string | null }> {
  const recordId = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO metadata_records (organization_id, source_id, external_id, recording_id)
    VALUES (${input.organizationId}, ${input.sourceId}, ${input.externalId}, ${input.recordingId})
    ON CONFLICT (source_id, external_id) DO NOTHING
    RETURNING id`);
  if (recordId) return { recordId };
  const existing = await tx.maybeOneFirst(sql.type(z.object({ recording_id: z.string().nullable() }))`
    SELECT recording_id FROM metadata_records WHERE source_id = ${input.sourceId} AND external_id = ${input.externalId}`);
  return { existingRecordingId: existing ?? null };
}

export async function insertValues(tx: CommonQueryMethods, recordId: string, values: readonly { fieldId: string; value: unknown }[]) {
  if (values.length === 0) return;
  const rows = values.map((v, position) => ({ field_id: v.fieldId, position, value: v.value }));
  await tx.query(sql.unsafe`
    INSERT INTO metadata_values (record_id, field_id, position, value)
    SELECT ${recordId}, x.field_id, x.position, x.value
    FROM jsonb_to_recordset(${sql.jsonb(rows as never)}) AS x(field_id uuid, position integer, value jsonb)`);
}

export async function linkFolders(tx: CommonQueryMethods, recordingId: string, folderIds: readonly string[]) {
  if (folderIds.length === 0) return;
  await tx.query(sql.unsafe`
    INSERT INTO recording_folders (recording_id, folder_id)
    SELECT ${recordingId}, unnest(${sql.array([...folderIds], 'uuid')})
    ON CONFLICT DO NOTHING`);
}

/** Files the recording in one folder; true when the link is new. */
export async function linkFolder(tx: CommonQueryMethods, recordingId: string, folderId: string): Promise<boolean> {
  const added = await tx.maybeOneFirst(sql.type(z.object({ folder_id: z.string() }))`
    INSERT INTO recording_folders (recording_id, folder_id) VALUES (${recordingId}, ${folderId})
    ON CONFLICT DO NOTHING RETURNING folder_id`);
  return added !== null;
}

/** Takes a link back (an upload's compensation). */
export async function unlinkFolder(db: CommonQueryMethods, recordingId: string, folderId: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM recording_folders WHERE recording_id = ${recordingId} AND folder_id = ${folderId}`);
}

export async function insertParticipants(
  tx: CommonQueryMethods,
  recordingId: string,
  pairs: readonly { speaker: number; personId: number }[],
) {
  if (pairs.length === 0) return;
  await tx.query(sql.unsafe`
    INSERT INTO recording_participants (recording_id, speaker, person_id)
    SELECT ${recordingId}, s, p FROM unnest(${sql.array(
      pairs.map((x) => x.speaker),
      'int4',
    )}, ${sql.array(
      pairs.map((x) => x.personId),
      'int8',
    )}) AS t(s, p)`);
}

/** The whole transcript in one statement (column arrays through unnest: 10,000 rows, one round trip). */
export async function insertUtterances(tx: CommonQueryMethods, recordingId: string, utterances: readonly Utterance[]) {
  if (utterances.length === 0) return;
  await tx.query(sql.unsafe`
    INSERT INTO transcript_utterances (recording_id, position, start_sec, end_sec, speaker, text)
    SELECT ${recordingId}, t.ordinality - 1, t.start_sec, t.end_sec, t.speaker, t.text
    FROM unnest(${sql.array(
      utterances.map((u) => u.startSec),
      'float8',
    )}, ${sql.array(
      utterances.map((u) => u.endSec),
      'float8',
    )},
      ${sql.array(
        utterances.map((u) => u.speaker),
        'int4',
      )}, ${sql.array(
        utterances.map((u) => u.text),
        'text',
      )})
      WITH ORDINALITY AS t(start_sec, end_sec, speaker, text, ordinality)`);
}

export const utteranceRow = z.object({ start_sec: z.number(), end_sec: z.number(), speaker: z.number(), text: z.string() });

export async function utterancesOf(db: CommonQueryMethods, recordingId: string) {
  return db.any(sql.type(utteranceRow)`
    SELECT start_sec, end_sec, speaker, text FROM transcript_utterances WHERE recording_id = ${recordingId} ORDER BY position`);
}

export async function recordingExists(db: CommonQueryMethods, organizationId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  return db.exists(sql.unsafe`SELECT 1 FROM recordings WHERE id = ${id} AND organization_id = ${organizationId}`);
}

/** The recording's organization, or null when it does not exist; `lock`: FOR UPDATE (in a transaction). */
export async function recordingOrganization(db: CommonQueryMethods, recordingId: string, lock = false): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ organization_id: z.string() }))`
    SELECT organization_id FROM recordings WHERE id = ${recordingId} ${lock ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
}

/** The recording's asset status under a lock (null: not the organization's recording): new media is decided under it. */
export async function lockRecordingAsset(
  tx: DatabaseTransactionConnection,
  organizationId: string,
  recordingId: string,
): Promise<string | null> {
  return tx.maybeOneFirst(sql.type(z.object({ asset_status: z.string() }))`
    SELECT asset_status FROM recordings WHERE id = ${recordingId} AND organization_id = ${organizationId} FOR UPDATE`);
}

export async function sourceUrl(db: CommonQueryMethods, recordingId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ asset_source_url: z.string().nullable() }))`
    SELECT asset_source_url FROM recordings WHERE id = ${recordingId}`);
}

export async function renditionFile(db: CommonQueryMethods, recordingId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ asset_rendition_file: z.string().nullable() }))`
    SELECT asset_rendition_file FROM recordings WHERE id = ${recordingId}`);
}

/**
 * Whether `file` is the recording's published rendition now: a playback URL serves nothing once
 * its recording is deleted (the files go a little later, with the deletion workflow) or its
 * rendition replaced. One primary-key read per request.
 */
export async function isPublishedRendition(db: CommonQueryMethods, recordingId: string, file: string): Promise<boolean> {
  const row = await db.maybeOne(sql.type(z.object({ published: z.boolean() }))`
    SELECT true AS published FROM recordings WHERE id = ${recordingId} AND asset_rendition_file = ${file}`);
  return row !== null;
}

export type AssetStatus = 'waiting' | 'queued' | 'uploading' | 'processing' | 'completed' | 'failed' | 'cancelled';

/** The recording's asset follows its media ingestion (the error code is cleared unless given). */
export async function setAssetStatus(
  db: CommonQueryMethods,
  recordingId: string,
  status: AssetStatus,
  errorCode: string | null = null,
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE recordings SET asset_status = ${status}, asset_error_code = ${errorCode}, updated_at = now() WHERE id = ${recordingId}`);
}

/** The published rendition: what the playback URL serves. */
export async function setRendition(
  db: CommonQueryMethods,
  recordingId: string,
  r: { file: string; contentType: string; durationSec: number | null },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE recordings SET asset_rendition_file = ${r.file}, asset_content_type = ${r.contentType}, asset_duration_sec = ${r.durationSec}
    WHERE id = ${recordingId}`);
}

type TranscriptStatus = 'processing' | 'failed' | 'unavailable';

/**
 * Moves an automatic transcript's status. A supplied transcript (source `api`) is never touched:
 * the update matches only recordings whose transcript is not from the API.
 */
export async function setAutomaticTranscript(db: CommonQueryMethods, recordingId: string, status: TranscriptStatus): Promise<boolean> {
  return (await automaticTranscriptStatus(db, recordingId, status)) !== null;
}

async function automaticTranscriptStatus(
  db: CommonQueryMethods,
  recordingId: string,
  status: TranscriptStatus | 'completed',
): Promise<{ organization_id: string } | null> {
  return db.maybeOne(sql.type(z.object({ organization_id: z.string() }))`
    UPDATE recordings SET transcript_status = ${status}, transcript_source = ${status === 'completed' ? 'automatic' : null}, updated_at = now()
    WHERE id = ${recordingId} AND transcript_source IS DISTINCT FROM 'api'
    RETURNING organization_id`);
}

/** The automatic transcript replaces any earlier one and is `completed` (announced), unless a supplied one is there. */
export async function storeAutomaticTranscript(
  tx: DatabaseTransactionConnection,
  recordingId: string,
  utterances: readonly Utterance[],
): Promise<boolean> {
  await tx.query(sql.unsafe`DELETE FROM transcript_utterances WHERE recording_id = ${recordingId}`);
  await insertUtterances(tx, recordingId, utterances);
  const moved = await automaticTranscriptStatus(tx, recordingId, 'completed');
  if (moved) await transcriptCompleted(tx, { organizationId: moved.organization_id, recordingId, source: 'automatic' });
  return moved !== null;
}

/** A meeting's recording, before its bot exists; a retry (same id) changes nothing. */
export async function insertMeetingRecordingRow(
  db: CommonQueryMethods,
  r: { id: string; organizationId: string; name: string; userId: string },
): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO recordings (id, organization_id, name, source, asset_status, transcript_status, created_by_user_id)
    VALUES (${r.id}, ${r.organizationId}, ${r.name}, 'meeting', 'waiting', 'waiting', (SELECT id FROM users WHERE id = ${r.userId}))
    ON CONFLICT (id) DO NOTHING`);
}

/** A meeting recording whose bot never existed goes (its join row with it). */
export async function deleteMeetingRecording(db: CommonQueryMethods, recordingId: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM recordings WHERE id = ${recordingId} AND source = 'meeting'`);
}

/**
 * The recorder failed: the asset is `failed` (`recorder_failed`), announced when it was not failed
 * already, and no transcript will come. Media already published stays.
 */
export async function failRecorderMedia(tx: DatabaseTransactionConnection, recordingId: string): Promise<void> {
  const moved = await tx.maybeOne(sql.type(z.object({ organization_id: z.string(), was_failed: z.boolean() }))`
    UPDATE recordings r SET asset_status = 'failed', asset_error_code = 'recorder_failed', transcript_status = 'failed', updated_at = now()
    FROM recordings old
    WHERE r.id = ${recordingId} AND old.id = r.id AND r.asset_status <> 'completed'
    RETURNING r.organization_id, old.asset_status = 'failed' AS was_failed`);
  if (moved && !moved.was_failed) {
    await recordEvent(tx, {
      type: 'recording.media_failed',
      organizationId: moved.organization_id,
      subjectId: recordingId,
      payload: { recordingId, ingestionId: null, errorCode: 'recorder_failed' },
    });
  }
}

/**
 * Deletes a recording's rows: its transcript, participants, folders, metadata record and values,
 * media ingestions and meeting join go with it (foreign keys). What is outside PostgreSQL is the
 * recording deletion's job (recording-deletions.ts).
 */
export async function deleteRecordingRow(tx: DatabaseTransactionConnection, organizationId: string, recordingId: string): Promise<boolean> {
  const result = await tx.query(sql.unsafe`DELETE FROM recordings WHERE id = ${recordingId} AND organization_id = ${organizationId}`);
  return result.rowCount > 0;
}

/**
 * The scrubs of an erased person's e-mail in recordings' names, `assetUrl`s (kept after the transfer;
 * one not yet fetched then fails) and transcripts (person-erasures.ts runs them).
 */
export function recordingScrubTargets(
  organizationId: string,
  needle: Needle,
): { recordings: ScrubTarget; transcript_utterances: ScrubTarget } {
  const scope = sql.fragment`t.organization_id = ${organizationId}`;
  return {
    recordings: {
      table: 'recordings',
      key: 'id',
      keyType: 'uuid',
      scope,
      match: contains(sql.fragment`concat_ws(' ', c.name, c.asset_source_url)`, needle),
      set: sql.fragment`name = ${scrubbedText(sql.fragment`c.name`, needle)},
        asset_source_url = ${scrubbedText(sql.fragment`c.asset_source_url`, needle)}, updated_at = now()`,
    },
    transcript_utterances: {
      table: 'transcript_utterances',
      key: 'id',
      keyType: 'uuid',
      parent: { table: 'recordings', fk: 'recording_id' },
      scope,
      match: contains(sql.fragment`c.text`, needle),
      set: sql.fragment`text = ${scrubbedText(sql.fragment`c.text`, needle)}`,
    },
  };
}

export interface ImportedRecording {
  id: string;
  name: string;
  source: string;
  recorded_at: string;
  transcript_status: string;
  transcript_source: string | null;
  created_at: string;
  folder_ids: string[];
  participants: { speaker: number; person_id: number }[];
  utterances: Utterance[];
  /** The canonical record (in `sourceId`, the organization's recordings source) with its values. */
  record: { id: string; external_id: string; values: { field_id: string; value: unknown }[] } | null;
}

/**
 * `intake org import`: recordings without their media (`waiting`, as if created without a URL),
 * with transcript, participants, folder links and canonical record; a statement per table for
 * the whole batch. Nothing is announced: an import is not a change of the organization's data.
 */
export async function importRecordings(
  tx: DatabaseTransactionConnection,
  organizationId: string,
  sourceId: string,
  recordings: readonly ImportedRecording[],
): Promise<void> {
  const rows = (pick: (r: ImportedRecording) => Record<string, unknown>[]) => sql.jsonb(recordings.flatMap(pick));
  await tx.query(sql.unsafe`
    INSERT INTO recordings (id, organization_id, name, source, recorded_at, asset_status, transcript_status, transcript_source,
      created_at, updated_at)
    SELECT x.id, ${organizationId}, x.name, x.source, x.recorded_at, 'waiting', x.transcript_status, x.transcript_source, x.created_at,
      x.created_at
    FROM jsonb_to_recordset(${rows((r) => [r as never])}) AS x(id uuid, name text, source text, recorded_at timestamptz,
      transcript_status text, transcript_source text, created_at timestamptz)`);
  await tx.query(sql.unsafe`
    INSERT INTO transcript_utterances (recording_id, position, start_sec, end_sec, speaker, text)
    SELECT x.recording_id, x.position, x.start_sec, x.end_sec, x.speaker, x.text
    FROM jsonb_to_recordset(${rows((r) =>
      r.utterances.map((u, position) => ({
        recording_id: r.id,
        position,
        start_sec: u.startSec,
        end_sec: u.endSec,
        speaker: u.speaker,
        text: u.text,
      })),
    )}) AS x(recording_id uuid, position integer, start_sec double precision, end_sec double precision, speaker integer, text text)`);
  await tx.query(sql.unsafe`
    INSERT INTO recording_participants (recording_id, speaker, person_id)
    SELECT x.recording_id, x.speaker, x.person_id
    FROM jsonb_to_recordset(${rows((r) => r.participants.map((p) => ({ recording_id: r.id, ...p })))})
      AS x(recording_id uuid, speaker integer, person_id bigint)`);
  await tx.query(sql.unsafe`
    INSERT INTO recording_folders (recording_id, folder_id)
    SELECT x.recording_id, x.folder_id
    FROM jsonb_to_recordset(${rows((r) => r.folder_ids.map((folder_id) => ({ recording_id: r.id, folder_id })))})
      AS x(recording_id uuid, folder_id uuid)`);
  await tx.query(sql.unsafe`
    INSERT INTO metadata_records (id, organization_id, source_id, external_id, recording_id)
    SELECT x.id, ${organizationId}, ${sourceId}, x.external_id, x.recording_id
    FROM jsonb_to_recordset(${rows((r) => (r.record ? [{ id: r.record.id, external_id: r.record.external_id, recording_id: r.id }] : []))})
      AS x(id uuid, external_id text, recording_id uuid)`);
  await tx.query(sql.unsafe`
    INSERT INTO metadata_values (record_id, field_id, position, value)
    SELECT x.record_id, x.field_id, x.position, x.value
    FROM jsonb_to_recordset(${rows((r) =>
      (r.record?.values ?? []).map((v, position) => ({ record_id: r.record!.id, field_id: v.field_id, position, value: v.value })),
    )}) AS x(record_id uuid, field_id uuid, position integer, value jsonb)`);
}
