import type { CommonQueryMethods } from 'slonik';
import { findApiKeyByHash, insertApiKey, touchApiKey, type ApiKeyRow } from '../db/repositories/api-keys.js';
import { findTokenUser, findUser, type UserRow } from '../db/repositories/users.js';
import type { OAuthAccess, OAuthAudience, OAuthServer } from '../oauth/server.js';
import type { Principal } from './principal.js';
import { DEFAULT_API_KEY_SCOPES, isScope, scopesForRole, type Scope } from './scopes.js';
import { displayPrefix, generateSecret, hashSecret } from './secrets.js';
import type { TokenService } from './tokens.js';

export const API_KEY_PREFIX = 'ik';

/** `unknown_user`: a valid token whose user no longer exists (401 unless a route says otherwise). */
export type AuthFailure = 'invalid' | 'revoked' | 'expired' | 'unknown_user';

export async function createApiKey(
  db: CommonQueryMethods,
  input: { organizationId: string; scopes?: Scope[]; name?: string },
): Promise<{ row: ApiKeyRow; apiKey: string }> {
  const apiKey = generateSecret(API_KEY_PREFIX);
  const row = await insertApiKey(db, {
    organizationId: input.organizationId,
    name: input.name ?? null,
    displayPrefix: displayPrefix(apiKey),
    keyHash: hashSecret(apiKey),
    scopes: [...new Set(input.scopes ?? DEFAULT_API_KEY_SCOPES)],
  });
  return { row, apiKey };
}

export async function authenticateApiKey(db: CommonQueryMethods, apiKey: string): Promise<Principal | AuthFailure> {
  if (apiKey.length > 200) return 'invalid';
  const row = await findApiKeyByHash(db, hashSecret(apiKey));
  if (!row) return 'invalid';
  if (row.revoked_at) return 'revoked';
  // last_used_at is kept to the minute: most requests need no write at all.
  if (!row.last_used_at || Date.parse(row.last_used_at) < Date.now() - 60_000) await touchApiKey(db, row.id);
  return { kind: 'apiKey', organizationId: row.organization_id, apiKeyId: row.id, scopes: row.scopes.filter(isScope) };
}

/**
 * A valid signature is not enough: the user must still exist, be active and be in the token's
 * organization, the token must not be revoked, nor issued under an earlier token version.
 */
export async function authenticateToken(db: CommonQueryMethods, tokens: TokenService, token: string): Promise<Principal | AuthFailure> {
  const verified = await tokens.verify(token);
  if (verified === 'expired' || verified === 'invalid') return verified;
  const user = await findTokenUser(db, verified.userId, verified.tokenId);
  if (!user) return 'unknown_user';
  if (user.organization_id !== verified.organizationId) return 'invalid';
  if (user.status !== 'active' || user.token_revoked || verified.version !== user.token_version) return 'revoked';
  return userPrincipal(user);
}

/** A user acting with the scopes of their role. */
function userPrincipal(user: Pick<UserRow, 'id' | 'organization_id' | 'role'>): Principal {
  return { kind: 'user', organizationId: user.organization_id, userId: user.id, role: user.role, scopes: scopesForRole(user.role) };
}

/**
 * An OAuth access token of the authorization server (src/oauth): its user, who must still be
 * active, acting with the user's role; limited on /mcp to the scopes the user approved. The
 * console's tokens (audience 'rest') act in the REST API with the role's scopes.
 */
export async function authenticateOAuthToken(
  db: CommonQueryMethods,
  oauth: OAuthServer,
  token: string,
  audience: OAuthAudience = 'mcp',
): Promise<{ principal: Principal; access: OAuthAccess } | AuthFailure> {
  const access = await oauth.verify(token, audience);
  if (access === 'invalid') return 'invalid';
  const user = await findUser(db, access.userId);
  if (!user) return 'unknown_user';
  if (user.status !== 'active') return 'revoked';
  return { principal: userPrincipal(user), access };
}
