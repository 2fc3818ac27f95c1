/**
 * AUTH_OIDC_ISSUERS (docs/authentication.md, "Identity providers"): the trusted issuers, checked
 * field by field with the contract's defaults filled in. Here, not in shared/config.ts, so that
 * a function that never sees a token does not load it at cold start; shared/config.ts keeps the
 * parsed JSON. A mistake throws with a message naming the field: `npm start` checks at start,
 * `cdk synth` the context it is given, a function at its first token or sign-in.
 */
import { createHash } from 'node:crypto';
import { config, type Config } from '../config.js';

/** One trusted issuer of AUTH_OIDC_ISSUERS, defaults filled in. */
export interface OidcIssuer {
  /** A short id derived from `issuer`: the console's sign-in path and the identity items' keys. */
  id: string;
  /** The `iss` its tokens carry, exactly. */
  issuer: string;
  /** The `aud` values accepted (a token names one of them). */
  audience: string[];
  /** Else from `{issuer}/.well-known/openid-configuration`. */
  jwksUri?: string;
  /** The claim names read from a token; `scopes: null` ignores any scope claim (the role's scopes apply). */
  claims: { tenant: string; role: string; email: string; name: string; scopes: string | null };
  /** The role claim's value (or one of its values) that makes an admin. */
  adminRole: string;
  /** The tenant of tokens without the tenant claim; without it such tokens are refused. */
  defaultTenant?: string;
  /** A tenant claim naming an unknown tenant creates it (else the token is refused). */
  createTenants: boolean;
  /** Console sign-in (authorization code + PKCE) with this client; absent: API tokens only. */
  clientId?: string;
  clientSecret?: string;
  /** Shown as "Sign in with {name}". */
  name: string;
}

const ISSUER_FIELDS = new Set(['issuer', 'audience', 'jwksUri', 'claims', 'adminRole', 'defaultTenant', 'createTenants', 'clientId', 'clientSecret', 'name']);
const CLAIM_FIELDS = ['tenant', 'role', 'email', 'name', 'scopes'] as const;

/** An https URL, or http on a loopback address (a development provider). */
function issuerUrl(value: unknown, where: string): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new Error(`${where} must be a URL, got ${JSON.stringify(value)}`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new Error(`${where} must be an https:// URL (http:// only on a loopback address)`);
  return String(value);
}

function text(entry: Record<string, unknown>, field: string, where: string): string | undefined {
  const value = entry[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new Error(`${where}.${field} must be a non-empty string`);
  return value;
}

/** The short id of an issuer URL (16 hex digits of its SHA-256): stable while the URL is. */
export function issuerId(issuer: string): string {
  return createHash('sha256').update(issuer).digest('hex').slice(0, 16);
}

/** AUTH_OIDC_ISSUERS, checked: a mistake stops the cold start with a message naming the field. */
export function oidcIssuers(raw: unknown, name = 'AUTH_OIDC_ISSUERS'): OidcIssuer[] {
  if (!Array.isArray(raw)) throw new Error(`${name} must be a JSON array of issuers`);
  const seen = new Set<string>();
  return raw.map((entry: unknown, i) => {
    const where = `${name}[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error(`${where} must be an object`);
    const fields = entry as Record<string, unknown>;
    const unknown = Object.keys(fields).filter((f) => !ISSUER_FIELDS.has(f));
    if (unknown.length) throw new Error(`${where}: unknown field ${unknown.join(', ')} (known: ${[...ISSUER_FIELDS].join(', ')})`);
    const issuer = issuerUrl(fields.issuer, `${where}.issuer`);
    if (seen.has(issuer)) throw new Error(`${where}: issuer ${issuer} is listed twice`);
    seen.add(issuer);
    const audience = typeof fields.audience === 'string' ? [fields.audience] : fields.audience;
    if (!Array.isArray(audience) || audience.length === 0 || audience.some((a) => typeof a !== 'string' || a === '')) {
      throw new Error(`${where}.audience must be a non-empty string or array of strings`);
    }
    const claimsIn = fields.claims ?? {};
    if (typeof claimsIn !== 'object' || claimsIn === null || Array.isArray(claimsIn)) throw new Error(`${where}.claims must be an object`);
    const claimNames = claimsIn as Record<string, unknown>;
    const unknownClaims = Object.keys(claimNames).filter((c) => !(CLAIM_FIELDS as readonly string[]).includes(c));
    if (unknownClaims.length) throw new Error(`${where}.claims: unknown ${unknownClaims.join(', ')} (known: ${CLAIM_FIELDS.join(', ')})`);
    const claim = (field: (typeof CLAIM_FIELDS)[number], fallback: string) => text(claimNames, field, `${where}.claims`) ?? fallback;
    if (fields.createTenants !== undefined && typeof fields.createTenants !== 'boolean') throw new Error(`${where}.createTenants must be true or false`);
    const clientId = text(fields, 'clientId', where);
    const clientSecret = text(fields, 'clientSecret', where);
    if (clientSecret && !clientId) throw new Error(`${where}.clientSecret needs a clientId`);
    return {
      id: issuerId(issuer),
      issuer,
      audience: audience as string[],
      jwksUri: fields.jwksUri === undefined ? undefined : issuerUrl(fields.jwksUri, `${where}.jwksUri`),
      claims: {
        tenant: claim('tenant', 'tenant'),
        role: claim('role', 'role'),
        email: claim('email', 'email'),
        name: claim('name', 'name'),
        scopes: claimNames.scopes === null ? null : claim('scopes', 'scope'),
      },
      adminRole: text(fields, 'adminRole', where) ?? 'admin',
      defaultTenant: text(fields, 'defaultTenant', where),
      createTenants: fields.createTenants === true,
      clientId,
      clientSecret,
      name: text(fields, 'name', where) ?? new URL(issuer).host,
    };
  });
}

let checked: { from: Config; issuers: OidcIssuer[] } | undefined;

/** The configured issuers, checked once per configuration. */
export function configuredIssuers(): OidcIssuer[] {
  const current = config();
  if (checked?.from !== current) checked = { from: current, issuers: oidcIssuers(current.oidc.issuers) };
  return checked.issuers;
}
