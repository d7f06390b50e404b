import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Tx } from '../pool.js';

export const personRow = z.object({
  id: z.number(),
  uuid: z.string(),
  organization_id: z.string(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  boundary: z.enum(['external', 'internal']),
  company_id: z.number().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type PersonRow = z.infer<typeof personRow>;

export interface PersonInput {
  organizationId: string;
  email: string;
  firstName?: string | undefined;
  lastName?: string | undefined;
  boundary?: 'external' | 'internal' | undefined;
  company?: { name: string; domain: string } | undefined;
}

/**
 * Creates the person or updates the one with the same e-mail (case-insensitive) in the
 * organization; fields not sent keep their values. The company is upserted by domain within the
 * organization and linked, in the caller's transaction; the unique indexes settle concurrent upserts.
 */
export async function upsertPerson(tx: Tx, input: PersonInput): Promise<{ person: PersonRow; created: boolean }> {
  const companyId = input.company
    ? await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        INSERT INTO companies (organization_id, name, domain)
        VALUES (${input.organizationId}, ${input.company.name}, ${input.company.domain.toLowerCase()})
        ON CONFLICT (organization_id, lower(domain)) DO UPDATE SET name = EXCLUDED.name, updated_at = now()
        RETURNING id`)
    : null;
  const row = await tx.one(sql.type(personRow.extend({ inserted: z.boolean() }))`
    INSERT INTO people (organization_id, email, first_name, last_name, boundary, company_id)
    VALUES (${input.organizationId}, ${input.email}, ${input.firstName ?? null}, ${input.lastName ?? null},
            ${input.boundary ?? 'external'}, ${companyId})
    ON CONFLICT (organization_id, lower(email)) DO UPDATE SET
      first_name = coalesce(${input.firstName ?? null}, people.first_name),
      last_name = coalesce(${input.lastName ?? null}, people.last_name),
      boundary = coalesce(${input.boundary ?? null}, people.boundary),
      company_id = coalesce(${companyId}, people.company_id),
      updated_at = now()
    RETURNING *, (xmax = 0) AS inserted`);
  const { inserted, ...person } = row;
  return { person, created: inserted };
}

export async function listPeople(
  db: CommonQueryMethods,
  organizationId: string,
  filter: { email?: string | undefined; offset: number; limit: number },
): Promise<readonly PersonRow[]> {
  const byEmail = filter.email ? sql.fragment`AND lower(email) = lower(${filter.email})` : sql.fragment``;
  return db.any(sql.type(personRow)`
    SELECT * FROM people WHERE organization_id = ${organizationId} ${byEmail}
    ORDER BY id LIMIT ${filter.limit} OFFSET ${filter.offset}`);
}

/** The person of the organization by id, uuid or e-mail (any case), not erased; null: none (an erasure's preview). */
export async function findErasablePerson(
  db: CommonQueryMethods,
  organizationId: string,
  ref: { id: number } | { uuid: string } | { email: string },
): Promise<PersonRow | null> {
  const which =
    'id' in ref
      ? sql.fragment`id = ${ref.id}`
      : 'uuid' in ref
        ? sql.fragment`uuid = ${ref.uuid}`
        : sql.fragment`lower(email) = lower(${ref.email})`;
  return db.maybeOne(sql.type(personRow)`
    SELECT id, uuid, organization_id, email, first_name, last_name, boundary, company_id, created_at, updated_at
    FROM people WHERE organization_id = ${organizationId} AND ${which} AND erased_at IS NULL`);
}

/** The person of the organization by id or uuid, not erased, under a lock; null: none. */
export async function lockPersonForErasure(
  tx: Tx,
  organizationId: string,
  ref: { id: number } | { uuid: string },
): Promise<PersonRow | null> {
  const which = 'id' in ref ? sql.fragment`id = ${ref.id}` : sql.fragment`uuid = ${ref.uuid}`;
  return tx.maybeOne(sql.type(personRow)`
    SELECT id, uuid, organization_id, email, first_name, last_name, boundary, company_id, created_at, updated_at
    FROM people WHERE organization_id = ${organizationId} AND ${which} AND erased_at IS NULL FOR UPDATE`);
}

/**
 * The person becomes a tombstone: the same row (recordings' and sessions' participants keep
 * pointing to it), its e-mail replaced by `erased+<uuid>@erased.invalid` (a reserved domain:
 * nothing is ever sent there), names and company cleared.
 */
export async function tombstonePerson(tx: Tx, personId: number): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE people SET email = 'erased+' || uuid || '@erased.invalid', first_name = NULL, last_name = NULL, company_id = NULL,
      erased_at = now(), updated_at = now()
    WHERE id = ${personId}`);
}
