import type { Scope } from './scopes.js';

/** Who is calling, after authentication. Every data access is scoped by `organizationId`. */
export type Principal =
  | { kind: 'apiKey'; organizationId: string; apiKeyId: string; scopes: Scope[] }
  | { kind: 'user'; organizationId: string; userId: string; role: 'member' | 'admin'; scopes: Scope[] };

export type PrincipalKind = Principal['kind'];
