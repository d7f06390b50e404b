import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';

export const apiKeyRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  name: z.string().nullable(),
  display_prefix: z.string(),
  scopes: z.array(z.string()),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type ApiKeyRow = z.infer<typeof apiKeyRow>;

const columns = sql.fragment`id, organization_id, name, display_prefix, scopes, created_at, last_used_at, revoked_at`;

export async function insertApiKey(
  db: CommonQueryMethods,
  input: { organizationId: string; name: string | null; displayPrefix: string; keyHash: Buffer; scopes: string[] },
): Promise<ApiKeyRow> {
  return db.one(sql.type(apiKeyRow)`
    INSERT INTO api_keys (organization_id, name, display_prefix, key_hash, scopes)
    VALUES (${input.organizationId}, ${input.name}, ${input.displayPrefix}, ${sql.binary(input.keyHash)}, ${sql.array(input.scopes, 'text')})
    RETURNING ${columns}`);
}

export async function findApiKeyByHash(db: CommonQueryMethods, keyHash: Buffer): Promise<ApiKeyRow | null> {
  return db.maybeOne(sql.type(apiKeyRow)`SELECT ${columns} FROM api_keys WHERE key_hash = ${sql.binary(keyHash)}`);
}

/**
 * Revokes once: a repeated revoke keeps the first `revoked_at`. Null when the key is unknown, or
 * not the organization's when `organizationId` is given (the REST route; the operator's CLI gives none).
 */
export async function revokeApiKey(db: CommonQueryMethods, id: string, organizationId?: string): Promise<ApiKeyRow | null> {
  if (!isUuid(id)) return null;
  const org = organizationId === undefined ? sql.fragment`` : sql.fragment`AND organization_id = ${organizationId}`;
  return db.maybeOne(sql.type(apiKeyRow)`
    UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id} ${org}
    RETURNING ${columns}`);
}

/** Records use at most once a minute per key, so that authentication stays a read. */
export async function touchApiKey(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE api_keys SET last_used_at = now()
    WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`);
}

/** The organization's keys, revoked ones included, oldest first. */
export async function listApiKeys(
  db: CommonQueryMethods,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<readonly ApiKeyRow[]> {
  return db.any(sql.type(apiKeyRow)`
    SELECT ${columns} FROM api_keys WHERE organization_id = ${organizationId}
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`);
}

/** A key of the organization, or null (unknown, or another organization's). */
export async function findOrganizationApiKey(db: CommonQueryMethods, organizationId: string, id: string): Promise<ApiKeyRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(apiKeyRow)`SELECT ${columns} FROM api_keys WHERE id = ${id} AND organization_id = ${organizationId}`);
}
