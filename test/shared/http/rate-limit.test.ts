import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearApiKeyCache, hashApiKey } from '../../../shared/auth/api-keys.js';
import { resetConfig } from '../../../shared/config.js';
import { RateLimitError } from '../../../shared/errors.js';
import {
  clearLeases,
  counterKey,
  countersFor,
  keyRequestsLast24h,
  leaseAhead,
  leaseBlock,
  rateLimit,
  tightest,
  windowStart,
} from '../../../shared/http/rate-limit.js';
import { createApiHandler } from '../../../shared/http/stack.js';
import type { ApiRequest } from '../../../shared/http/types.js';
import type { Route } from '../../../shared/routes.js';
import { lambdaContext, parsed, proxyEvent } from '../../support/events.js';

const dynamo = mockClient(DynamoDBDocumentClient);

const route = (overrides: Partial<Route> = {}): Route => ({ method: 'GET', path: '/api/v1/things', operation: 'listThings', family: 'entities', auth: 'required', ...overrides });
const user = { id: 'usr_1', email: 'u@test.local', role: 'user' as const };

function req(overrides: Partial<ApiRequest> = {}): ApiRequest {
  return { ip: '203.0.113.9', route: route(), responseHeaders: {}, requestId: 'r1', ...overrides } as ApiRequest;
}

/** Counts per item key, like the table would: ADD :k when n <= :max, else ConditionalCheckFailed with the item. */
function countingTable(): Map<string, number> {
  const counts = new Map<string, number>();
  dynamo.on(UpdateCommand).callsFake((input: { Key: { pk: string; sk: string }; ExpressionAttributeValues: Record<string, number> }) => {
    const id = `${input.Key.pk}|${input.Key.sk}`;
    const n = counts.get(id);
    if (n !== undefined && n > input.ExpressionAttributeValues[':max']) {
      throw Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException', Item: { n: { N: String(n) } } });
    }
    counts.set(id, (n ?? 0) + input.ExpressionAttributeValues[':k']);
    return { Attributes: { n: counts.get(id) } };
  });
  return counts;
}

async function run(request: ApiRequest, now = 1_700_000_000_000): Promise<void> {
  await rateLimit({ now: () => now }).before!({ context: { api: request } } as never);
}

beforeEach(() => {
  dynamo.reset();
  clearLeases();
  clearApiKeyCache();
  resetConfig();
});

afterEach(() => {
  for (const name of ['RATE_LIMIT_SESSION_PER_HOUR', 'RATE_LIMIT_ADMIN_SESSION_PER_HOUR', 'RATE_LIMIT_WINDOW_SECONDS', 'RATE_LIMIT_ANONYMOUS_PER_HOUR', 'RATE_LIMIT_API_KEY_PER_HOUR', 'RATE_LIMIT_LEASE_BLOCK']) delete process.env[name];
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

  it("gives an admin's session (a tenant's admin, the platform operator) the admins' limit, 5,000 by default", () => {
    const admin = { ...user, id: 'usr_admin', role: 'admin' as const };

    expect(countersFor(req({ auth: { type: 'session', user: admin, tenantId: 't', scopes: [] } }))).toEqual([
      { subject: 'u:usr_admin', limit: 5000, windowSeconds: 3600, keepSeconds: 0 },
    ]);
    expect(countersFor(req({ auth: { type: 'api_key', keyId: 'key_2', user: admin, tenantId: 't', scopes: [] } }))[0].limit).toBe(1000);
  });

  it("never holds an admin tighter than a user: the higher limit, and off when either is off", () => {
    const admin = { type: 'session' as const, user: { ...user, role: 'admin' as const }, tenantId: 't', scopes: [] };
    const limitWith = (session: string, adminSession: string) => {
      process.env.RATE_LIMIT_SESSION_PER_HOUR = session;
      process.env.RATE_LIMIT_ADMIN_SESSION_PER_HOUR = adminSession;
      resetConfig();
      return countersFor(req({ auth: admin }))[0]?.limit ?? 'off';
    };

    expect(limitWith('100', '300')).toBe(300);
    expect(limitWith('100000', '5000')).toBe(100000);
    expect(limitWith('100', '0')).toBe('off');
    expect(limitWith('0', '5000')).toBe('off');
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
  it('leases a block of tokens with one conditional ADD (TTL at the window end), then admits without writing', async () => {
    countingTable();
    const start = windowStart(1_700_000_000, 3600);

    const first = req();
    await run(first, 1_700_000_000_000);
    const second = req();
    await run(second, 1_700_000_000_000);

    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0].args[0].input).toMatchObject({
      TableName: 'Limits',
      Key: counterKey('ip:203.0.113.9', 3600, start),
      UpdateExpression: 'ADD #n :k SET expiresAt = :exp',
      ConditionExpression: 'attribute_not_exists(#n) OR #n <= :max',
      ExpressionAttributeValues: { ':k': 10, ':max': 290, ':exp': start + 3600 },
      ReturnValues: 'UPDATED_NEW',
    });
    // Exact in one container: the headers are those of a per-request counter.
    expect(first.responseHeaders).toEqual({ 'X-RateLimit-Limit': '300', 'X-RateLimit-Remaining': '299', 'X-RateLimit-Reset': String(start + 3600) });
    expect(second.responseHeaders['X-RateLimit-Remaining']).toBe('298');
  });

  it('sizes blocks at a twentieth of what the window has left, at most RATE_LIMIT_LEASE_BLOCK, at least 1', () => {
    expect(leaseBlock(100)).toBe(5);
    expect(leaseBlock(100, 60)).toBe(2);
    expect(leaseBlock(100, 85)).toBe(1);
    expect(leaseBlock(100, 100)).toBe(1);
    expect(leaseBlock(20)).toBe(1);
    expect(leaseBlock(300)).toBe(10);
    expect(leaseBlock(1000)).toBe(10);
    expect(leaseBlock(1000, 900)).toBe(5);
    expect(leaseBlock(1_000_000)).toBe(10);
    process.env.RATE_LIMIT_LEASE_BLOCK = '1';
    resetConfig();
    expect(leaseBlock(1000)).toBe(1);
  });

  it('never admits more than the limit across containers; a container takes exactly what is left', async () => {
    process.env.RATE_LIMIT_API_KEY_PER_HOUR = '1000';
    resetConfig();
    const counts = countingTable();
    const key = () => req({ auth: { type: 'api_key', keyId: 'key_9', user, tenantId: 't', scopes: [] } });
    let admitted = 0;
    let refused = 0;
    // Three "containers" (the lease map cleared between them would lose tokens: here they take turns
    // on one table, each forgetting its leases, as separate containers would not see them).
    for (let container = 0; container < 3; container++) {
      clearLeases();
      for (let i = 0; i < 400; i++) {
        await run(key()).then(() => admitted++, () => refused++);
      }
    }
    expect(admitted).toBeLessThanOrEqual(1000);
    expect(admitted).toBeGreaterThanOrEqual(1000 - 2 * 9);
    expect(refused).toBe(1200 - admitted);
    expect([...counts.values()][0]).toBe(1000);
  });

  it('a session user at 100 an hour: about a quarter of a write per request at first, and never more than the limit across containers', async () => {
    process.env.RATE_LIMIT_SESSION_PER_HOUR = '100';
    resetConfig();
    const counts = countingTable();
    const session = () => req({ auth: { type: 'session', user, tenantId: 't', scopes: [] } });
    for (let i = 0; i < 20; i++) await run(session());
    expect(dynamo.commandCalls(UpdateCommand).length).toBeLessThanOrEqual(6);

    let admitted = 20;
    for (let container = 0; container < 3; container++) {
      clearLeases();
      for (let i = 0; i < 60; i++) await run(session()).then(() => admitted++, () => undefined);
    }
    expect(admitted).toBeLessThanOrEqual(100);
    // Stranded: at most k − 1 (k ≤ 5) by each container that stopped.
    expect(admitted).toBeGreaterThanOrEqual(100 - 3 * 4);
    expect([...counts.values()][0]).toBe(100);
  });

  it('admits exactly the limit when requests of one container arrive together', async () => {
    // Arrange: a limit too small for blocks (k = 1), so every token needs its own update.
    process.env.RATE_LIMIT_SESSION_PER_HOUR = '20';
    resetConfig();
    countingTable();
    const session = () => req({ auth: { type: 'session', user, tenantId: 't', scopes: [] } });
    // Act: 25 requests at once, all waiting on the same lease updates.
    const outcomes = await Promise.allSettled(Array.from({ length: 25 }, () => run(session())));
    // Assert
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(20);
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(5);
  });

  it("keeps a key's windows 24 hours past their end (usage history)", async () => {
    countingTable();

    await run(req({ auth: { type: 'api_key', keyId: 'key_1', user, tenantId: 't', scopes: [] } }), 1_700_000_000_000);

    const start = windowStart(1_700_000_000, 3600);
    expect(dynamo.commandCalls(UpdateCommand)[0].args[0].input.ExpressionAttributeValues).toEqual({ ':k': 10, ':max': 990, ':exp': start + 3600 + 86400 });
  });

  it("leases a batch's tokens with one update", async () => {
    countingTable();
    const auth = { type: 'api_key' as const, keyId: 'key_2', user, tenantId: 't', scopes: [] };

    await leaseAhead(req({ auth }), 20, 1_700_000_000_000);
    for (let i = 0; i < 20; i++) await run(req({ auth }), 1_700_000_000_000);

    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0].args[0].input.ExpressionAttributeValues).toMatchObject({ ':k': 20 });
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
    const request = req({ ip: '198.51.100.7' });

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

  const handler = createApiHandler({ getMe: async (r) => ({ data: { id: r.auth!.user.id } }) });

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

  it('does a warm key request with no read and a tenth of a write', async () => {
    storeKey();
    countingTable();
    const event = () => proxyEvent({ method: 'GET', path: '/api/v1/users/me', headers: { 'X-API-Key': KEY } });
    await handler(event(), lambdaContext());
    dynamo.resetHistory();

    for (let i = 0; i < 10; i++) expect(parsed(await handler(event(), lambdaContext())).status).toBe(200);

    expect(dynamo.calls().map((c) => c.args[0].constructor.name)).toEqual(['UpdateCommand']);
  });
});
