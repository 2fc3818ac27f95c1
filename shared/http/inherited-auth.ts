/**
 * In-process sub-requests (POST /api/v1/batch) carry the outer request's resolved AuthContext on
 * their Lambda context, under a module-private symbol: authentication is not repeated for each
 * sub-request (a batch of 20 reads costs one authentication). Nothing that arrives over HTTP can
 * set it: events and contexts built from HTTP carry no symbols, and the symbol is not exported.
 *
 * The middleware runs right after requestContext; the authenticate middleware keeps an auth that
 * is already there (`req.auth ??= ...`) and still applies the route's mode (a key on a
 * session-only route gets 403). Public routes ignore credentials, inherited ones too.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { ApiEvent, ApiLambdaContext, AuthContext } from './types.js';

const INHERITED_AUTH = Symbol('inherited-auth');

/** Marks `context` (a sub-request's own Lambda context) as authenticated as `auth`. */
export function withInheritedAuth<T extends object>(context: T, auth: AuthContext | undefined): T {
  if (auth) {
    const copy: AuthContext = { ...auth, user: { ...auth.user }, scopes: [...auth.scopes] };
    Object.defineProperty(context, INHERITED_AUTH, { value: copy, enumerable: false });
  }
  return context;
}

export function inheritedAuthOf(context: object): AuthContext | undefined {
  return (context as { [INHERITED_AUTH]?: AuthContext })[INHERITED_AUTH];
}

export function inheritedAuth(): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: function inheritAuth(request) {
      const auth = inheritedAuthOf(request.context);
      const req = request.context.api!;
      if (auth && req.route.auth !== 'public') req.auth = auth;
    },
  };
}
