/**
 * Rate limits (SPEC.md Limits, CONTRACT.md): fixed windows counted in the `limits` table with ONE
 * atomic UpdateItem per counter (ADD, the TTL set to the window's end, UPDATED_NEW returns the
 * count). Registered right after authenticate, so that every authenticated response — a scope
 * denial included — carries the headers (CONTRACT.md); a failed authentication is not counted.
 *
 * Subject of the general counter: the API key (RATE_LIMIT_API_KEY_PER_HOUR, 1000), else the
 * session's user (RATE_LIMIT_SESSION_PER_HOUR, 100; an admin's session, the console's user,
 * RATE_LIMIT_ADMIN_SESSION_PER_HOUR, 5,000: config.ts sessionLimit), else the client IP
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
import { recordApiKeyUse } from '../auth/index.js';
import { config, sessionLimit } from '../config.js';
import { apiKeySubject, DAY_SECONDS, holdTokens, increment, tightest, type CounterSpec, type CounterState } from '../data/index.js';
import { RateLimitError } from '../errors.js';
import { logger } from '../logger.js';
import type { RouteRateLimit } from '../routes.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest } from './types.js';
import { isCountedFamily } from '../core-routes.js';

export {
  apiKeySubject,
  clearLeases,
  counterKey,
  increment,
  keyRequestsLast24h,
  LEASE_SHARE,
  leaseBlock,
  tightest,
  windowStart,
  type CounterSpec,
  type CounterState,
} from '../data/index.js';

/**
 * The general counter of a request: the key, else an identity provider's user (at the key's rate:
 * their tokens are programs' credentials as often as people's), else the session's user, else the
 * client IP.
 */
export function generalCounter(req: ApiRequest): CounterSpec {
  const { rateLimits } = config();
  const windowSeconds = rateLimits.windowSeconds;
  const auth = req.auth;
  if (auth?.type === 'api_key' && auth.keyId) {
    return { subject: apiKeySubject(auth.keyId), limit: rateLimits.apiKeyPerHour, windowSeconds, keepSeconds: DAY_SECONDS };
  }
  if (auth?.type === 'oidc') return { subject: `o:${auth.user.id}`, limit: rateLimits.apiKeyPerHour, windowSeconds, keepSeconds: 0 };
  if (auth) return { subject: `u:${auth.user.id}`, limit: sessionLimit(rateLimits, auth.user.role), windowSeconds, keepSeconds: 0 };
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
