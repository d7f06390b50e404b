/** Scopes of organization API keys (architecture: all by default). */
export const SCOPES = ['feedback:write', 'recordings:read', 'recordings:write', 'agents:read', 'signals:read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** What a user may do: members every data scope, admins also `admin`. */
export function scopesForRole(role: 'member' | 'admin'): Scope[] {
  return role === 'admin' ? [...SCOPES] : SCOPES.filter((s) => s !== 'admin');
}
