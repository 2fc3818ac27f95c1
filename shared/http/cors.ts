/**
 * CORS: answers preflights (OPTIONS with Origin and Access-Control-Request-Method) before any
 * authentication, and adds the allow headers to responses for allowed origins.
 * Allowed origins: ALLOWED_ORIGINS (comma list; `*` allows any origin without credentials).
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { config } from '../config.js';
import type { RouteLookup } from '../core-routes.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest } from './types.js';

const ALLOW_HEADERS = 'Authorization, X-API-Key, Content-Type, X-Request-ID, X-API-Version, If-None-Match, Idempotency-Key, Last-Event-ID, Accept-Language';
const EXPOSE_HEADERS = 'X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, ETag, X-Total-Count, X-Page, X-Per-Page, Link, Deprecation, Sunset, Server-Timing, X-Request-Cost';

/** Same origin (the Host the request was sent to) or one of ALLOWED_ORIGINS. */
export function isAllowedOrigin(origin: string, req: ApiRequest, allowWildcard: boolean): boolean {
  const allowed = config().allowedOrigins;
  if (allowed.includes(origin) || (allowWildcard && allowed.includes('*'))) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function methodsOf(lookup: RouteLookup, path: string): string {
  return [...new Set(lookup.routes.filter((r) => r.path === path).map((r) => r.method).concat('OPTIONS'))].join(', ');
}

/** `lookup`: the routes of the stack (their methods answer a preflight). */
export function cors(lookup: RouteLookup): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: function handleCors(request) {
      const req = request.context.api!;
      const origin = req.headers.origin;
      if (!origin) return;
      const allowed = isAllowedOrigin(origin, req, true);
      if (allowed) {
        const credentialed = config().allowedOrigins.includes(origin) || !config().allowedOrigins.includes('*');
        Object.assign(req.responseHeaders, {
          'Access-Control-Allow-Origin': origin,
          'Access-Control-Expose-Headers': EXPOSE_HEADERS,
          Vary: 'Origin',
          ...(credentialed ? { 'Access-Control-Allow-Credentials': 'true' } : {}),
        });
      }
      const isPreflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'];
      if (!isPreflight) return;
      return {
        statusCode: 204,
        headers: {
          'X-Request-ID': req.requestId,
          ...req.responseHeaders,
          ...(allowed
            ? { 'Access-Control-Allow-Methods': methodsOf(lookup, req.route.path), 'Access-Control-Allow-Headers': ALLOW_HEADERS, 'Access-Control-Max-Age': '600' }
            : {}),
        },
        body: '',
      };
    },
  };
}
