import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export interface ParticipantRecord {
  participant_key: string;
  external_id: string | null;
  display_name: string | null;
  username: string | null;
  email: string | null;
  person_uuid: string | null;
  company_external_id: string | null;
  boundary: string | null;
  owner_user_id: string | null;
  properties: unknown;
}

/** People of the organization by public uuid: uuid → internal id. */
export async function peopleByUuid(tx: CommonQueryMethods, organizationId: string, uuids: readonly string[]): Promise<Map<string, number>> {
  if (uuids.length === 0) return new Map();
  const rows = await tx.any(sql.type(z.object({ id: z.number(), uuid: z.string() }))`
    SELECT id, uuid FROM people WHERE organization_id = ${organizationId} AND uuid = ANY(${sql.array([...uuids], 'uuid')})`);
  return new Map(rows.map((r) => [r.uuid, r.id]));
}

/** People of the organization by case-insensitive e-mail (unique per organization): lower(email) → id. */
export async function peopleByEmail(
  tx: CommonQueryMethods,
  organizationId: string,
  emails: readonly string[],
): Promise<Map<string, number>> {
  if (emails.length === 0) return new Map();
  const rows = await tx.any(sql.type(z.object({ id: z.number(), email: z.string() }))`
    SELECT id, lower(email) AS email FROM people
    WHERE organization_id = ${organizationId} AND lower(email) = ANY(${sql.array(
      emails.map((e) => e.toLowerCase()),
      'text',
    )})`);
  return new Map(rows.map((r) => [r.email, r.id]));
}

export async function activeUserIds(tx: CommonQueryMethods, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM users WHERE organization_id = ${organizationId} AND status = 'active' AND id = ANY(${sql.array([...ids], 'uuid')})`);
  return new Set(found);
}

/**
 * Creates or refreshes the session's participants in one statement. A field the request leaves out
 * keeps its stored value; the person link follows the latest resolution when there is one.
 */
export async function upsertParticipants(
  tx: CommonQueryMethods,
  session: { id: string; organization_id: string },
  records: readonly (ParticipantRecord & { person_id: number | null })[],
): Promise<void> {
  if (records.length === 0) return;
  await tx.query(sql.unsafe`
    INSERT INTO agent_participants AS p (session_id, organization_id, participant_key, external_id, display_name, username, email, person_id,
      company_external_id, boundary, owner_user_id, properties)
    SELECT ${session.id}, ${session.organization_id}, x.participant_key, x.external_id, x.display_name, x.username, x.email, x.person_id,
      x.company_external_id, x.boundary, x.owner_user_id, x.properties
    FROM jsonb_to_recordset(${sql.jsonb(records as never)}) AS x(participant_key text, external_id text, display_name text, username text,
      email text, person_id bigint, company_external_id text, boundary text, owner_user_id uuid, properties jsonb)
    ON CONFLICT (session_id, participant_key) DO UPDATE SET
      display_name = coalesce(excluded.display_name, p.display_name),
      username = coalesce(excluded.username, p.username),
      email = coalesce(excluded.email, p.email),
      person_id = coalesce(excluded.person_id, p.person_id),
      company_external_id = coalesce(excluded.company_external_id, p.company_external_id),
      boundary = coalesce(excluded.boundary, p.boundary),
      owner_user_id = coalesce(excluded.owner_user_id, p.owner_user_id),
      properties = coalesce(excluded.properties, p.properties),
      updated_at = now()`);
}
