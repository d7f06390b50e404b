import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';

export const applicationRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  name: z.string(),
  agent_key: z.string(),
  status: z.enum(['active', 'disabled']),
  content_capture: z.boolean(),
  redacted_field_names: z.array(z.string()),
  redacted_text_patterns: z.array(z.string()),
  retention_days: z.number().nullable(),
  allowed_environments: z.array(z.string()),
  access: z.enum(['workspace', 'users']),
  access_user_ids: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  deleted_at: z.string().nullable(),
  sessions_deleted_at: z.string().nullable(),
});
export type ApplicationRow = z.infer<typeof applicationRow>;

export const credentialRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  application_id: z.string(),
  display_prefix: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type CredentialRow = z.infer<typeof credentialRow>;

/** The settings table of the spec, as stored. */
export interface ApplicationSettings {
  name: string;
  status: 'active' | 'disabled';
  contentCapture: boolean;
  redactedFieldNames: string[];
  redactedTextPatterns: string[];
  retentionDays: number | null;
  allowedEnvironments: string[];
  access: 'workspace' | 'users';
  accessUserIds: string[];
}

const credentialColumns = sql.fragment`id, organization_id, application_id, display_prefix, created_at, last_used_at, revoked_at`;

export async function insertApplication(
  db: CommonQueryMethods,
  input: { organizationId: string; name: string; agentKey: string },
): Promise<ApplicationRow> {
  return db.one(sql.type(applicationRow)`
    INSERT INTO agent_applications (organization_id, name, agent_key)
    VALUES (${input.organizationId}, ${input.name}, ${input.agentKey})
    RETURNING *`);
}

/** A live (not deleted) application of the organization. */
export async function findApplication(db: CommonQueryMethods, organizationId: string, id: string): Promise<ApplicationRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(applicationRow)`
    SELECT * FROM agent_applications WHERE id = ${id} AND organization_id = ${organizationId} AND deleted_at IS NULL`);
}

/** The same, locked for the rest of the transaction: a change reads what it rewrites under the lock, so two changes never lose one another's fields. */
export async function lockApplication(tx: CommonQueryMethods, organizationId: string, id: string): Promise<ApplicationRow | null> {
  if (!isUuid(id)) return null;
  return tx.maybeOne(sql.type(applicationRow)`
    SELECT * FROM agent_applications WHERE id = ${id} AND organization_id = ${organizationId} AND deleted_at IS NULL FOR UPDATE`);
}

/** By id alone, for the operator CLI (which acts across organizations). */
export async function findApplicationById(db: CommonQueryMethods, id: string): Promise<ApplicationRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(applicationRow)`SELECT * FROM agent_applications WHERE id = ${id} AND deleted_at IS NULL`);
}

export async function listApplications(
  db: CommonQueryMethods,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<readonly ApplicationRow[]> {
  return db.any(sql.type(applicationRow)`
    SELECT * FROM agent_applications WHERE organization_id = ${organizationId} AND deleted_at IS NULL
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`);
}

/**
 * Writes every setting. Restricting access restricts the existing conversations too (spec), in
 * the same transaction: restrictSessionsToUsers (agent-sessions.ts, the sessions' writer).
 */
export async function updateApplication(db: CommonQueryMethods, id: string, s: ApplicationSettings): Promise<ApplicationRow> {
  return db.one(sql.type(applicationRow)`
    UPDATE agent_applications SET
      name = ${s.name}, status = ${s.status}, content_capture = ${s.contentCapture},
      redacted_field_names = ${sql.array(s.redactedFieldNames, 'text')},
      redacted_text_patterns = ${sql.array(s.redactedTextPatterns, 'text')},
      retention_days = ${s.retentionDays}, allowed_environments = ${sql.array(s.allowedEnvironments, 'text')},
      access = ${s.access}, access_user_ids = ${sql.array(s.accessUserIds, 'uuid')}, updated_at = now()
    WHERE id = ${id} AND deleted_at IS NULL
    RETURNING *`);
}

/** Deletes the application (its credentials stop at once); `withSessions`: its conversations too (the retention sweep deletes them). */
export async function deleteApplication(
  db: CommonQueryMethods,
  organizationId: string,
  id: string,
  withSessions = false,
): Promise<ApplicationRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(applicationRow)`
    UPDATE agent_applications SET deleted_at = now(), updated_at = now(), sessions_deleted_at = ${withSessions ? sql.fragment`now()` : null}
    WHERE id = ${id} AND organization_id = ${organizationId} AND deleted_at IS NULL
    RETURNING *`);
}

export async function insertCredential(
  db: CommonQueryMethods,
  input: { application: ApplicationRow; displayPrefix: string; secretHash: Buffer },
): Promise<CredentialRow> {
  return db.one(sql.type(credentialRow)`
    INSERT INTO agent_credentials (organization_id, application_id, display_prefix, secret_hash)
    VALUES (${input.application.organization_id}, ${input.application.id}, ${input.displayPrefix}, ${sql.binary(input.secretHash)})
    RETURNING ${credentialColumns}`);
}

export async function listCredentials(db: CommonQueryMethods, applicationId: string): Promise<readonly CredentialRow[]> {
  return db.any(sql.type(credentialRow)`
    SELECT ${credentialColumns} FROM agent_credentials WHERE application_id = ${applicationId} ORDER BY created_at, id`);
}

/** Revokes once (a repeat keeps the first time). `organizationId` null: the operator CLI. */
export async function revokeCredential(
  db: CommonQueryMethods,
  id: string,
  scope: { organizationId: string | null; applicationId?: string },
): Promise<CredentialRow | null> {
  if (!isUuid(id)) return null;
  const org = scope.organizationId ? sql.fragment`AND organization_id = ${scope.organizationId}` : sql.fragment``;
  const app = scope.applicationId ? sql.fragment`AND application_id = ${scope.applicationId}` : sql.fragment``;
  // The application's updated_at moves too: ingests holding a cached lookup see the revocation (authorityStamp).
  return db.maybeOne(sql.type(credentialRow)`
    WITH revoked AS (
      UPDATE agent_credentials SET revoked_at = coalesce(revoked_at, now())
      WHERE id = ${id} ${org} ${app}
      RETURNING ${credentialColumns}
    ), touched AS (
      UPDATE agent_applications SET updated_at = now() WHERE id IN (SELECT application_id FROM revoked)
    )
    SELECT * FROM revoked`);
}

/**
 * What an ingest's authority depends on, as one value: the application (any setting, status or
 * deletion moves `updated_at`, and so does revoking one of its credentials) and the workspace's agent
 * chats. An ingest prepared from a cached lookup compares it inside its own transaction
 * (lockSessions), so a change committed before the ingest started always applies to it.
 */
export const authorityStamp = sql.fragment`concat_ws('|', (extract(epoch FROM a.updated_at) * 1000000)::bigint, o.agent_chats_enabled)`;

export const credentialLookupRow = z.object({
  credential_id: z.string(),
  stamp: z.string(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  application: applicationRow,
  agent_chats_enabled: z.boolean(),
});
export type CredentialLookup = z.infer<typeof credentialLookupRow>;

/** The credential with its application (deleted ones too: the caller answers 404 for those). */
export async function findCredentialByHash(db: CommonQueryMethods, secretHash: Buffer): Promise<CredentialLookup | null> {
  return db.maybeOne(sql.type(credentialLookupRow)`
    SELECT c.id AS credential_id, ${authorityStamp} AS stamp, c.revoked_at, c.last_used_at, to_jsonb(a) AS application, o.agent_chats_enabled
    FROM agent_credentials c
    JOIN agent_applications a ON a.id = c.application_id
    JOIN organizations o ON o.id = c.organization_id
    WHERE c.secret_hash = ${sql.binary(secretHash)}`);
}

export async function touchCredential(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE agent_credentials SET last_used_at = now()
    WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`);
}
