import type { CommonQueryMethods } from 'slonik';
import { presentApiKey, type ApiKey, type ApiKeyWithSecret } from '../contracts/api-keys.js';
import { findOrganizationApiKey, listApiKeys, revokeApiKey } from '../db/repositories/api-keys.js';
import { AppError, NotFoundError } from '../errors.js';
import { createApiKey } from './credentials.js';
import type { Principal } from './principal.js';
import { DEFAULT_API_KEY_SCOPES, type Scope } from './scopes.js';

/**
 * Organization API keys, self-service (issue 32, point 4): admins create, list and revoke them over
 * REST; operators do the same with `intake api-key …`. A key is shown once (only its hash is kept).
 */

/**
 * The new key's scopes: those asked for, each held by the caller (a key never gets more than the
 * credential that makes it: an admin key without `webhooks:manage` cannot make one with it), or by
 * default every data scope the caller holds. An operator (the CLI: `caller` null) may give any.
 */
export function newKeyScopes(caller: Pick<Principal, 'scopes'> | null, asked: readonly Scope[] | undefined): Scope[] {
  if (asked === undefined) {
    const scopes = caller ? DEFAULT_API_KEY_SCOPES.filter((s) => caller.scopes.includes(s)) : DEFAULT_API_KEY_SCOPES;
    if (scopes.length === 0) throw new AppError('scope_not_held', { details: { missingScopes: DEFAULT_API_KEY_SCOPES } });
    return scopes;
  }
  const missing = caller ? asked.filter((s) => !caller.scopes.includes(s)) : [];
  if (missing.length) throw new AppError('scope_not_held', { details: { missingScopes: missing } });
  return [...new Set(asked)];
}

export async function issueApiKey(
  db: CommonQueryMethods,
  caller: Pick<Principal, 'scopes'> | null,
  input: { organizationId: string; name?: string; scopes?: readonly Scope[] },
): Promise<ApiKeyWithSecret> {
  const scopes = newKeyScopes(caller, input.scopes);
  const { row, apiKey } = await createApiKey(db, { organizationId: input.organizationId, name: input.name, scopes });
  return { ...presentApiKey(row), apiKey };
}

export async function organizationApiKeys(
  db: CommonQueryMethods,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<ApiKey[]> {
  return (await listApiKeys(db, organizationId, page)).map(presentApiKey);
}

export async function organizationApiKey(db: CommonQueryMethods, organizationId: string, id: string): Promise<ApiKey> {
  const row = await findOrganizationApiKey(db, organizationId, id);
  if (!row) throw new NotFoundError('API key');
  return presentApiKey(row);
}

/** Stops the key at once; revoking a revoked key keeps its first `revokedAt` (idempotent). */
export async function revokeOrganizationKey(db: CommonQueryMethods, organizationId: string, id: string): Promise<ApiKey> {
  const row = await revokeApiKey(db, id, organizationId);
  if (!row) throw new NotFoundError('API key');
  return presentApiKey(row);
}
