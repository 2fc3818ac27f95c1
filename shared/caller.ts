/**
 * Who is calling: the user, their tenant and role, the scopes they hold. The services take this
 * (never an HTTP request); the authenticate middleware (shared/http/authenticate.ts) builds it
 * from a session cookie, an API key or an identity provider's token (`oidc`), the operator CLI
 * and the jobs build it themselves.
 */
export type Role = 'admin' | 'user';

export interface AuthUser {
  id: string;
  email: string;
  name?: string;
  role: Role;
}

/** The authentication result of SPEC.md (type, user, scopes), plus the tenant. */
export interface AuthContext {
  type: 'api_key' | 'session' | 'oidc';
  user: AuthUser;
  tenantId: string;
  scopes: string[];
  /** The key's id, for api_key. */
  keyId?: string;
  /** The session's token hash, for session. */
  sessionId?: string;
  /** The identity provider's issuer, for oidc. */
  issuer?: string;
  /** Set when this request slid the session's expiry (epoch seconds): the cookie is renewed too. */
  sessionRenewedUntil?: number;
}

/** Where a call came from, as the API key audit log records it. */
export interface CallOrigin {
  ip: string;
  userAgent: string;
}
