/**
 * The middleware stack, composed once. Every family's Lambda is `createApiHandler(operations)`:
 * operations are keyed by the names the family's route declarations give them (`getMe` of GET
 * /api/v1/users/me: FamilyOperations checks the map against them) and receive the ApiRequest.
 *
 * Order of `before`: request context → inherited auth (batch sub-requests) → CORS (preflights
 * end here) → version → authenticate → rate limit → CSRF → scopes → JSON body → Idempotency-Key
 * (a replay ends here) → the declared body schema; the envelope's after/onError run next to last, the idempotency record's last.
 *
 * What needs DynamoDB (authentication, the rate limit, idempotency records) and, for a family
 * that passes a loader instead of its operations, the operations themselves load on the first
 * request that needs them (on-first-use.ts): a cold start evaluates the stack, not the AWS SDK.
 */
import middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { MethodNotAllowedError } from '../errors.js';
import { coreRouteLookup, type RouteLookup } from '../core-routes.js';
import { apiVersion } from './api-version.js';
import { authenticate } from './authenticate.js';
import { authorize, type AuthorizeOptions } from './authorize.js';
import { cors } from './cors.js';
import { csrf } from './csrf.js';
import { deadlineOptions } from './deadline.js';
import { envelope } from './envelope.js';
import { idempotency } from './idempotency.js';
import { inheritedAuth } from './inherited-auth.js';
import { jsonBody } from './json-body.js';
import { onFirstUse } from '../on-first-use.js';
import type { RateLimitOptions } from './rate-limit.js';
import { requestContext } from './request-context.js';
import { timedAuthentication, withRequestMetrics } from './request-metrics.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest, Operations, Reply } from './types.js';
import { validateBody, type BodyValidationOptions } from './validate-body.js';

export type { Operations } from './types.js';

/**
 * A family's operations (and the stack options that come with them), imported by the first
 * request that gets past CORS and the API version: `() => import('...').then(...)`.
 */
export type OperationsLoader = () => Promise<{ operations: Operations; options?: StackOptions }>;

export interface StackOptions extends AuthorizeOptions, RateLimitOptions, BodyValidationOptions {
  /**
   * The routes a request is resolved with: the core routes (core-routes.ts) unless the family
   * serves plugin routes (the plugins family passes routeTable of shared/routes.ts). Read when
   * the stack is composed, so a loader's options cannot change it.
   */
  routes?: RouteLookup;
  /** Lambda response streaming (the SSE stream). */
  streaming?: boolean;
  /**
   * How many of a request's sub-requests are counted by their own stacks (default: none). The batch
   * handler gives a batch's runnable sub-requests: the batch then leases their tokens with one
   * update instead of counting itself.
   */
  subRequestsCounted?: (req: ApiRequest) => number;
}

type Middleware = middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext>;

const rateLimitCode = onFirstUse(() => import('./rate-limit.js'));

/**
 * The rate limit (rate-limit.ts, loaded on first use), replaced by one lease for a request whose
 * sub-requests count themselves. `options` is read when the first request arrives.
 */
function limitRate(options: StackOptions): Middleware {
  let limit: Middleware['before'];
  return {
    before: async function limitRateOnFirstUse(request) {
      if (!limit) {
        const { leaseAhead, rateLimit } = await rateLimitCode();
        const before = rateLimit(options).before!;
        const subRequestsCounted = options.subRequestsCounted;
        limit = subRequestsCounted
          ? function limitRateUnlessCountedBySubRequests(request) {
              const running = subRequestsCounted(request.context.api!);
              return running === 0 ? before(request) : leaseAhead(request.context.api!, running);
            }
          : before;
      }
      return limit(request);
    },
  };
}

/** Loads deferred operations before anything reads the family's options (authentication on). */
function operationsLoaded(load: () => Promise<unknown>): Middleware {
  return {
    before: async function loadOperations() {
      await load();
    },
  };
}

export function createApiHandler(operations: Operations | OperationsLoader, options: StackOptions = {}) {
  // The middlewares read the options when a request runs: deferred operations add theirs on load.
  const stackOptions: StackOptions = { ...options };
  let table: Operations | undefined = typeof operations === 'function' ? undefined : operations;
  const load = onFirstUse(async () => {
    if (typeof operations !== 'function') return;
    const loaded = await operations();
    Object.assign(stackOptions, loaded.options);
    table = loaded.operations;
  });
  async function dispatch(_event: ApiEvent, context: ApiLambdaContext): Promise<Reply> {
    const req = context.api!;
    const operation = table && Object.hasOwn(table, req.route.operation) ? table[req.route.operation] : undefined;
    if (!operation) throw new MethodNotAllowedError(`${req.method} is not allowed on ${req.path}`);
    return operation(req, context);
  }
  const idempotent = idempotency();
  // Server-Timing and X-Request-Cost go on the final result, early answers (preflight, replay) included.
  const handler = withRequestMetrics(middy<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext>(dispatch as never, { streamifyResponse: options.streaming ?? false, ...deadlineOptions })
    // Registered before the envelope, so its after/onError see the final response (to store it).
    .use(idempotent.record)
    .use(envelope())
    .use(requestContext(options.routes ?? coreRouteLookup))
    .use(inheritedAuth())
    .use(cors(options.routes ?? coreRouteLookup))
    .use(apiVersion())
    .use(operationsLoaded(load))
    .use(timedAuthentication(authenticate()))
    // Right after authentication, so every authenticated response (a 403 too) carries the
    // rate-limit headers.
    .use(limitRate(stackOptions))
    .use(csrf())
    .use(authorize(stackOptions))
    .use(jsonBody())
    .use(idempotent.claim)
    .use(validateBody(stackOptions)));
  return withOperations(handler, async () => {
    await load();
    return table!;
  });
}

/**
 * The handler, which also tells the operations it dispatches to (loading them if need be): the
 * route declarations' test checks them against the declared routes of the family.
 */
export function withOperations<H extends object>(handler: H, operations: () => Promise<Operations>): H & { operations: () => Promise<Operations> } {
  return Object.assign(handler, { operations });
}
