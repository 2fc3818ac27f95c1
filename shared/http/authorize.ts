/**
 * Scopes: a route declares the scope it needs (`{entity}` is filled from the path); a caller
 * without it gets 403 INSUFFICIENT_PERMISSIONS naming the scope. Anonymous callers pass only
 * where the family says the read is public (public entities).
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { hasScope } from '../scopes.js';
import { InsufficientPermissionsError, UnauthorizedError } from '../errors.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest } from './types.js';

export interface AuthorizeOptions {
  /** True when this request may be served without credentials (a public entity's read). */
  isPublicRead?: (req: ApiRequest) => boolean;
  /** False when the scope's entity does not exist: the operation answers 404, not 403. */
  scopeApplies?: (req: ApiRequest) => boolean;
}

export function requiredScope(req: ApiRequest): string | undefined {
  return req.route.scope?.replace('{entity}', req.params.entity ?? '');
}

export function authorize(options: AuthorizeOptions = {}): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: async function checkScopes(request) {
      const req = request.context.api!;
      if (req.route.auth === 'public') return;
      if (!req.auth) {
        if (options.isPublicRead?.(req)) return;
        throw new UnauthorizedError();
      }
      const scope = requiredScope(req);
      if (!scope || options.scopeApplies?.(req) === false) return;
      if (!hasScope(req.auth.scopes, scope)) {
        // A key's denial is audited and padded like every failed key validation.
        if (req.auth.type === 'api_key') await (await import('../auth/api-keys.js')).apiKeyScopeDenied(req, scope);
        throw new InsufficientPermissionsError(scope);
      }
    },
  };
}
