/**
 * Verifying a JWT of a trusted identity provider with `jose`: the signature against the issuer's
 * published keys (JWKS), then `iss`, `aud` (shared/auth/oidc-claims.ts) and `exp`/`nbf`.
 *
 * - Algorithms: RS256, ES256 and EdDSA (also named Ed25519) only. `none` and the HMAC algorithms
 *   are refused whatever the header says: an HMAC "signed" with the provider's public key must
 *   not pass.
 * - Keys: the JWKS of `jwksUri`, else the `jwks_uri` of the issuer's OpenID discovery document
 *   (`{issuer}/.well-known/openid-configuration`, whose `issuer` must be the configured one).
 *   A container keeps both; a token whose `kid` is not among the kept keys fetches the JWKS again,
 *   at most once per AUTH_OIDC_JWKS_COOLDOWN_SECONDS (60), so a provider's new key is taken
 *   without a restart and unknown ids cannot make the API hammer the provider. Kept keys are
 *   fetched again after 10 minutes anyway.
 * - Times: 60 seconds of clock skew either way.
 *
 * This module (and `jose`) is loaded only when a request carries a JWT (shared/http/authenticate.ts).
 */
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { config } from '../config.js';
import { audienceMatches } from './oidc-claims.js';
import { configuredIssuers, type OidcIssuer } from './oidc-config.js';

export const ALGORITHMS = ['RS256', 'ES256', 'EdDSA', 'Ed25519'];
export const CLOCK_SKEW_SECONDS = 60;
const FETCH_TIMEOUT_MS = 5000;
/** A discovery document that could not be fetched is not asked for again sooner than this. */
const DISCOVERY_RETRY_MS = 10_000;

/** The parts of an OpenID Provider's discovery document this API uses. */
export interface Discovery {
  issuer: string;
  jwks_uri: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  end_session_endpoint?: string;
  token_endpoint_auth_methods_supported?: string[];
}

/** Why a token was refused: for the logs only, the client is told nothing beyond `invalid_token`. */
export class TokenRefused extends Error {
  constructor(readonly reason: string) {
    super(`token refused: ${reason}`);
    this.name = 'TokenRefused';
  }
}

const discoveries = new Map<string, { document?: Promise<Discovery>; failedAt?: number }>();
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
}

async function fetchDiscovery(issuer: string): Promise<Discovery> {
  const response = await fetch(discoveryUrl(issuer), { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`discovery answered ${response.status}`);
  const document = (await response.json()) as Partial<Discovery>;
  if (document.issuer !== issuer) throw new Error('the discovery document names another issuer');
  if (typeof document.jwks_uri !== 'string') throw new Error('the discovery document has no jwks_uri');
  return document as Discovery;
}

/** The issuer's discovery document, fetched once per container (a failure is retried after DISCOVERY_RETRY_MS). */
export function discover(issuer: OidcIssuer): Promise<Discovery> {
  const entry = discoveries.get(issuer.issuer);
  if (entry?.document) return entry.document;
  if (entry?.failedAt !== undefined && Date.now() - entry.failedAt < DISCOVERY_RETRY_MS) {
    return Promise.reject(new TokenRefused('discovery unavailable'));
  }
  const document = fetchDiscovery(issuer.issuer);
  discoveries.set(issuer.issuer, { document });
  document.catch(() => discoveries.set(issuer.issuer, { failedAt: Date.now() }));
  return document;
}

async function keySet(issuer: OidcIssuer): Promise<ReturnType<typeof createRemoteJWKSet>> {
  const jwksUri = issuer.jwksUri ?? (await discover(issuer)).jwks_uri;
  const cooldownMs = config().oidc.jwksCooldownSeconds * 1000;
  const cacheKey = `${jwksUri} ${cooldownMs}`;
  let keys = keySets.get(cacheKey);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(jwksUri), { cooldownDuration: cooldownMs, timeoutDuration: FETCH_TIMEOUT_MS, cacheMaxAge: 10 * 60_000 });
    keySets.set(cacheKey, keys);
  }
  return keys;
}

/** The configured issuer a token claims to come from (read unverified: only to pick the keys). */
export function claimedIssuer(token: string): OidcIssuer | undefined {
  let iss: unknown;
  try {
    iss = decodeJwt(token).iss;
  } catch {
    return undefined;
  }
  return configuredIssuers().find((i) => i.issuer === iss);
}

/**
 * The token's verified claims, or TokenRefused. `audience`: the accepted `aud` values (the API's
 * for bearer tokens, the client id for the console's ID tokens); `nonce`: the one the console sent.
 */
export async function verifyToken(token: string, issuer: OidcIssuer, accept: { audience: readonly string[]; nonce?: string }): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, await keySet(issuer), {
      issuer: issuer.issuer,
      algorithms: ALGORITHMS,
      clockTolerance: CLOCK_SKEW_SECONDS,
      requiredClaims: ['exp', 'sub'],
    }));
  } catch (error) {
    if (error instanceof TokenRefused) throw error;
    throw new TokenRefused((error as { code?: string }).code ?? (error as Error).name);
  }
  if (!audienceMatches(payload, accept.audience)) throw new TokenRefused('audience');
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenRefused('subject');
  if (accept.nonce !== undefined && payload.nonce !== accept.nonce) throw new TokenRefused('nonce');
  return payload;
}

/** For tests that change the configuration in-process. */
export function clearOidcKeyCache(): void {
  discoveries.clear();
  keySets.clear();
}
