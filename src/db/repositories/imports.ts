import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Tx } from '../pool.js';

/*
 * The writes of `intake org import` (issue 32, point 3) that no other module owns: feedback,
 * people, applications, conversation participants and signals, a batch per statement (JSON record
 * sets). Sessions and their events are written by agent-sessions.ts, recordings by recordings.ts.
 * Every function runs in the import's one transaction.
 */

/** Locks the organization for the import; null when it does not exist, else what it already holds of what an import writes. */
export async function lockOrganizationForImport(tx: Tx, organizationId: string): Promise<string[] | null> {
  const found = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM organizations WHERE id = ${organizationId} FOR UPDATE`);
  if (!found) return null;
  const held = (table: string, what: string, extra = sql.fragment`TRUE`) =>
    sql.fragment`CASE WHEN EXISTS (SELECT 1 FROM ${sql.identifier([table])} WHERE organization_id = ${organizationId} AND ${extra}) THEN ${what} END`;
  return tx.oneFirst(sql.type(z.object({ holds: z.array(z.string()) }))`
    SELECT array_remove(ARRAY[
      ${held('feedback_sources', 'feedback sources')}, ${held('people', 'people')}, ${held('recordings', 'recordings')},
      ${held('folders', 'folders')}, ${held('metadata_fields', 'metadata fields')},
      ${held('agent_applications', 'agent applications', sql.fragment`deleted_at IS NULL`)}, ${held('agent_sessions', 'agent sessions')}
    ]::text[], NULL) AS holds`);
}

/** The organization's users by lowercased e-mail (an export names users by e-mail). */
export async function usersByEmail(db: CommonQueryMethods, organizationId: string): Promise<Map<string, string>> {
  const rows = await db.any(sql.type(z.object({ email: z.string(), id: z.string() }))`
    SELECT lower(email) AS email, id FROM users WHERE organization_id = ${organizationId}`);
  return new Map(rows.map((r) => [r.email, r.id]));
}

export interface ImportedSource {
  old_id: number;
  name: string;
  type: string;
  created_at: string;
}

/** Inserts sources with new ids; the new id of each old one. */
export async function importSources(tx: Tx, organizationId: string, sources: readonly ImportedSource[]): Promise<Map<number, number>> {
  const rows = await tx.any(sql.type(z.object({ old_id: z.number(), new_id: z.number() }))`
    WITH x AS MATERIALIZED (
      SELECT nextval(pg_get_serial_sequence('feedback_sources', 'id')) AS new_id, r.*
      FROM jsonb_to_recordset(${sql.jsonb(sources as never)}) AS r(old_id bigint, name text, type text, created_at timestamptz)
    ), inserted AS (
      INSERT INTO feedback_sources (id, organization_id, name, type, created_at)
      SELECT new_id, ${organizationId}, name, type, created_at FROM x RETURNING id
    )
    SELECT x.old_id, x.new_id FROM x JOIN inserted i ON i.id = x.new_id`);
  return new Map(rows.map((r) => [r.old_id, r.new_id]));
}

export interface ImportedPerson {
  uuid: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  boundary: string;
  company_name: string | null;
  company_domain: string | null;
  erased: boolean;
  created_at: string;
}

/** Inserts people (their companies found or created by domain); the row id of each new uuid. */
export async function importPeople(tx: Tx, organizationId: string, people: readonly ImportedPerson[]): Promise<Map<string, number>> {
  const records = sql.jsonb(people);
  await tx.query(sql.unsafe`
    INSERT INTO companies (organization_id, name, domain)
    SELECT DISTINCT ON (lower(x.company_domain)) ${organizationId}, x.company_name, x.company_domain
    FROM jsonb_to_recordset(${records}) AS x(company_name text, company_domain text)
    WHERE x.company_domain IS NOT NULL
    ON CONFLICT (organization_id, lower(domain)) DO NOTHING`);
  const rows = await tx.any(sql.type(z.object({ uuid: z.string(), id: z.number() }))`
    INSERT INTO people (uuid, organization_id, email, first_name, last_name, boundary, company_id, created_at, updated_at, erased_at)
    SELECT x.uuid, ${organizationId}, x.email, x.first_name, x.last_name, x.boundary,
      (SELECT c.id FROM companies c WHERE c.organization_id = ${organizationId} AND lower(c.domain) = lower(x.company_domain)),
      x.created_at, x.created_at, CASE WHEN x.erased THEN now() END
    FROM jsonb_to_recordset(${records})
      AS x(uuid uuid, email text, first_name text, last_name text, boundary text, company_domain text, erased boolean, created_at timestamptz)
    RETURNING uuid, id`);
  return new Map(rows.map((r) => [r.uuid, r.id]));
}

export interface ImportedFeedbackRecord {
  source_id: number;
  person_id: number | null;
  external_id: string;
  display_ts: string;
  fields: unknown[];
  created_at: string;
}

export async function importFeedbackRecords(tx: Tx, organizationId: string, records: readonly ImportedFeedbackRecord[]): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO feedback_records (organization_id, feedback_source_id, person_id, external_id, display_ts, fields, created_at)
    SELECT ${organizationId}, x.source_id, x.person_id, x.external_id, x.display_ts, x.fields, x.created_at
    FROM jsonb_to_recordset(${sql.jsonb(records as never)})
      AS x(source_id bigint, person_id bigint, external_id text, display_ts timestamptz, fields jsonb, created_at timestamptz)`);
}

export interface ImportedApplication {
  id: string;
  name: string;
  agent_key: string;
  status: string;
  content_capture: boolean;
  redacted_field_names: string[];
  redacted_text_patterns: string[];
  retention_days: number | null;
  allowed_environments: string[];
  access: string;
  access_user_ids: string[];
  deleted: boolean;
  created_at: string;
}

/** Inserts applications with their settings (no secrets: an admin issues new ones); a deleted one stays deleted. */
export async function importApplications(tx: Tx, organizationId: string, apps: readonly ImportedApplication[]): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO agent_applications (id, organization_id, name, agent_key, status, content_capture, redacted_field_names,
      redacted_text_patterns, retention_days, allowed_environments, access, access_user_ids, created_at, updated_at, deleted_at)
    SELECT x.id, ${organizationId}, x.name, x.agent_key, x.status, x.content_capture, x.redacted_field_names, x.redacted_text_patterns,
      x.retention_days, x.allowed_environments, x.access, x.access_user_ids, x.created_at, x.created_at, CASE WHEN x.deleted THEN now() END
    FROM jsonb_to_recordset(${sql.jsonb(apps as never)}) AS x(id uuid, name text, agent_key text, status text, content_capture boolean,
      redacted_field_names text[], redacted_text_patterns text[], retention_days integer, allowed_environments text[], access text,
      access_user_ids uuid[], deleted boolean, created_at timestamptz)`);
}

export interface ImportedParticipant {
  session_id: string;
  participant_key: string;
  external_id: string | null;
  display_name: string | null;
  username: string | null;
  email: string | null;
  person_id: number | null;
  company_external_id: string | null;
  boundary: string | null;
  owner_user_id: string | null;
  properties: unknown;
}

export async function importAgentParticipants(tx: Tx, participants: readonly ImportedParticipant[]): Promise<void> {
  if (!participants.length) return;
  await tx.query(sql.unsafe`
    INSERT INTO agent_participants (session_id, organization_id, participant_key, external_id, display_name, username, email, person_id,
      company_external_id, boundary, owner_user_id, properties)
    SELECT x.session_id, s.organization_id, x.participant_key, x.external_id, x.display_name, x.username, x.email, x.person_id,
      x.company_external_id, x.boundary, x.owner_user_id, x.properties
    FROM jsonb_to_recordset(${sql.jsonb(participants as never)}) AS x(session_id uuid, participant_key text, external_id text,
      display_name text, username text, email text, person_id bigint, company_external_id text, boundary text, owner_user_id uuid,
      properties jsonb)
    JOIN agent_sessions s ON s.id = x.session_id`);
}

export interface ImportedSignal {
  id: string;
  session_id: string;
  event_external_id: string;
  event_revision: number | null;
  producer: string | null;
  source: string;
  kind: string | null;
  rating: string | null;
  labels: string[];
  comment: string | null;
  summary: string | null;
  created_at: string;
}

/** Inserts signals, each linked to its event of the same session by the event's external id. */
export async function importSignals(tx: Tx, organizationId: string, signals: readonly ImportedSignal[]): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO agent_signals (id, organization_id, session_id, event_id, event_external_id, event_revision, producer, source, kind,
      rating, labels, comment, summary, created_at)
    SELECT x.id, ${organizationId}, x.session_id,
      (SELECT e.id FROM agent_events e WHERE e.session_id = x.session_id AND e.external_event_id = x.event_external_id),
      x.event_external_id, x.event_revision, x.producer, x.source, x.kind, x.rating, x.labels, x.comment, x.summary, x.created_at
    FROM jsonb_to_recordset(${sql.jsonb(signals as never)}) AS x(id uuid, session_id uuid, event_external_id text, event_revision integer,
      producer text, source text, kind text, rating text, labels text[], comment text, summary text, created_at timestamptz)`);
}
