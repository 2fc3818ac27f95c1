/**
 * Rate limits (SPEC.md Limits, CONTRACT.md): fixed windows counted in the `limits` table with ONE
 * atomic UpdateItem per counter (ADD, the TTL set to the window's end, UPDATED_NEW returns the
 * count). Registered right after authenticate, so that every authenticated response — a scope
 * denial included — carries the headers (CONTRACT.md); a failed authentication is not counted.
 *
 * Subject of the general counter: the API key (RATE_LIMIT_API_KEY_PER_HOUR, 1000), else the
 * session's user (RATE_LIMIT_SESSION_PER_HOUR, 100), else the client IP
 * (RATE_LIMIT_ANONYMOUS_PER_HOUR, 300); windows of RATE_LIMIT_WINDOW_SECONDS (3600). A route that
 * declares `rateLimit` gets a second counter of its own for the same subject. A limit of 0 turns
 * that counter off. The health check and the docs (static documents) are never counted.
 *
 * Every counted response (errors included, via req.responseHeaders) carries X-RateLimit-Limit,
 * X-RateLimit-Remaining and X-RateLimit-Reset (Unix seconds) of the tightest counter; over a limit
 * → 429 RATE_LIMIT_EXCEEDED with Retry-After and retryAfter.
 *
 * Items: pk `RL#<subject>`, sk `W#<window seconds>#<window start, 12 digits>`, attribute `n`.
 * A key's windows are kept 24 hours past their end (TTL), which gives the key's requestsLast24h
 * as the sum of at most 24 small items (`keyRequestsLast24h`), read only when keys are listed.
 * If the counter cannot be written the request passes (fail open) and the failure is logged.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { recordApiKeyUse } from '../auth/api-keys.js';
import { config } from '../config.js';
import { db, tableName } from '../data/client.js';
import { RateLimitError } from '../errors.js';
import { logger } from '../logger.js';
import type { RouteRateLimit } from '../routes.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest } from './types.js';

const DAY_SECONDS = 24 * 3600;

export interface CounterSpec {
  /** `RL#` + this is the item's pk. */
  subject: string;
  limit: number;
  windowSeconds: number;
  /** Seconds the item outlives its window (usage history of keys). */
  keepSeconds: number;
}

export interface CounterState {
  limit: number;
  count: number;
  remaining: number;
  /** Unix seconds of the window's end. */
  reset: number;
}

export function windowStart(nowSeconds: number, windowSeconds: number): number {
  return Math.floor(nowSeconds / windowSeconds) * windowSeconds;
}

export function counterKey(subject: string, windowSeconds: number, start: number): { pk: string; sk: string } {
  return { pk: `RL#${subject}`, sk: `W#${windowSeconds}#${String(start).padStart(12, '0')}` };
}

export function apiKeySubject(keyId: string): string {
  return `k:${keyId}`;
}

/** The general counter of a request: the key, else the session's user, else the client IP. */
export function generalCounter(req: ApiRequest): CounterSpec {
  const { rateLimits } = config();
  const windowSeconds = rateLimits.windowSeconds;
  const auth = req.auth;
  if (auth?.type === 'api_key' && auth.keyId) {
    return { subject: apiKeySubject(auth.keyId), limit: rateLimits.apiKeyPerHour, windowSeconds, keepSeconds: DAY_SECONDS };
  }
  if (auth) return { subject: `u:${auth.user.id}`, limit: rateLimits.sessionPerHour, windowSeconds, keepSeconds: 0 };
  return { subject: `ip:${req.ip}`, limit: rateLimits.anonymousPerHour, windowSeconds, keepSeconds: 0 };
}

export interface RateLimitOptions {
  /** A limit of the request's own when the route table cannot know it (an entity's `rateLimit`). */
  rateLimitFor?: (req: ApiRequest) => RouteRateLimit | undefined;
}

/** The counters of a request: the general one, plus the route's own (or the family's) when declared. */
export function countersFor(req: ApiRequest, options: RateLimitOptions = {}): CounterSpec[] {
  const general = generalCounter(req);
  const counters = general.limit > 0 ? [general] : [];
  const own = req.route.rateLimit ?? options.rateLimitFor?.(req);
  if (own && own.limit > 0) {
    counters.push({ subject: `r:${own.name}#${general.subject}`, limit: own.limit, windowSeconds: own.windowSeconds, keepSeconds: 0 });
  }
  return counters;
}

/** One atomic UpdateItem: the count after this request. */
export async function increment(spec: CounterSpec, nowSeconds: number): Promise<CounterState> {
  const start = windowStart(nowSeconds, spec.windowSeconds);
  const reset = start + spec.windowSeconds;
  const { Attributes } = await db().send(
    new UpdateCommand({
      TableName: tableName('limits'),
      Key: counterKey(spec.subject, spec.windowSeconds, start),
      UpdateExpression: 'ADD #n :one SET expiresAt = :exp',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':one': 1, ':exp': reset + spec.keepSeconds },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const count = Number(Attributes?.n ?? 1);
  return { limit: spec.limit, count, remaining: Math.max(0, spec.limit - count), reset };
}

/** The counter the headers report: an exceeded one, else the one with the least left. */
export function tightest(states: CounterState[]): CounterState {
  return states.reduce((a, b) => {
    const aOver = a.count > a.limit;
    const bOver = b.count > b.limit;
    if (aOver !== bOver) return aOver ? a : b;
    if (aOver) return b.reset > a.reset ? b : a;
    return b.remaining < a.remaining ? b : a;
  });
}

export function isCounted(req: ApiRequest): boolean {
  return req.route.family !== 'health' && req.route.family !== 'docs';
}

export function rateLimit(options: RateLimitOptions & { now?: () => number } = {}): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  const now = options.now ?? Date.now;
  return {
    before: async function limitRate(request) {
      const req = request.context.api!;
      if (!isCounted(req)) return;
      const counters = countersFor(req, options);
      if (counters.length === 0) return;
      const nowMs = now();
      const nowSeconds = Math.floor(nowMs / 1000);
      let states: CounterState[];
      try {
        states = counters.length === 1 ? [await increment(counters[0], nowSeconds)] : await Promise.all(counters.map((c) => increment(c, nowSeconds)));
      } catch (error) {
        logger.warn('rate-limit counter unavailable; request passes', { requestId: req.requestId, error: (error as Error).name });
        return;
      }
      if (req.auth?.type === 'api_key' && req.auth.keyId) recordApiKeyUse(req.auth.keyId, nowMs);
      const shown = tightest(states);
      req.responseHeaders['X-RateLimit-Limit'] = String(shown.limit);
      req.responseHeaders['X-RateLimit-Remaining'] = String(shown.remaining);
      req.responseHeaders['X-RateLimit-Reset'] = String(shown.reset);
      if (shown.count > shown.limit) {
        throw new RateLimitError(Math.max(1, shown.reset - nowSeconds), shown.limit, shown.reset);
      }
    },
  };
}

/**
 * A key's requests in the windows that started within the last 24 hours (its counters are kept
 * that long): one Query of at most 24 items for hourly windows.
 */
export async function keyRequestsLast24h(keyId: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<number> {
  const windowSeconds = config().rateLimits.windowSeconds;
  const from = counterKey(apiKeySubject(keyId), windowSeconds, Math.max(0, nowSeconds - DAY_SECONDS + 1));
  const to = counterKey(apiKeySubject(keyId), windowSeconds, nowSeconds);
  let total = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName('limits'),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':pk': from.pk, ':from': from.sk, ':to': to.sk },
        ProjectionExpression: '#n',
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) total += Number(item.n ?? 0);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return total;
}
