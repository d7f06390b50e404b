import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Utterance } from '../../domain/transcript.js';
import { isUuid } from '../uuid.js';

export interface NewRecording {
  id: string;
  organizationId: string;
  name: string;
  recordedAt: string | null;
  assetSourceUrl: string | null;
  transcriptSupplied: boolean;
  createdBy: { userId: string | null; apiKeyId: string | null };
}

/** The recording row; media waits (`waiting`) or, with a URL, is `queued` for the ingestion worker. */
export async function insertRecording(tx: CommonQueryMethods, r: NewRecording): Promise<string> {
  return tx.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO recordings (id, organization_id, name, recorded_at, asset_status, asset_source_url, transcript_status, transcript_source,
      created_by_user_id, created_by_api_key_id)
    VALUES (${r.id}, ${r.organizationId}, ${r.name}, coalesce(${r.recordedAt}::timestamptz, now()), ${r.assetSourceUrl ? 'queued' : 'waiting'},
      ${r.assetSourceUrl}, ${r.transcriptSupplied ? 'completed' : 'waiting'}, ${r.transcriptSupplied ? 'api' : null},
      ${r.createdBy.userId}, ${r.createdBy.apiKeyId})
    RETURNING id`);
}

/**
 * The canonical record, or the recording that already holds its external id. ON CONFLICT waits for
 * a racing create to commit, so exactly one of many concurrent creates gets the record.
 */
export async function insertRecord(
  tx: CommonQueryMethods,
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
