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
  /** The request's id (X-Request-ID), kept in the revisions of the writes it makes. */
  requestId?: string;
  /** The bulk call this write belongs to (bulk update, bulk delete, import, batch): kept in revisions. */
  operationId?: string;
  /**
   * The record writes of the bulk call (its operation: shared/entities/operation.ts), kept for its
   * undo: each write appends what it committed (one array for every sub-request of a batch).
   */
  journal?: JournalEntry[];
  /** Set when this request slid the session's expiry (epoch seconds): the cookie is renewed too. */
  sessionRenewedUntil?: number;
}

/** A record write of a bulk call: the revision it wrote. */
export interface JournalEntry {
  entity: string;
  id: string;
  revision: number;
}

/** Where a call came from, as the API key audit log records it. */
export interface CallOrigin {
  ip: string;
  userAgent: string;
}
