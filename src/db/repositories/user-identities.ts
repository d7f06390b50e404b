import { sql, type CommonQueryMethods } from 'slonik';
import { userRow, type UserRow } from './users.js';

/** The user an upstream identity (its provider's issuer and subject) signs in as, noting the sign-in; null: not linked yet. */
export async function signInByIdentity(db: CommonQueryMethods, issuer: string, subject: string): Promise<UserRow | null> {
  return db.maybeOne(sql.type(userRow)`
    WITH touched AS (
      UPDATE user_identities SET last_sign_in_at = now() WHERE issuer = ${issuer} AND subject = ${subject} RETURNING user_id
    )
    SELECT u.* FROM users u JOIN touched t ON t.user_id = u.id`);
}

/** The active users with this e-mail address (any case) in these organizations: at most a few. */
export async function findActiveUsersByEmail(
  db: CommonQueryMethods,
  email: string,
  organizationIds: readonly string[],
): Promise<readonly UserRow[]> {
  return db.any(sql.type(userRow)`
    SELECT * FROM users
    WHERE lower(email) = lower(${email}) AND status = 'active' AND organization_id = ANY(${sql.array(organizationIds, 'uuid')})
    ORDER BY created_at LIMIT 5`);
}

/** Whether the user already has an identity at this provider (under another subject, when the caller is linking one). */
export async function hasIdentityAt(db: CommonQueryMethods, userId: string, issuer: string): Promise<boolean> {
  return db.exists(sql.unsafe`SELECT 1 FROM user_identities WHERE user_id = ${userId} AND issuer = ${issuer}`);
}

/** Links an upstream identity to a user; a concurrent first sign-in of the same identity keeps the first link. */
export async function linkIdentity(db: CommonQueryMethods, issuer: string, subject: string, userId: string): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO user_identities (issuer, subject, user_id) VALUES (${issuer}, ${subject}, ${userId})
    ON CONFLICT (issuer, subject) DO NOTHING`);
}
