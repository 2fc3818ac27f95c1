/**
 * `Authorization: Bearer <JWT>` from a trusted identity provider (AUTH_OIDC_ISSUERS): the caller
 * of shared/auth/oidc-tokens.ts's verified token, found or created by shared/auth/oidc-users.ts.
 *
 * Whatever fails (an unknown issuer, a bad signature, a wrong audience, an expired token, a
 * disabled user, an unknown tenant) answers the same 401 AUTHENTICATION_FAILED with
 * `WWW-Authenticate: Bearer error="invalid_token"`, no sooner than FAILURE_FLOOR_MS after the
 * request began: neither the body nor the time tells which check failed. The reason goes to
 * the log. An error of this API's own (the database) is not the token's fault and is not hidden.
 */
import type { AuthContext } from '../caller.js';
import { ApiError } from '../errors.js';
import { logger } from '../logger.js';
import { padToFloor } from './api-keys.js';
import { identityOf } from './oidc-claims.js';
import { configuredIssuers } from './oidc-config.js';
import { claimedIssuer, TokenRefused, verifyToken } from './oidc-tokens.js';
import { IdentityRefused, userForIdentity } from './oidc-users.js';

export function invalidTokenError(): ApiError {
  return ApiError.of('AUTHENTICATION_FAILED', 'The bearer token is invalid', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
}

export async function verifyBearerToken(token: string): Promise<AuthContext> {
  const startedAt = performance.now();
  try {
    const issuer = claimedIssuer(token);
    if (!issuer) throw new TokenRefused(configuredIssuers().length ? 'unknown issuer' : 'no identity provider is configured');
    const claims = await verifyToken(token, issuer, { audience: issuer.audience });
    const identity = identityOf(claims, issuer);
    const user = await userForIdentity(identity);
    return {
      type: 'oidc',
      user: { id: user.id, email: user.email, name: user.name, role: user.role },
      tenantId: user.tenantId,
      scopes: identity.scopes,
      issuer: issuer.issuer,
    };
  } catch (error) {
    await padToFloor(startedAt);
    if (error instanceof TokenRefused || error instanceof IdentityRefused) {
      logger.info('identity provider token refused', { reason: error.reason });
      throw invalidTokenError();
    }
    throw error;
  }
}
