import type { Scope } from './scopes.js';

/** Who is calling, after authentication. Every data access is scoped by `organizationId`. */
export type Principal =
  | { kind: 'apiKey'; organizationId: string; apiKeyId: string; scopes: Scope[] }
  | { kind: 'user'; organizationId: string; userId: string; role: 'member' | 'admin'; scopes: Scope[] };

export type PrincipalKind = Principal['kind'];

/** The credential as records name it (an upload's creator, an idempotency key's owner, an erasure's requester): `apiKey:<id>` or `user:<id>`. */
export function credentialOf(principal: Principal): string {
  return principal.kind === 'apiKey' ? `apiKey:${principal.apiKeyId}` : `user:${principal.userId}`;
}
