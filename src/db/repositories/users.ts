import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';

export const userRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  role: z.enum(['member', 'admin']),
  status: z.enum(['active', 'disabled']),
  token_version: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type UserRow = z.infer<typeof userRow>;

export async function createUser(
  db: CommonQueryMethods,
  input: { organizationId: string; email: string; firstName?: string; lastName?: string; role: 'member' | 'admin' },
): Promise<UserRow> {
  return db.one(sql.type(userRow)`
    INSERT INTO users (organization_id, email, first_name, last_name, role)
    VALUES (${input.organizationId}, ${input.email}, ${input.firstName ?? null}, ${input.lastName ?? null}, ${input.role})
    RETURNING *`);
}

export async function findUser(db: CommonQueryMethods, id: string): Promise<UserRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(userRow)`SELECT * FROM users WHERE id = ${id}`);
}

/** The user a token names, and whether that token (by its jti) has been revoked: one statement. */
export async function findTokenUser(
  db: CommonQueryMethods,
  id: string,
  tokenId: string | null,
): Promise<(UserRow & { token_revoked: boolean }) | null> {
  if (!isUuid(id)) return null;
  const jti = tokenId !== null && isUuid(tokenId) ? tokenId : null;
  return db.maybeOne(sql.type(userRow.extend({ token_revoked: z.boolean() }))`
    SELECT u.*, EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.jti = ${jti}) AS token_revoked
    FROM users u WHERE u.id = ${id}`);
}

/** Revokes one token until it expires (and forgets revocations of tokens that have expired). */
/** `userId` null: revoked by its id alone (the user is not known without the token). */
export async function revokeToken(
  db: CommonQueryMethods,
  input: { tokenId: string; userId: string | null; expiresAt: Date },
): Promise<void> {
  await db.query(sql.unsafe`
    WITH gone AS (DELETE FROM revoked_tokens WHERE expires_at < now() - interval '1 minute')
    INSERT INTO revoked_tokens (jti, user_id, expires_at)
    VALUES (${input.tokenId}, ${input.userId}, ${input.expiresAt.toISOString()}::timestamptz)
    ON CONFLICT (jti) DO NOTHING`);
}

/** Every token the user holds stops working: tokens carry the version they were issued under. */
export async function revokeUserTokens(db: CommonQueryMethods, userId: string): Promise<UserRow | null> {
  if (!isUuid(userId)) return null;
  return db.maybeOne(sql.type(userRow)`
    UPDATE users SET token_version = token_version + 1, updated_at = now() WHERE id = ${userId} RETURNING *`);
}

/** Sets (or replaces) the user's sign-in password hash; null when there is no such user. */
export async function setUserPassword(db: CommonQueryMethods, userId: string, passwordHash: string): Promise<UserRow | null> {
  if (!isUuid(userId)) return null;
  return db.maybeOne(sql.type(userRow)`
    UPDATE users SET password_hash = ${passwordHash}, password_changed_at = now(), updated_at = now()
    WHERE id = ${userId} RETURNING *`);
}

/**
 * The account an e-mail address signs in to, as a key: `lower()` of the address, the very
 * normalization findSignInUser compares with, so that every spelling that finds an account has
 * that account's key (JavaScript's toLowerCase differs: it maps İ to i and a combining dot, which
 * PostgreSQL's lower() maps to i).
 */
export async function signInAccountKey(db: CommonQueryMethods, email: string): Promise<string> {
  return db.oneFirst(sql.type(z.object({ key: z.string() }))`SELECT lower(${email}) AS key`);
}

/** The user an e-mail address signs in as (any case), with the stored password hash; null when none has a password. */
export async function findSignInUser(db: CommonQueryMethods, email: string): Promise<(UserRow & { password_hash: string }) | null> {
  return db.maybeOne(sql.type(userRow.extend({ password_hash: z.string() }))`
    SELECT * FROM users WHERE lower(email) = lower(${email}) AND password_hash IS NOT NULL`);
}

/** The user with this e-mail address in the organization (any case). */
export async function findUserByEmail(db: CommonQueryMethods, organizationId: string, email: string): Promise<UserRow | null> {
  return db.maybeOne(sql.type(userRow)`
    SELECT * FROM users WHERE organization_id = ${organizationId} AND lower(email) = lower(${email})`);
}

/** Users, oldest first: of one organization, with one e-mail address (any case, every organization), or both. */
export async function listUsers(
  db: CommonQueryMethods,
  filter: { organizationId?: string; email?: string },
  page: { offset: number; limit: number },
): Promise<readonly UserRow[]> {
  const conditions = [
    ...(filter.organizationId !== undefined ? [sql.fragment`organization_id = ${filter.organizationId}`] : []),
    ...(filter.email !== undefined ? [sql.fragment`lower(email) = lower(${filter.email})`] : []),
  ];
  const where = conditions.length ? sql.fragment`WHERE ${sql.join(conditions, sql.fragment` AND `)}` : sql.fragment``;
  return db.any(sql.type(userRow)`
    SELECT * FROM users ${where} ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`);
}
