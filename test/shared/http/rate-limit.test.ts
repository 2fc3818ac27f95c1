import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearApiKeyCache, hashApiKey } from '../../../shared/auth/api-keys.js';
import { resetConfig } from '../../../shared/config.js';
import { RateLimitError } from '../../../shared/errors.js';
import {
  counterKey,
  countersFor,
  keyRequestsLast24h,
  rateLimit,
  tightest,
  windowStart,
} from '../../../shared/http/rate-limit.js';
import { createApiHandler } from '../../../shared/http/stack.js';
import type { ApiRequest } from '../../../shared/http/types.js';
import type { Route } from '../../../shared/routes.js';
import { lambdaContext, parsed, proxyEvent } from '../../support/events.js';

const dynamo = mockClient(DynamoDBDocumentClient);

const route = (overrides: Partial<Route> = {}): Route => ({ method: 'GET', path: '/api/v1/things', family: 'entities', auth: 'required', ...overrides });
const user = { id: 'usr_1', email: 'u@test.local', role: 'user' as const };

function req(overrides: Partial<ApiRequest> = {}): ApiRequest {
  return { ip: '203.0.113.9', route: route(), responseHeaders: {}, requestId: 'r1', ...overrides } as ApiRequest;
}

/** Counts per item key, like the table would. */
function countingTable(): Map<string, number> {
  const counts = new Map<string, number>();
  dynamo.on(UpdateCommand).callsFake((input: { Key: { pk: string; sk: string } }) => {
    const id = `${input.Key.pk}|${input.Key.sk}`;
    counts.set(id, (counts.get(id) ?? 0) + 1);
    return { Attributes: { n: counts.get(id) } };
  });
  return counts;
}

async function run(request: ApiRequest, now = 1_700_000_000_000): Promise<void> {
  await rateLimit({ now: () => now }).before!({ context: { api: request } } as never);
}

beforeEach(() => {
  dynamo.reset();
  clearApiKeyCache();
  resetConfig();
});

afterEach(() => {
  for (const name of ['RATE_LIMIT_SESSION_PER_HOUR', 'RATE_LIMIT_WINDOW_SECONDS', 'RATE_LIMIT_ANONYMOUS_PER_HOUR', 'RATE_LIMIT_API_KEY_PER_HOUR']) delete process.env[name];
  resetConfig();
});

describe('windows and counters', () => {
  it('aligns fixed windows to their length', () => {
    expect(windowStart(7199, 3600)).toBe(3600);
    expect(windowStart(7200, 3600)).toBe(7200);
    expect(counterKey('k:key_1', 3600, 7200)).toEqual({ pk: 'RL#k:key_1', sk: 'W#3600#000000007200' });
  });

  it('counts a key per key, a session per user, anyone else per IP, with their limits', () => {
    expect(countersFor(req({ auth: { type: 'api_key', keyId: 'key_1', user, tenantId: 't', scopes: [] } }))).toEqual([
      { subject: 'k:key_1', limit: 1000, windowSeconds: 3600, keepSeconds: 86400 },
    ]);
    expect(countersFor(req({ auth: { type: 'session', user, tenantId: 't', scopes: [] } }))).toEqual([
      { subject: 'u:usr_1', limit: 100, windowSeconds: 3600, keepSeconds: 0 },
    ]);
    expect(countersFor(req())).toEqual([{ subject: 'ip:203.0.113.9', limit: 300, windowSeconds: 3600, keepSeconds: 0 }]);
  });

  it('takes limits and the window from the environment', () => {
    process.env.RATE_LIMIT_SESSION_PER_HOUR = '5';
    process.env.RATE_LIMIT_WINDOW_SECONDS = '60';
    resetConfig();

    expect(countersFor(req({ auth: { type: 'session', user, tenantId: 't', scopes: [] } }))[0]).toMatchObject({ limit: 5, windowSeconds: 60 });
  });

  it("adds the route's own counter for the same subject", () => {
    const counters = countersFor(req({ route: route({ rateLimit: { name: 'ai', limit: 20, windowSeconds: 3600 } }) }));

    expect(counters.map((c) => [c.subject, c.limit])).toEqual([
      ['ip:203.0.113.9', 300],
      ['r:ai#ip:203.0.113.9', 20],
    ]);
  });

  it('reports the counter with the least left, or the exceeded one', () => {
    const a = { limit: 100, count: 10, remaining: 90, reset: 10 };
    const b = { limit: 20, count: 15, remaining: 5, reset: 20 };
    const over = { limit: 20, count: 21, remaining: 0, reset: 30 };
    expect(tightest([a, b])).toBe(b);
    expect(tightest([a, over])).toBe(over);
  });
});

describe('rateLimit middleware', () => {
  it('makes one atomic UpdateItem: ADD, TTL at the window end, UPDATED_NEW', async () => {
    countingTable();
    const request = req();

    await run(request, 1_700_000_000_000);

    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0].args[0].input;
    const start = windowStart(1_700_000_000, 3600);
    expect(input).toMatchObject({
      TableName: 'Limits',
      Key: counterKey('ip:203.0.113.9', 3600, start),
      UpdateExpression: 'ADD #n :one SET expiresAt = :exp',
      ExpressionAttributeValues: { ':one': 1, ':exp': start + 3600 },
      ReturnValues: 'UPDATED_NEW',
    });
    expect(request.responseHeaders).toEqual({ 'X-RateLimit-Limit': '300', 'X-RateLimit-Remaining': '299', 'X-RateLimit-Reset': String(start + 3600) });
  });

  it("keeps a key's windows 24 hours past their end (usage history)", async () => {
    countingTable();

    await run(req({ auth: { type: 'api_key', keyId: 'key_1', user, tenantId: 't', scopes: [] } }), 1_700_000_000_000);

    const start = windowStart(1_700_000_000, 3600);
    expect(dynamo.commandCalls(UpdateCommand)[0].args[0].input.ExpressionAttributeValues).toEqual({ ':one': 1, ':exp': start + 3600 + 86400 });
  });

  it('answers 429 with Retry-After once the limit is passed, and keeps the headers', async () => {
    process.env.RATE_LIMIT_ANONYMOUS_PER_HOUR = '2';
    resetConfig();
    countingTable();
    const now = 1_700_000_000_000;
    const reset = windowStart(1_700_000_000, 3600) + 3600;

    await run(req(), now);
    await run(req(), now);
    const third = req();
    const error = await run(third, now).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RateLimitError);
    const e = error as RateLimitError;
    expect(e.status).toBe(429);
    expect(e.headers['Retry-After']).toBe(String(reset - 1_700_000_000));
    expect(e.extra.retryAfter).toBe(reset - 1_700_000_000);
    expect(third.responseHeaders).toEqual({ 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(reset) });
  });

  it('starts a new count with a new window', async () => {
    process.env.RATE_LIMIT_ANONYMOUS_PER_HOUR = '1';
    resetConfig();
    countingTable();

    await run(req(), 1_700_000_000_000);
    await expect(run(req(), 1_700_000_000_000)).rejects.toBeInstanceOf(RateLimitError);
    await run(req(), 1_700_000_000_000 + 3600_000);
  });

  it("counts a route's own limit as a second counter and refuses on it", async () => {
    countingTable();
    const limited = () => req({ route: route({ rateLimit: { name: 'gen', limit: 1, windowSeconds: 3600 } }) });

    const first = limited();
    await run(first);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
    expect(first.responseHeaders['X-RateLimit-Limit']).toBe('1');
    expect(first.responseHeaders['X-RateLimit-Remaining']).toBe('0');

    await expect(run(limited())).rejects.toBeInstanceOf(RateLimitError);
    await run(req());
  });

  it('never counts the health check', async () => {
    countingTable();
    const health = req({ route: route({ path: '/api/health', family: 'health', auth: 'public' }) });

    await run(health);

    expect(dynamo.calls()).toHaveLength(0);
    expect(health.responseHeaders).toEqual({});
  });

  it('lets the request through when the counter cannot be written', async () => {
    dynamo.on(UpdateCommand).rejects(new Error('down'));
    const request = req();

    await run(request);

    expect(request.responseHeaders).toEqual({});
  });
});

describe('keyRequestsLast24h', () => {
  it("sums the key's windows that started in the last 24 hours, in one query", async () => {
    dynamo.on(QueryCommand).resolves({ Items: [{ n: 3 }, { n: 4 }] });

    const total = await keyRequestsLast24h('key_1', 1_700_000_000);

    expect(total).toBe(7);
    const input = dynamo.commandCalls(QueryCommand)[0].args[0].input;
    expect(input.ExpressionAttributeValues).toEqual({
      ':pk': 'RL#k:key_1',
      ':from': counterKey('k:key_1', 3600, 1_700_000_000 - 86400 + 1).sk,
      ':to': counterKey('k:key_1', 3600, 1_700_000_000).sk,
    });
  });
});

describe('in the stack', () => {
  const KEY = `sk_live_${'x'.repeat(40)}`;

  function storeKey(): void {
    dynamo.on(GetCommand).callsFake((input: { Key: { pk: string } }) => {
      if (input.Key.pk === `APIKEY#${hashApiKey(KEY)}`) {
        return { Item: { pk: input.Key.pk, sk: 'APIKEY', id: 'key_1', scopes: ['read'], status: 'active', keyExpiresAt: null, userId: 'usr_1', tenantId: 'ten_1' } };
      }
      if (input.Key.pk === 'USER#usr_1') return { Item: { id: 'usr_1', tenantId: 'ten_1', email: 'u@test.local', role: 'user' } };
      return {};
    });
    dynamo.on(PutCommand).resolves({});
  }

  const handler = createApiHandler({ 'GET /api/v1/users/me': async (r) => ({ data: { id: r.auth!.user.id } }) });

  it('puts the headers on every counted response and a 429 in the error envelope', async () => {
    process.env.RATE_LIMIT_API_KEY_PER_HOUR = '1';
    resetConfig();
    storeKey();
    countingTable();
    const event = () => proxyEvent({ method: 'GET', path: '/api/v1/users/me', headers: { Authorization: `Bearer ${KEY}` } });

    const ok = parsed(await handler(event(), lambdaContext()));
    const limited = parsed(await handler(event(), lambdaContext()));

    expect(ok.status).toBe(200);
    expect(ok.headers['X-RateLimit-Limit']).toBe('1');
    expect(ok.headers['X-RateLimit-Remaining']).toBe('0');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
    expect(limited.headers['Retry-After']).toBe(String(limited.body.retryAfter));
    expect(limited.headers['X-RateLimit-Remaining']).toBe('0');
    expect(Number(limited.headers['X-RateLimit-Reset'])).toBeGreaterThan(Date.now() / 1000);
  });

  it('does a warm key request with no read and exactly one write', async () => {
    storeKey();
    countingTable();
    const event = () => proxyEvent({ method: 'GET', path: '/api/v1/users/me', headers: { 'X-API-Key': KEY } });
    await handler(event(), lambdaContext());
    dynamo.resetHistory();

    const result = parsed(await handler(event(), lambdaContext()));

    expect(result.status).toBe(200);
    expect(dynamo.calls().map((c) => c.args[0].constructor.name)).toEqual(['UpdateCommand']);
  });
});
