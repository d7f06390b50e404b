import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { FieldType } from '../../domain/feedback-fields.js';
import { isUuid } from '../uuid.js';

/** Spec: the canonical record of a recording always lives in the organization's `api`/`recordings` source. */
export const RECORDINGS_SOURCE = { type: 'api', externalEntityName: 'recordings' } as const;

export const fieldRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  source_id: z.string(),
  name: z.string(),
  type: z.enum(['boolean', 'date', 'datetime', 'float', 'integer', 'json', 'string']),
  created_at: z.string(),
});
export type FieldRow = z.infer<typeof fieldRow>;

/** The organization's recordings source, created on first use (concurrent first uses settle on one row). */
export async function recordingsSourceId(db: CommonQueryMethods, organizationId: string): Promise<string> {
  await db.query(sql.unsafe`
    INSERT INTO metadata_sources (organization_id, type, external_entity_name)
    VALUES (${organizationId}, ${RECORDINGS_SOURCE.type}, ${RECORDINGS_SOURCE.externalEntityName})
    ON CONFLICT (organization_id, type, external_entity_name) DO NOTHING`);
  return db.oneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM metadata_sources
    WHERE organization_id = ${organizationId} AND type = ${RECORDINGS_SOURCE.type} AND external_entity_name = ${RECORDINGS_SOURCE.externalEntityName}`);
}

export async function insertField(
  db: CommonQueryMethods,
  input: { organizationId: string; sourceId: string; name: string; type: FieldType },
): Promise<FieldRow> {
  return db.one(sql.type(fieldRow)`
    INSERT INTO metadata_fields (organization_id, source_id, name, type)
    VALUES (${input.organizationId}, ${input.sourceId}, ${input.name}, ${input.type})
    RETURNING *`);
}

export async function listFields(
  db: CommonQueryMethods,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<readonly FieldRow[]> {
  return db.any(sql.type(fieldRow)`
    SELECT * FROM metadata_fields WHERE organization_id = ${organizationId}
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`);
}

/** Fields of the organization among `ids` (any source); ids of other organizations are absent. */
export async function fieldsByIds(db: CommonQueryMethods, organizationId: string, ids: readonly string[]): Promise<Map<string, FieldRow>> {
  const valid = ids.filter(isUuid).map((id) => id.toLowerCase());
  if (valid.length === 0) return new Map();
  const rows = await db.any(sql.type(fieldRow)`
    SELECT * FROM metadata_fields WHERE organization_id = ${organizationId} AND id = ANY(${sql.array(valid, 'uuid')})`);
  return new Map(rows.map((r) => [r.id, r]));
}

export const folderRow = z.object({ id: z.string(), organization_id: z.string(), name: z.string(), created_at: z.string() });
export type FolderRow = z.infer<typeof folderRow>;

export async function insertFolder(db: CommonQueryMethods, organizationId: string, name: string): Promise<FolderRow> {
  return db.one(sql.type(folderRow)`INSERT INTO folders (organization_id, name) VALUES (${organizationId}, ${name}) RETURNING *`);
}

export async function listFolders(
  db: CommonQueryMethods,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<readonly FolderRow[]> {
  return db.any(sql.type(folderRow)`
    SELECT * FROM folders WHERE organization_id = ${organizationId} ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`);
}

/** Folder ids of the organization among `ids`. */
export async function folderIdsIn(db: CommonQueryMethods, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM folders WHERE organization_id = ${organizationId} AND id = ANY(${sql.array([...ids], 'uuid')})`);
  return new Set(found);
}
