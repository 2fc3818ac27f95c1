/**
 * Server-Timing and X-Request-Cost on every response of a family's handler.
 *
 * The handler runs inside a request usage (shared/data/usage.ts) that the DynamoDB client's
 * middleware fills; when the stack has answered — success, error, a preflight or an idempotent
 * replay that ended early — the headers are added to the result:
 * - `Server-Timing: auth;dur=0.4, db;dur=4.2;desc="3 calls", app;dur=1.3, total;dur=6.1`
 *   (milliseconds: authentication, wall time with a DynamoDB call in flight outside
 *   authentication, the rest of the handler, and all of it);
 * - `X-Request-Cost: rcu=1.0, wcu=1.0`: the capacity units DynamoDB reported for the request's
 *   calls (a batch's sub-requests included), unless REQUEST_COST_HEADER is off.
 * Streamed responses send their headers before the work is done and carry neither.
 *
 * With REQUEST_LOG on, each request also logs one JSON line, `request`, with what API Gateway's
 * access log cannot know (the caller's type, decided by the function) and the gateway's request
 * id to join the two.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { config } from '../config.js';
import { currentUsage, withRequestUsage, type RequestUsage } from '../data/usage.js';
import { logger, logsWritten } from '../logger.js';
import type { ApiEvent, ApiLambdaContext } from './types.js';

type Middleware = middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext>;

function ms(value: number): string {
  return Math.max(0, value).toFixed(1);
}

/** Capacity units as shown: one decimal, more only when DynamoDB reported finer ones. */
export function units(value: number): string {
  const rounded = Math.round(value * 100) / 100;
  return Number.isInteger(rounded * 10) ? rounded.toFixed(1) : rounded.toFixed(2);
}

export function serverTiming(usage: RequestUsage, now = performance.now()): string {
  const total = now - usage.startedAt;
  const db = usage.dbMsNow(now) - usage.authDbMs;
  const app = total - usage.authMs - db;
  return `auth;dur=${ms(usage.authMs)}, db;dur=${ms(db)};desc="${usage.calls} call${usage.calls === 1 ? '' : 's'}", app;dur=${ms(app)}, total;dur=${ms(total)}`;
}

export function requestCost(usage: RequestUsage): string {
  return `rcu=${units(usage.rcu)}, wcu=${units(usage.wcu)}`;
}

function withHeaders(result: unknown, usage: RequestUsage): unknown {
  if (!result || typeof result !== 'object' || !('statusCode' in result)) return result;
  const response = result as { headers?: Record<string, string | number | boolean> };
  response.headers = { ...(response.headers ?? {}), 'Server-Timing': serverTiming(usage) };
  if (config().requestCostHeader) response.headers['X-Request-Cost'] = requestCost(usage);
  return response;
}

export type CallerType = 'api_key' | 'session' | 'oidc' | 'anonymous';

/** The request log line's fields (no credentials, no body, no query string). */
export function requestLogEntry(event: ApiEvent | undefined, context: ApiLambdaContext | undefined, result: unknown, usage: RequestUsage, now = performance.now()) {
  const req = context?.api;
  const status = result && typeof result === 'object' && 'statusCode' in result ? (result as { statusCode: number }).statusCode : undefined;
  const callerType: CallerType = req?.auth?.type ?? 'anonymous';
  return {
    requestId: req?.requestId,
    gatewayRequestId: event?.requestContext?.requestId,
    method: event?.httpMethod,
    resource: req?.route.path ?? event?.resource,
    status,
    callerType,
    tenantId: req?.auth?.tenantId,
    latencyMs: Math.round((now - usage.startedAt) * 10) / 10,
    dynamodbCalls: usage.calls,
    rcu: usage.rcu,
    wcu: usage.wcu,
  };
}

/**
 * The family's handler, run inside a request usage of its own; its result gets the headers.
 * Every property of the wrapped handler (middy's `use`, the streaming marker) is kept. Returns
 * once every line the request logged is written (the logger loads on first use: shared/logger.ts).
 */
export function withRequestMetrics<H extends (...args: never[]) => unknown>(handler: H): H {
  const wrapped = function handleWithMetrics(...args: Parameters<H>) {
    return withRequestUsage(async (usage) => {
      const result = await handler(...args);
      if (config().requestLog) {
        // (event, context), or (event, responseStream, context) for a streamed response.
        const context = (args as unknown[]).slice(1).find((a) => !!a && typeof a === 'object' && 'api' in a) as ApiLambdaContext | undefined;
        logger.info('request', requestLogEntry(args[0] as ApiEvent, context, result, usage));
      }
      await logsWritten();
      return withHeaders(result, usage);
    });
  };
  // The wrapper takes the handler's arguments and has its properties: it is an H.
  return Object.assign(wrapped, handler);
}

/** The authentication middleware, its time (and DynamoDB time) recorded for Server-Timing. */
export function timedAuthentication(inner: Middleware): Middleware {
  const before = inner.before!;
  return {
    before: async function authenticateTimed(request) {
      const usage = currentUsage();
      if (!usage) return before(request);
      const started = performance.now();
      const dbBefore = usage.dbMsNow(started);
      try {
        return await before(request);
      } finally {
        const ended = performance.now();
        usage.authMs += ended - started;
        usage.authDbMs += usage.dbMsNow(ended) - dbBefore;
      }
    },
  };
}
