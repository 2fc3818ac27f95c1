/**
 * CSRF guard (CONTRACT.md): a cookie-authenticated POST/PATCH/PUT/DELETE whose Origin header is
 * present and neither the same origin nor in ALLOWED_ORIGINS gets 403. Requests without Origin
 * (non-browser clients) and key-authenticated requests pass.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { ForbiddenError } from '../errors.js';
import { isAllowedOrigin } from './cors.js';
import type { ApiEvent, ApiLambdaContext } from './types.js';

const UNSAFE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

export function csrf(): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: function guardCrossSiteRequests(request) {
      const req = request.context.api!;
      const origin = req.headers.origin;
      if (!origin || !UNSAFE.has(req.method) || req.auth?.type !== 'session') return;
      if (!isAllowedOrigin(origin, req, false)) throw new ForbiddenError(`Origin ${origin} is not allowed`);
    },
  };
}
