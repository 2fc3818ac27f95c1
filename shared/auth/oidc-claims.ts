/**
 * What a verified token from an identity provider says about its caller, read through the
 * issuer's claim mapping. Pure: no I/O, no library.
 *
 * Issuers come from AUTH_OIDC_ISSUERS (shared/auth/oidc-config.ts).
 *
 * - The audience: `aud` names one of the issuer's accepted audiences; a token without `aud`
 *   (Amazon Cognito's access tokens) is judged by its `client_id` instead.
 * - The role: `admin` only when the role claim is, or lists, the issuer's admin role.
 * - The scopes: the scope claim (a space-separated string or an array) holds the provider's own
 *   scopes beside this API's (`openid`, `profile`, ...): those that are not scopes of this API's
 *   grammar are ignored. When scopes of this API remain, the caller holds those the role allows
 *   (a user's `*` is dropped); when none remain, or the claim is absent or not mapped, the role's.
 */
import type { Role } from '../caller.js';
import { ACTIONS, scopesForRole } from '../scopes.js';
import { effectiveScopes } from './api-keys.js';
import type { OidcIssuer } from './oidc-config.js';

/** Who a token names, as this API reads it. */
export interface TokenIdentity {
  issuer: OidcIssuer;
  subject: string;
  email?: string;
  name?: string;
  /** The tenant claim's value, when the token has one. */
  tenant?: string;
  role: Role;
  scopes: string[];
}

type Claims = Record<string, unknown>;

const ACTION_WORDS = new Set<string>(ACTIONS);
const RESOURCE_PATTERN = /^[a-z][a-z0-9-]*$/;

/** Whether `value` has the shape of one of this API's scopes (`tasks:read`, `orders:*`, `read`, `*`). */
export function isApiScope(value: string): boolean {
  if (value === '*' || ACTION_WORDS.has(value)) return true;
  const [resource, action, extra] = value.split(':');
  return extra === undefined && action !== undefined && RESOURCE_PATTERN.test(resource) && (action === '*' || ACTION_WORDS.has(action));
}

export function audienceMatches(claims: Claims, accepted: readonly string[]): boolean {
  const { aud } = claims;
  if (aud === undefined) return typeof claims.client_id === 'string' && accepted.includes(claims.client_id);
  const named = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  return named.some((a) => typeof a === 'string' && accepted.includes(a));
}

function words(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** A claim's string value, trimmed; anything else (absent, a number, an object) is undefined. */
function stringClaim(claims: Claims, name: string): string | undefined {
  const value = claims[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export function roleOf(claims: Claims, issuer: OidcIssuer): Role {
  return words(claims[issuer.claims.role]).includes(issuer.adminRole) ? 'admin' : 'user';
}

export function scopesOf(claims: Claims, issuer: OidcIssuer, role: Role): string[] {
  const requested = issuer.claims.scopes === null ? [] : words(claims[issuer.claims.scopes]).filter(isApiScope);
  if (requested.length === 0) return scopesForRole(role);
  return [...new Set(effectiveScopes(requested, role))];
}

/** The identity of a verified token's claims (its signature, issuer, audience and times already checked). */
export function identityOf(claims: Claims, issuer: OidcIssuer): TokenIdentity {
  const role = roleOf(claims, issuer);
  const email = stringClaim(claims, issuer.claims.email)?.toLowerCase();
  return {
    issuer,
    subject: String(claims.sub),
    ...(email ? { email } : {}),
    ...(stringClaim(claims, issuer.claims.name) ? { name: stringClaim(claims, issuer.claims.name) } : {}),
    ...(stringClaim(claims, issuer.claims.tenant) ? { tenant: stringClaim(claims, issuer.claims.tenant) } : {}),
    role,
    scopes: scopesOf(claims, issuer, role),
  };
}
