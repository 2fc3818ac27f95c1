/**
 * The middleware stack of a family whose every route is public and takes no body (the health
 * check): request context, CORS, API version and the envelope, nothing that reads credentials,
 * counts requests or stores idempotency records. Those parts of shared/http/stack.ts load the
 * AWS SDK and the identity code, which such a function never uses; leaving them out keeps its
 * bundle and its cold start small. Refuses, at load, an operation that is not a GET.
 *
 * Its routes are its operations' own, public by definition: not even the core route table is
 * loaded (test/shared/route-declarations.test.ts checks that each is a public GET route there).
 */
import middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { MethodNotAllowedError } from '../errors.js';
import { routeKey, routeLookup, type Family, type HttpMethod, type Route } from '../core-routes.js';
import { apiVersion } from './api-version.js';
import { cors } from './cors.js';
import { envelope } from './envelope.js';
import { requestContext } from './request-context.js';
import { withRequestMetrics } from './request-metrics.js';
import type { ApiEvent, ApiLambdaContext, Operation, Reply } from './types.js';

export function createPublicHandler(operations: Record<string, Operation>, family: Family = 'health') {
  const routes: Route[] = Object.keys(operations).map((key) => {
    const [method, path] = key.split(' ');
    if (method !== 'GET' || !path) throw new Error(`createPublicHandler: '${key}' is not a GET route; use createApiHandler`);
    return { method: method as HttpMethod, path, family, auth: 'public' };
  });
  const lookup = routeLookup(routes);
  async function dispatch(_event: ApiEvent, context: ApiLambdaContext): Promise<Reply> {
    const req = context.api!;
    const operation = operations[routeKey(req.route.method, req.route.path)];
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
  return Object.assign(handler, { operations: async () => operations });
}
