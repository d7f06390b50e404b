/** Scopes of organization API keys. */
export const SCOPES = [
  'feedback:write',
  'feedback:read',
  'recordings:read',
  'recordings:write',
  'agents:read',
  'signals:read',
  'admin',
] as const;
export type Scope = (typeof SCOPES)[number];

/** A new key's scopes when none are asked for: every data scope, never `admin` (least privilege). */
export const DEFAULT_API_KEY_SCOPES: Scope[] = SCOPES.filter((s) => s !== 'admin');

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** What a user may do: members every data scope, admins also `admin`. */
export function scopesForRole(role: 'member' | 'admin'): Scope[] {
  return role === 'admin' ? [...SCOPES] : SCOPES.filter((s) => s !== 'admin');
}
