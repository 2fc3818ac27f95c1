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
 * that counter off. The health check, the docs and the dashboard's files (static documents) are never counted.
 *
 * Every counted response (errors included, via req.responseHeaders) carries X-RateLimit-Limit,
 * X-RateLimit-Remaining and X-RateLimit-Reset (Unix seconds) of the tightest counter; over a limit
 * → 429 RATE_LIMIT_EXCEEDED with Retry-After and retryAfter.
 *
 * Items: pk `RL#<subject>`, sk `W#<window seconds>#<window start, 12 digits>`, attribute `n`.
 * A key's windows are kept 24 hours past their end (TTL), which gives the key's requestsLast24h
 * as the sum of at most 24 small items (`keyRequestsLast24h`), read only when keys are listed.
 * If the counter cannot be written the request passes (fail open) and the failure is logged.
 *
 * Leasing: `n` counts tokens handed out, not requests. A container takes tokens in blocks with ONE
 * conditional UpdateItem (`ADD n :k` if `n <= limit - k`; when fewer than k are left, exactly the
 * rest), then admits requests from its block without writing. So a request costs 1/k of a write
 * (k = min(RATE_LIMIT_LEASE_BLOCK, (limit − n) / 20), at least 1: 10 for a key at 1,000 an hour,
 * 5 then fewer for a session user at 100), and no more than `limit` requests are ever admitted in
 * a window across all containers, since every admitted request holds a token that was counted. In
 * one container (the local runtime) the count is exact: the headers and the first refused request
 * are those of a per-request counter. Across containers a caller may be refused early by at most
 * (k − 1) tokens per other warm container still holding part of a block (they are never handed
 * back), and X-RateLimit-Remaining counts those tokens as spent.
 * A batch leases its sub-requests' tokens with one update before they run.
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
import { isCountedFamily } from '../core-routes.js';

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

/** Tokens this container holds for one counter's window. */
interface Lease {
  subject: string;
  limit: number;
  reset: number;
  /** Tokens this container took for the window, in total. */
  leased: number;
  /** Of those, tokens spent on admitted requests. */
  used: number;
  /** `n` of the item as last seen (tokens taken by every container). */
  counted: number;
  /** The window has no token left. */
  exhausted: boolean;
  pending?: Promise<void>;
}

const leases = new Map<string, Lease>();

/** A block is at most this fraction (1/n) of the tokens the window has left. */
export const LEASE_SHARE = 20;

/**
 * Tokens taken per update (1 = a write per request): a twentieth of what the window has left as
 * last seen (`counted` taken by every container), at most RATE_LIMIT_LEASE_BLOCK, at least 1. So
 * the tokens a container can strand (take and never spend) are at most 5 % of the window, and
 * fewer as the window runs out: near the limit every token is taken on its own.
 */
export function leaseBlock(limit: number, counted = 0): number {
  return Math.max(1, Math.min(config().rateLimits.leaseBlock, Math.floor((limit - counted) / LEASE_SHARE)));
}

/** Forgets every lease (tests; a new container). */
export function clearLeases(): void {
  leases.clear();
}

function leaseOf(spec: CounterSpec, start: number, nowSeconds: number): Lease {
  const key = `${spec.subject}|${spec.windowSeconds}|${start}`;
  let lease = leases.get(key);
  if (!lease) {
    for (const [k, old] of leases) if (old.reset <= nowSeconds) leases.delete(k);
    lease = { subject: spec.subject, limit: spec.limit, reset: start + spec.windowSeconds, leased: 0, used: 0, counted: 0, exhausted: false };
    leases.set(key, lease);
  }
  return lease;
}

function isConditionFailure(error: unknown): error is { name: string; Item?: Record<string, unknown> } {
  return (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** `n` of the item returned with a failed condition (ALL_OLD, in attribute-value form). */
function countOfFailure(error: { Item?: Record<string, unknown> }): number {
  const n = error.Item?.n as { N?: string } | number | undefined;
  return Number(typeof n === 'object' ? n?.N ?? 0 : n ?? 0);
}

/**
 * Takes up to `want` tokens with ONE conditional ADD (never past the limit); when fewer are left,
 * takes exactly what is left (one more update); none left → the lease is exhausted.
 */
async function acquire(lease: Lease, spec: CounterSpec, start: number, want: number): Promise<void> {
  let take = Math.max(1, Math.min(want, spec.limit));
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const { Attributes } = await db().send(
        new UpdateCommand({
          TableName: tableName('limits'),
          Key: counterKey(spec.subject, spec.windowSeconds, start),
          UpdateExpression: 'ADD #n :k SET expiresAt = :exp',
          ConditionExpression: 'attribute_not_exists(#n) OR #n <= :max',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':k': take, ':max': spec.limit - take, ':exp': lease.reset + spec.keepSeconds },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      lease.leased += take;
      lease.counted = Number(Attributes?.n ?? take);
      return;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = countOfFailure(error);
      lease.counted = Math.max(lease.counted, current);
      if (current >= spec.limit) {
        lease.exhausted = true;
        return;
      }
      take = spec.limit - current;
    }
  }
  // Other containers kept taking the rest first: the window is as good as spent.
  lease.exhausted = true;
}

function stateOf(lease: Lease, admitted: boolean): CounterState {
  if (!admitted) return { limit: lease.limit, count: lease.limit + 1, remaining: 0, reset: lease.reset };
  // Tokens other containers hold unspent count as spent: exact when this container is the only one.
  const count = Math.min(lease.limit, lease.counted - (lease.leased - lease.used));
  return { limit: lease.limit, count, remaining: Math.max(0, lease.limit - count), reset: lease.reset };
}

/** Makes sure this container holds `count` unspent tokens of the counter (one update when it does not). */
async function holdTokens(spec: CounterSpec, nowSeconds: number, count: number): Promise<Lease> {
  const start = windowStart(nowSeconds, spec.windowSeconds);
  const lease = leaseOf(spec, start, nowSeconds);
  while (lease.leased - lease.used < count && !lease.exhausted) {
    if (lease.pending) {
      await lease.pending;
      continue;
    }
    const want = Math.max(leaseBlock(spec.limit, lease.counted), count - (lease.leased - lease.used));
    lease.pending = acquire(lease, spec, start, want).finally(() => {
      lease.pending = undefined;
    });
    await lease.pending;
  }
  return lease;
}

/** Admits one request on a counter: a token from this container's lease, leasing a block when none is left. */
export async function increment(spec: CounterSpec, nowSeconds: number): Promise<CounterState> {
  for (;;) {
    const lease = await holdTokens(spec, nowSeconds, 1);
    // Checked and spent without an await between: concurrent requests woken by the same lease
    // update must not all spend its one token.
    if (lease.leased - lease.used >= 1) {
      lease.used += 1;
      return stateOf(lease, true);
    }
    if (lease.exhausted) return stateOf(lease, false);
  }
}

/**
 * Leases, with one update, the tokens `count` requests of this caller will spend on the general
 * counter (a batch's sub-requests, each still counted when it runs). Fails open.
 */
export async function leaseAhead(req: ApiRequest, count: number, nowMs = Date.now()): Promise<void> {
  // RATE_LIMIT_LEASE_BLOCK=1 is one write per request, a batch's sub-requests included.
  if (!isCounted(req) || count < 1 || config().rateLimits.leaseBlock === 1) return;
  const general = generalCounter(req);
  if (general.limit <= 0) return;
  try {
    await holdTokens(general, Math.floor(nowMs / 1000), Math.min(count, general.limit));
  } catch (error) {
    logger.warn('rate-limit lease unavailable', { requestId: req.requestId, error: (error as Error).name });
  }
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
  return isCountedFamily(req.route.family);
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
  // Tokens this container leased but has not spent were not requests (other containers' are not known here).
  const subject = apiKeySubject(keyId);
  for (const lease of leases.values()) if (lease.subject === subject) total -= lease.leased - lease.used;
  return Math.max(0, total);
}
