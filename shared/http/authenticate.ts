/**
 * Authentication, in SPEC.md's order: the session cookie first, then the API key
 * (Authorization: Bearer or X-API-Key) or an identity provider's JWT (a bearer value with two
 * dots; API keys have none); neither valid → 401. The route's auth mode decides what is needed:
 * public routes ignore credentials, optional routes allow anonymous callers, session routes
 * refuse a key or a token alone with 403.
 *
 * The session and key code (and the AWS SDK under it) loads on the first request that carries
 * credentials or needs them, not at cold start; the JWT code (and `jose`) on the first JWT.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { onFirstUse } from '../on-first-use.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest, AuthContext } from './types.js';

const credentialCode = onFirstUse(() => Promise.all([import('../auth/sessions.js'), import('../auth/api-keys.js')]));
const tokenCode = onFirstUse(() => import('../auth/oidc-bearer.js'));

/** A JWT's compact form: three base64url parts. */
export function isJwt(value: string): boolean {
  return value.split('.').length === 3;
}

export async function resolveAuth(req: ApiRequest): Promise<AuthContext | undefined> {
  const [{ SESSION_COOKIE, sessionCookie, verifySession }, { extractApiKey, verifyApiKey }] = await credentialCode();
  const token = req.cookies[SESSION_COOKIE];
  const session = token ? await verifySession(token) : undefined;
  if (session) {
    // The server-side expiry slid: the browser's cookie gets the same new lifetime.
    if (session.sessionRenewedUntil) req.responseCookies.push(sessionCookie(token!, session.sessionRenewedUntil - Math.floor(Date.now() / 1000)));
    return session;
  }
  const key = extractApiKey(req.headers);
  if (key !== undefined) return isJwt(key) ? (await tokenCode()).verifyBearerToken(key) : verifyApiKey(key, req);
  if (token) throw new UnauthorizedError('The session is expired or invalid', 'INVALID_SESSION');
  return undefined;
}

export function authenticate(): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: async function authenticateCaller(request) {
      const req = request.context.api!;
      const mode = req.route.auth;
      if (mode === 'public') return;
      req.auth ??= await resolveAuth(req);
      if (req.auth && req.auth.requestId !== req.requestId) req.auth = { ...req.auth, requestId: req.requestId };
      if (!req.auth) {
        if (mode === 'optional') return;
        throw new UnauthorizedError();
      }
      if (mode === 'session' && req.auth.type !== 'session') {
        throw new ForbiddenError(`This endpoint needs a session; ${req.auth.type === 'oidc' ? 'a bearer token' : 'an API key'} cannot use it`);
      }
    },
  };
}
