/**
 * Scope semantics of SPEC.md: `entity:action` with action read, write or delete; `entity:*`
 * covers every action on that entity; `*` covers everything; the bare words read, write and
 * delete (the /keys family) mean that action on every entity and system resource.
 */
export const ACTIONS = ['read', 'write', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];

export function hasScope(granted: readonly string[], required: string): boolean {
  if (granted.includes('*') || granted.includes(required)) return true;
  const [resource, action] = required.split(':');
  return granted.includes(`${resource}:*`) || (action !== undefined && granted.includes(action));
}

/** The scopes a session gets from its user's role (CONTRACT.md: admin `*`, user read/write/delete). */
export function scopesForRole(role: 'admin' | 'user'): string[] {
  return role === 'admin' ? ['*'] : [...ACTIONS];
}
