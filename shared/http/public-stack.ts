/**
 * The middleware stack of a family whose every route is public and takes no body (the health
 * check): request context, CORS, API version and the envelope, nothing that reads credentials,
 * counts requests or stores idempotency records. Those parts of shared/http/stack.ts load the
 * AWS SDK and the identity code, which such a function never uses; leaving them out keeps its
 * bundle and its cold start small. Refuses, at load, an operation whose route is not public.
 *
 * Its routes are core routes (core-routes.ts): the plugin declarations, which only the route
 * table of the plugins family needs, are not loaded.
 */
import middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { MethodNotAllowedError } from '../errors.js';
import { coreRouteLookup, coreRoutes, routeKey } from '../core-routes.js';
import { apiVersion } from './api-version.js';
import { cors } from './cors.js';
import { envelope } from './envelope.js';
import { requestContext } from './request-context.js';
import { withRequestMetrics } from './request-metrics.js';
import type { ApiEvent, ApiLambdaContext, Operation, Reply } from './types.js';

export function createPublicHandler(operations: Record<string, Operation>) {
  for (const key of Object.keys(operations)) {
    const route = coreRoutes.find((r) => routeKey(r.method, r.path) === key);
    if (!route || route.auth !== 'public' || route.method !== 'GET') {
      throw new Error(`createPublicHandler: '${key}' is not a public GET route of shared/routes.ts; use createApiHandler`);
    }
  }
  async function dispatch(_event: ApiEvent, context: ApiLambdaContext): Promise<Reply> {
    const req = context.api!;
    const operation = operations[routeKey(req.route.method, req.route.path)];
    if (!operation) throw new MethodNotAllowedError(`${req.method} is not allowed on ${req.path}`);
    return operation(req);
  }
  // Server-Timing and X-Request-Cost like every other family (shared/http/request-metrics.ts).
  return withRequestMetrics(
    middy<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext>(dispatch as never)
      .use(envelope())
      .use(requestContext(coreRouteLookup))
      .use(cors(coreRouteLookup))
      .use(apiVersion()),
  );
}
