/** Scopes of organization API keys. */
export const SCOPES = [
  'feedback:write',
  'feedback:read',
  'recordings:read',
  'recordings:write',
  'agents:read',
  // Deleting agent conversations (issue 32). Ingest needs no scope: it takes an application's ingest secret.
  'agents:write',
  'signals:read',
  // Webhook endpoints send an organization's data to a URL of the holder's choosing: never a default.
  'webhooks:manage',
  'admin',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes a key or member gets only when asked for or by role: `admin`, and `webhooks:manage`. */
const PRIVILEGED: readonly Scope[] = ['admin', 'webhooks:manage'];

/** A new key's scopes when none are asked for: every data scope, never a privileged one (least privilege). */
export const DEFAULT_API_KEY_SCOPES: Scope[] = SCOPES.filter((s) => !PRIVILEGED.includes(s));

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** What a user may do: members every data scope, admins every scope. */
export function scopesForRole(role: 'member' | 'admin'): Scope[] {
  return role === 'admin' ? [...SCOPES] : SCOPES.filter((s) => !PRIVILEGED.includes(s));
}
