/**
 * The middleware stack of a family whose every route is public and takes no body (the health
 * check): request context, CORS, API version and the envelope, nothing that reads credentials,
 * counts requests or stores idempotency records. Those parts of shared/http/stack.ts load the
 * AWS SDK and the identity code, which such a function never uses; leaving them out keeps its
 * bundle and its cold start small. Refuses, at load, an operation that is not a GET.
 *
 * Its routes are the family's own declarations (shared/route-declarations/<family>.ts), each a
 * public GET: not even the core route table is loaded.
 */
import middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { MethodNotAllowedError } from '../errors.js';
import { routeLookup } from '../route-lookup.js';
import type { Route } from '../route-types.js';
import { apiVersion } from './api-version.js';
import { cors } from './cors.js';
import { envelope } from './envelope.js';
import { requestContext } from './request-context.js';
import { withRequestMetrics } from './request-metrics.js';
import type { ApiEvent, ApiLambdaContext, Operations, OperationsOf, Reply } from './types.js';

export function createPublicHandler<R extends Route>(routes: readonly R[], operations: OperationsOf<R>) {
  for (const route of routes) {
    if (route.method !== 'GET' || route.auth !== 'public') throw new Error(`createPublicHandler: ${route.method} ${route.path} is not a public GET route; use createApiHandler`);
  }
  const lookup = routeLookup(routes);
  const table: Operations = operations;
  async function dispatch(_event: ApiEvent, context: ApiLambdaContext): Promise<Reply> {
    const req = context.api!;
    const operation = Object.hasOwn(table, req.route.operation) ? table[req.route.operation] : undefined;
    if (!operation) throw new MethodNotAllowedError(`${req.method} is not allowed on ${req.path}`);
    return operation(req);
  }
  // Server-Timing and X-Request-Cost like every other family (shared/http/request-metrics.ts).
  const handler = withRequestMetrics(
    middy<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext>(dispatch as never)
      .use(envelope())
      .use(requestContext(lookup))
      .use(cors(lookup))
      .use(apiVersion()),
  );
  // What the route declarations' test checks against the family's declared routes.
  return Object.assign(handler, { operations: async () => table });
}
