import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';
import { changeColumns, changeConditions, changeOrder, changePage, type ChangePage, type ChangeWindow } from './sync-pages.js';

export const recordingRow = z.object({
  id: z.string(),
  name: z.string(),
  recorded_at: z.string(),
  asset_status: z.string(),
  asset_error_code: z.string().nullable(),
  asset_rendition_file: z.string().nullable(),
  transcript_status: z.string(),
  transcript_source: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  participants: z.array(
    z.object({
      speaker: z.number(),
      person: z.object({ id: z.string(), firstName: z.string().nullable(), lastName: z.string().nullable(), email: z.string() }),
    }),
  ),
  record: z
    .object({
      id: z.string(),
      externalId: z.string(),
      source: z.object({ id: z.string(), type: z.string(), externalEntityName: z.string() }),
      values: z.array(z.object({ fieldId: z.string(), name: z.string(), type: z.string(), value: z.unknown() })),
    })
    .nullable(),
  folder_ids: z.array(z.string()),
  // The active media ingestion's retry (migration 0028), if one is under way.
  retry_error_code: z.string().nullable(),
  retry_message: z.string().nullable(),
  retry_attempt: z.number().nullable(),
  retry_next_attempt_at: z.string().nullable(),
});
export type RecordingRow = z.infer<typeof recordingRow>;

/** The recording resource in one round trip (participants, canonical record with values, folders). */
export async function findRecording(db: CommonQueryMethods, organizationId: string, id: string): Promise<RecordingRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(recordingRow)`
    SELECT r.id, r.name, r.recorded_at, r.asset_status, r.asset_error_code, r.asset_rendition_file, r.transcript_status, r.transcript_source, r.created_at, r.updated_at,
      (SELECT coalesce(jsonb_agg(jsonb_build_object('speaker', rp.speaker, 'person',
          jsonb_build_object('id', p.uuid, 'firstName', p.first_name, 'lastName', p.last_name, 'email', p.email)) ORDER BY rp.speaker), '[]')
        FROM recording_participants rp JOIN people p ON p.id = rp.person_id WHERE rp.recording_id = r.id) AS participants,
      (SELECT jsonb_build_object('id', m.id, 'externalId', m.external_id,
          'source', jsonb_build_object('id', s.id, 'type', s.type, 'externalEntityName', s.external_entity_name),
          'values', coalesce((SELECT jsonb_agg(jsonb_build_object('fieldId', f.id, 'name', f.name, 'type', f.type, 'value', v.value) ORDER BY v.position)
            FROM metadata_values v JOIN metadata_fields f ON f.id = v.field_id WHERE v.record_id = m.id), '[]'))
        FROM metadata_records m JOIN metadata_sources s ON s.id = m.source_id
        WHERE m.recording_id = r.id AND s.type = 'api' AND s.external_entity_name = 'recordings' LIMIT 1) AS record,
      (SELECT coalesce(jsonb_agg(folder_id ORDER BY created_at, folder_id), '[]') FROM recording_folders WHERE recording_id = r.id) AS folder_ids,
      i.retry_error_code, i.retry_message, i.retry_attempt, i.retry_next_attempt_at
    FROM recordings r
    LEFT JOIN LATERAL (
      SELECT retry_error_code, retry_message, retry_attempt, retry_next_attempt_at FROM media_ingestions
      WHERE recording_id = r.id AND phase NOT IN ('ready', 'failed', 'cancelled') AND retry_error_code IS NOT NULL LIMIT 1
    ) i ON true
    WHERE r.id = ${id} AND r.organization_id = ${organizationId}`);
}

export const listItemRow = z.object({
  id: z.string(),
  display_name: z.string(),
  source: z.string(),
  recorded_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  metadata: z.array(z.unknown()),
});
export type ListItemRow = z.infer<typeof listItemRow>;

export interface RecordedAtFilter {
  gt?: string | undefined;
  gte?: string | undefined;
  lt?: string | undefined;
  lte?: string | undefined;
}

function recordedAtConditions(organizationId: string, filter: RecordedAtFilter) {
  return [
    sql.fragment`r.organization_id = ${organizationId}`,
    ...(filter.gt ? [sql.fragment`r.recorded_at > ${filter.gt}::timestamptz`] : []),
    ...(filter.gte ? [sql.fragment`r.recorded_at >= ${filter.gte}::timestamptz`] : []),
    ...(filter.lt ? [sql.fragment`r.recorded_at < ${filter.lt}::timestamptz`] : []),
    ...(filter.lte ? [sql.fragment`r.recorded_at <= ${filter.lte}::timestamptz`] : []),
  ];
}

/** A list item's columns, with the metadata of only the selected rows. */
const listItemColumns = sql.fragment`r.id, r.name AS display_name, r.source, r.recorded_at, r.created_at, r.updated_at,
      (SELECT coalesce(jsonb_agg(jsonb_build_object(
          'source', jsonb_build_object('type', s.type, 'external_entity_name', s.external_entity_name),
          'record', jsonb_build_object('external_id', m.external_id, 'fields', coalesce((
            SELECT jsonb_agg(jsonb_build_object('field_id', f.id, 'name', f.name, 'type', f.type, 'value', v.value) ORDER BY v.position)
            FROM metadata_values v JOIN metadata_fields f ON f.id = v.field_id WHERE v.record_id = m.id), '[]'))) ORDER BY m.created_at), '[]')
        FROM metadata_records m JOIN metadata_sources s ON s.id = m.source_id WHERE m.recording_id = r.id) AS metadata`;

/** Newest recorded first; metadata of only the page's rows (the index scan stops at the limit). */
export async function listRecordings(
  db: CommonQueryMethods,
  organizationId: string,
  filter: RecordedAtFilter & { offset: number; limit: number },
): Promise<readonly ListItemRow[]> {
  return db.any(sql.type(listItemRow)`
    SELECT ${listItemColumns}
    FROM recordings r
    WHERE ${sql.join(recordedAtConditions(organizationId, filter), sql.fragment` AND `)}
    ORDER BY r.recorded_at DESC, r.id DESC
    LIMIT ${filter.limit} OFFSET ${filter.offset}`);
}

/** One recording as the list shows it (null when deleted): a webhook's `data.recording`. */
export async function findListItem(db: CommonQueryMethods, organizationId: string, id: string): Promise<ListItemRow | null> {
  return (await findListItems(db, organizationId, [id]))[0] ?? null;
}

/** Several recordings' list items by id (unknown, invalid or other organizations' ids are left out). */
export async function findListItems(
  db: CommonQueryMethods,
  organizationId: string,
  ids: readonly string[],
): Promise<readonly ListItemRow[]> {
  const valid = ids.filter(isUuid);
  if (valid.length === 0) return [];
  return db.any(sql.type(listItemRow)`
    SELECT ${listItemColumns} FROM recordings r WHERE r.id = ANY(${sql.array(valid, 'uuid')}) AND r.organization_id = ${organizationId}`);
}

/** The recordings changed after a position, oldest change first (incremental sync, migration 0026). */
export async function recordingChanges(
  db: CommonQueryMethods,
  organizationId: string,
  filter: RecordedAtFilter,
  w: ChangeWindow,
): Promise<ChangePage<ListItemRow>> {
  const r = sql.identifier(['r']);
  return changePage(
    db,
    listItemRow,
    sql.fragment`
      SELECT ${changeColumns(r)}, ${listItemColumns}
      FROM recordings r
      WHERE ${sql.join(recordedAtConditions(organizationId, filter), sql.fragment` AND `)} AND ${changeConditions(r, w)}
      ${changeOrder(r, w)}`,
  );
}
