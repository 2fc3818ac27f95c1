/**
 * Console sign-in through an identity provider (an issuer with a `clientId`): the authorization
 * code flow with PKCE (S256), `state` and `nonce`, ending in the same session cookie as a
 * password sign-in.
 *
 * 1. `startSignIn`: a random seed goes into a short-lived cookie (`oidc_flow`, HttpOnly,
 *    SameSite=Lax, 10 minutes, on the sign-in paths only); `state`, `nonce` and the PKCE
 *    verifier are derived from it with a key of the deployment secret, so nothing is stored and
 *    a forged or swapped cookie derives values the provider never saw. The browser goes to the
 *    provider's authorization endpoint.
 * 2. `finishSignIn` (the provider redirects back to /api/v1/auth/oidc/callback): the `state`
 *    must match the cookie's (the browser that started is the one that finishes), the `iss`
 *    parameter, when sent, must be the issuer (RFC 9207); the code is exchanged at the token
 *    endpoint with the verifier (and the client secret, when configured); the ID token is
 *    verified like a bearer token (shared/auth/oidc-tokens.ts) with the client id as audience and
 *    the nonce; the user is found or created by shared/auth/oidc-users.ts; a session begins.
 * 3. Signing out ends the session; when the provider has an `end_session_endpoint`, the answer
 *    offers its URL (RP-initiated logout) to end the provider's session too.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { config } from '../config.js';
import { deploymentKey } from '../deployment-secret.js';
import { NotFoundError } from '../errors.js';
import { logger } from '../logger.js';
import { apiUrl } from '../urls.js';
import { identityOf } from './oidc-claims.js';
import { configuredIssuers, type OidcIssuer } from './oidc-config.js';
import { discover, TokenRefused, verifyToken } from './oidc-tokens.js';
import { IdentityRefused, userForIdentity } from './oidc-users.js';
import { createSession, hashToken, revokeSession } from './sessions.js';

export const FLOW_COOKIE = 'oidc_flow';
export const SIGN_IN_PATH = '/api/v1/auth/oidc';
export const CALLBACK_PATH = `${SIGN_IN_PATH}/callback`;
const FLOW_SECONDS = 600;
const SCOPE = 'openid email profile';
const TOKEN_TIMEOUT_MS = 10_000;

/** Where the API is reached from the browser: the request's origin and base path (shared/urls.ts). */
export interface Base {
  origin?: string;
  basePath?: string;
}

/** Why a sign-in did not complete: logged; the browser is sent back to the console with `signin=<outcome>`. */
export class SignInFailed extends Error {
  constructor(
    readonly reason: string,
    readonly outcome: 'failed' | 'cancelled' = 'failed',
  ) {
    super(`sign-in failed: ${reason}`);
    this.name = 'SignInFailed';
  }
}

export interface SignInProvider {
  id: string;
  name: string;
}

function consoleIssuers(): OidcIssuer[] {
  return configuredIssuers().filter((i) => i.clientId);
}

/** The providers the sign-in page offers ("Sign in with {name}"). */
export function signInProviders(): SignInProvider[] {
  return consoleIssuers().map((i) => ({ id: i.id, name: i.name }));
}

function flowCookie(base: Base, value: string, maxAge: number): string {
  const path = `${base.basePath ?? ''}${SIGN_IN_PATH}`;
  return `${FLOW_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=${path}; Max-Age=${maxAge}${config().secureCookies ? '; Secure' : ''}`;
}

interface FlowValues {
  state: string;
  nonce: string;
  verifier: string;
}

async function flowValues(providerId: string, seed: string): Promise<FlowValues> {
  const key = await deploymentKey('oidc-sign-in');
  const derive = (label: string) => createHmac('sha256', key).update(`${label}\n${providerId}\n${seed}`).digest('base64url');
  return { state: derive('state'), nonce: derive('nonce'), verifier: derive('verifier') };
}

function redirectUri(base: Base): string {
  return apiUrl(base, CALLBACK_PATH);
}

/** The provider's authorization URL for a new sign-in, and the cookie that ties the browser to it. */
export async function startSignIn(providerId: string, base: Base): Promise<{ location: string; cookie: string }> {
  const issuer = consoleIssuers().find((i) => i.id === providerId);
  if (!issuer) throw new NotFoundError('No identity provider by this id offers console sign-in');
  const seed = randomBytes(32).toString('base64url');
  const { state, nonce, verifier } = await flowValues(issuer.id, seed);
  const discovery = await discover(issuer).catch((error: unknown) => {
    logger.warn('identity provider discovery failed', { issuer: issuer.issuer, error: (error as Error).message });
    throw new SignInFailed('discovery');
  });
  if (!discovery.authorization_endpoint) throw new SignInFailed('the provider has no authorization endpoint');
  const url = new URL(discovery.authorization_endpoint);
  const params = {
    response_type: 'code',
    client_id: issuer.clientId!,
    redirect_uri: redirectUri(base),
    scope: SCOPE,
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return { location: url.href, cookie: flowCookie(base, `${issuer.id}.${seed}`, FLOW_SECONDS) };
}

/** The cookie that ends the flow (sent with every callback answer). */
export function clearedFlowCookie(base: Base): string {
  return flowCookie(base, '', 0);
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The token endpoint's answer to the code, or SignInFailed. */
async function exchangeCode(issuer: OidcIssuer, tokenEndpoint: string, authMethods: string[] | undefined, code: string, verifier: string, base: Base): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri(base), code_verifier: verifier });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const secret = issuer.clientSecret;
  // client_secret_basic unless the provider lists only client_secret_post (RFC 6749 2.3.1: both parts form-encoded).
  if (secret && (authMethods?.includes('client_secret_basic') ?? true)) {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(issuer.clientId!)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  } else {
    form.set('client_id', issuer.clientId!);
    if (secret) form.set('client_secret', secret);
  }
  let response: Response;
  try {
    response = await fetch(tokenEndpoint, { method: 'POST', headers, body: form, signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS) });
  } catch (error) {
    throw new SignInFailed(`token endpoint unreachable: ${(error as Error).name}`);
  }
  const body = (await response.json().catch(() => ({}))) as { id_token?: unknown; error?: unknown };
  if (!response.ok) throw new SignInFailed(`token endpoint answered ${response.status} ${typeof body.error === 'string' ? body.error : ''}`.trim());
  if (typeof body.id_token !== 'string') throw new SignInFailed('no id_token in the token response');
  return body.id_token;
}

export interface SignedIn {
  token: string;
  expiresAt: number;
}

/**
 * The callback: checks the flow, exchanges the code, verifies the ID token and begins a session
 * (ending `previousToken`'s, as a password sign-in does). SignInFailed for anything that is not
 * this API's own error.
 */
export async function finishSignIn(query: Record<string, string>, flowCookieValue: string | undefined, base: Base, previousToken?: string): Promise<SignedIn> {
  const [providerId, seed, extra] = (flowCookieValue ?? '').split('.');
  if (!providerId || !seed || extra !== undefined) throw new SignInFailed('no sign-in in progress in this browser');
  const issuer = consoleIssuers().find((i) => i.id === providerId);
  if (!issuer) throw new SignInFailed('the provider is no longer configured');
  const { state, nonce, verifier } = await flowValues(issuer.id, seed);
  if (!query.state || !sameText(query.state, state)) throw new SignInFailed('state mismatch');
  if (query.iss !== undefined && query.iss !== issuer.issuer) throw new SignInFailed('the response names another issuer');
  if (query.error) throw new SignInFailed(`the provider answered ${query.error}`, query.error === 'access_denied' ? 'cancelled' : 'failed');
  if (!query.code) throw new SignInFailed('no code');
  try {
    const discovery = await discover(issuer).catch(() => {
      throw new SignInFailed('discovery');
    });
    if (!discovery.token_endpoint) throw new SignInFailed('the provider has no token endpoint');
    const idToken = await exchangeCode(issuer, discovery.token_endpoint, discovery.token_endpoint_auth_methods_supported, query.code, verifier, base);
    const claims = await verifyToken(idToken, issuer, { audience: [issuer.clientId!], nonce });
    // Several audiences: the token must say it was issued to this client (OpenID Connect Core 3.1.3.7).
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== issuer.clientId) throw new SignInFailed('azp');
    const user = await userForIdentity(identityOf(claims, issuer));
    const session = await createSession(user, { issuer: issuer.issuer });
    if (previousToken) await revokeSession(hashToken(previousToken)).catch(() => undefined);
    return { token: session.token, expiresAt: session.expiresAt };
  } catch (error) {
    if (error instanceof TokenRefused || error instanceof IdentityRefused) throw new SignInFailed(error.reason);
    throw error;
  }
}

/** The provider's sign-out URL for a session begun with `issuerUrl`, when it has one (with the console to come back to). */
export async function endSessionUrl(issuerUrl: string, base: Base): Promise<{ name: string; url: string } | undefined> {
  const issuer = consoleIssuers().find((i) => i.issuer === issuerUrl);
  if (!issuer) return undefined;
  const endpoint = await discover(issuer).then(
    (d) => d.end_session_endpoint,
    () => undefined,
  );
  if (!endpoint) return undefined;
  const url = new URL(endpoint);
  url.searchParams.set('client_id', issuer.clientId!);
  url.searchParams.set('post_logout_redirect_uri', apiUrl(base, '/dashboard'));
  return { name: issuer.name, url: url.href };
}
