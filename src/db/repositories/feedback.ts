import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export const sourceRow = z.object({
  id: z.number(),
  organization_id: z.string(),
  name: z.string(),
  type: z.literal('api'),
  created_at: z.string(),
});
export type SourceRow = z.infer<typeof sourceRow>;

export const recordRow = z.object({
  id: z.number(),
  organization_id: z.string(),
  feedback_source_id: z.number(),
  person_id: z.number().nullable(),
  external_id: z.string(),
  display_ts: z.string(),
  fields: z.array(z.object({ category: z.string(), type: z.string(), name: z.string(), value: z.unknown() })),
  created_at: z.string(),
});
export type RecordRow = z.infer<typeof recordRow>;

export async function createSource(
  db: CommonQueryMethods,
  organizationId: string,
  input: { name: string; type: 'api' },
): Promise<SourceRow> {
  return db.one(sql.type(sourceRow)`
    INSERT INTO feedback_sources (organization_id, name, type) VALUES (${organizationId}, ${input.name}, ${input.type})
    RETURNING *`);
}

export async function findSource(db: CommonQueryMethods, organizationId: string, id: number): Promise<SourceRow | null> {
  return db.maybeOne(sql.type(sourceRow)`SELECT * FROM feedback_sources WHERE id = ${id} AND organization_id = ${organizationId}`);
}

export async function listSources(
  db: CommonQueryMethods,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<readonly SourceRow[]> {
  return db.any(sql.type(sourceRow)`
    SELECT * FROM feedback_sources WHERE organization_id = ${organizationId}
    ORDER BY id LIMIT ${page.limit} OFFSET ${page.offset}`);
}

export interface RecordInput {
  organizationId: string;
  sourceId: number;
  personId: number | null;
  externalId: string;
  displayTs: string | null;
  fields: unknown[];
}

export type InsertOutcome = { record: RecordRow } | { duplicateOf: number } | { missing: 'source' | 'person' };

/**
 * One statement on the happy path: the record is inserted only when the source (and the person,
 * when given) belongs to the organization, and its external_id is free in the source. When nothing
 * was inserted, a second look tells why. The unique index decides concurrent duplicates: exactly
 * one insert wins.
 */
export async function insertRecord(db: CommonQueryMethods, input: RecordInput): Promise<InsertOutcome> {
  const record = await db.maybeOne(sql.type(recordRow)`
    INSERT INTO feedback_records (organization_id, feedback_source_id, person_id, external_id, display_ts, fields)
    SELECT ${input.organizationId}, s.id, ${input.personId}, ${input.externalId},
           coalesce(${input.displayTs}::timestamptz, now()), ${sql.jsonb(input.fields as never)}
    FROM feedback_sources s
    WHERE s.id = ${input.sourceId} AND s.organization_id = ${input.organizationId}
      AND (${input.personId}::bigint IS NULL OR EXISTS (
        SELECT 1 FROM people p WHERE p.id = ${input.personId} AND p.organization_id = ${input.organizationId}))
    ON CONFLICT (feedback_source_id, external_id) DO NOTHING
    RETURNING *`);
  if (record) return { record };
  const why = await db.one(sql.type(z.object({ source: z.boolean(), person: z.boolean(), existing: z.number().nullable() }))`
    SELECT
      EXISTS (SELECT 1 FROM feedback_sources WHERE id = ${input.sourceId} AND organization_id = ${input.organizationId}) AS source,
      (${input.personId}::bigint IS NULL OR EXISTS (
        SELECT 1 FROM people WHERE id = ${input.personId} AND organization_id = ${input.organizationId})) AS person,
      (SELECT id FROM feedback_records r
        WHERE r.feedback_source_id = ${input.sourceId} AND r.organization_id = ${input.organizationId}
          AND r.external_id = ${input.externalId}) AS existing`);
  if (!why.source) return { missing: 'source' };
  if (!why.person) return { missing: 'person' };
  if (why.existing === null) throw new Error('feedback record neither inserted nor found');
  return { duplicateOf: why.existing };
}

export async function findRecord(db: CommonQueryMethods, organizationId: string, sourceId: number, id: number): Promise<RecordRow | null> {
  return db.maybeOne(sql.type(recordRow)`
    SELECT * FROM feedback_records WHERE id = ${id} AND feedback_source_id = ${sourceId} AND organization_id = ${organizationId}`);
}

export async function listRecords(
  db: CommonQueryMethods,
  organizationId: string,
  sourceId: number,
  filter: { externalId?: string | undefined; offset: number; limit: number },
): Promise<readonly RecordRow[]> {
  const byExternalId = filter.externalId !== undefined ? sql.fragment`AND external_id = ${filter.externalId}` : sql.fragment``;
  return db.any(sql.type(recordRow)`
    SELECT * FROM feedback_records
    WHERE feedback_source_id = ${sourceId} AND organization_id = ${organizationId} ${byExternalId}
    ORDER BY id LIMIT ${filter.limit} OFFSET ${filter.offset}`);
}

/** Deletes a record of the source; null when there is none (unknown, another source's or organization's). */
export async function deleteRecord(db: CommonQueryMethods, organizationId: string, sourceId: number, id: number): Promise<number | null> {
  return db.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    DELETE FROM feedback_records WHERE id = ${id} AND feedback_source_id = ${sourceId} AND organization_id = ${organizationId}
    RETURNING id`);
}

/** Deletes a source with its records (the foreign key cascades); null when there is none. */
export async function deleteSource(db: CommonQueryMethods, organizationId: string, id: number): Promise<number | null> {
  return db.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    DELETE FROM feedback_sources WHERE id = ${id} AND organization_id = ${organizationId} RETURNING id`);
}
