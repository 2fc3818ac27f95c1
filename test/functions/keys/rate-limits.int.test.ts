/**
 * Rate limits through HTTP, on a second local server started with small limits (and its own
 * window length, so its counters are not shared with the main test server's), debug logging on:
 * the same server's output is searched for keys at the end.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';

const LIMITS = { key: 4, session: 3, anonymous: 3 };

let server: TestServer;
let tenant: TestTenant;
let user: TestUser;
const keysSeen: string[] = [];

beforeAll(async () => {
  server = await startServer({
    dynamoEndpoint: inject('dynamoEndpoint'),
    env: {
      RATE_LIMIT_API_KEY_PER_HOUR: String(LIMITS.key),
      RATE_LIMIT_SESSION_PER_HOUR: String(LIMITS.session),
      RATE_LIMIT_ANONYMOUS_PER_HOUR: String(LIMITS.anonymous),
      RATE_LIMIT_WINDOW_SECONDS: '3599',
      LOG_LEVEL: 'DEBUG',
    },
  });
  // Identities are made through the main server (same engine); sessions work on both.
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
});

afterAll(async () => {
  await server?.stop();
});

const on = (options: Parameters<typeof api>[2] = {}) => ({ ...options, baseUrl: server.url });

async function createKey(): Promise<{ id: string; key: string }> {
  const response = await api('POST', '/api/v1/api-keys', { cookie: tenant.admin.cookie, body: { name: 'limited', scopes: ['tasks:read'] } });
  expect(response.status).toBe(201);
  keysSeen.push(response.body.data.key);
  return response.body.data;
}

function rateHeaders(response: Awaited<ReturnType<typeof api>>) {
  return {
    limit: response.headers.get('x-ratelimit-limit'),
    remaining: response.headers.get('x-ratelimit-remaining'),
    reset: Number(response.headers.get('x-ratelimit-reset')),
  };
}

describe('per API key', () => {
  it('carries X-RateLimit-* on every counted response and answers 429 with Retry-After after the limit', async () => {
    const { key } = await createKey();
    const now = Math.floor(Date.now() / 1000);

    const responses = [];
    for (let i = 0; i < LIMITS.key + 1; i++) responses.push(await api('GET', '/api/v1/users/me', on({ apiKey: key })));

    expect(responses.slice(0, LIMITS.key).map((r) => r.status)).toEqual(Array(LIMITS.key).fill(200));
    expect(responses.slice(0, LIMITS.key).map((r) => rateHeaders(r).remaining)).toEqual(['3', '2', '1', '0']);
    for (const r of responses) {
      expect(rateHeaders(r).limit).toBe(String(LIMITS.key));
      expect(rateHeaders(r).reset).toBeGreaterThan(now);
      expect(rateHeaders(r).reset).toBeLessThanOrEqual(now + 3599 + 1);
    }
    const limited = responses[LIMITS.key];
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
    expect(limited.body.retryAfter).toBeGreaterThan(0);
    expect(limited.headers.get('retry-after')).toBe(String(limited.body.retryAfter));
    expect(rateHeaders(limited).remaining).toBe('0');
  });

  it('counts each key on its own', async () => {
    const { key } = await createKey();

    const response = await api('GET', '/api/v1/users/me', on({ apiKey: key }));

    expect(response.status).toBe(200);
    expect(rateHeaders(response).remaining).toBe(String(LIMITS.key - 1));
  });

  it('puts the headers on every authenticated error too (a scope denial, a 404), but a failed authentication is not counted', async () => {
    const { key } = await createKey();

    const denied = await api('DELETE', '/api/v1/tasks/tsk_unknown', on({ apiKey: key }));
    const missing = await api('GET', '/api/v1/tasks/tsk_unknown', on({ apiKey: key }));
    const unauthenticated = await api('GET', '/api/v1/users/me', on({ apiKey: `sk_live_${'U'.repeat(40)}` }));

    expect(denied.status).toBe(403);
    expect(rateHeaders(denied).remaining).toBe(String(LIMITS.key - 1));
    expect(missing.status).toBe(404);
    expect(rateHeaders(missing).remaining).toBe(String(LIMITS.key - 2));
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('per session user', () => {
  it('limits a user across sessions to RATE_LIMIT_SESSION_PER_HOUR', async () => {
    const statuses = [];
    for (let i = 0; i < LIMITS.session + 1; i++) statuses.push((await api('GET', '/api/v1/users/me', on({ cookie: user.cookie }))).status);

    expect(statuses).toEqual([200, 200, 200, 429]);
    const other = await api('GET', '/api/v1/users/me', on({ cookie: tenant.admin.cookie }));
    expect(other.status).toBe(200);
    // The other caller is the tenant's admin: an admin's session has the admins' limit.
    expect(rateHeaders(other).limit).toBe('5000');
  });
});

describe('anonymous', () => {
  it('limits anonymous callers per IP and never counts the health check', async () => {
    const health = [];
    for (let i = 0; i < LIMITS.anonymous + 2; i++) health.push(await api('GET', '/api/health', on()));
    const anonymous = [];
    for (let i = 0; i < LIMITS.anonymous + 1; i++) anonymous.push(await api('POST', '/api/v1/auth/login', on({ body: {} })));

    expect(health.map((r) => r.status)).toEqual(Array(LIMITS.anonymous + 2).fill(200));
    expect(health.every((r) => r.headers.get('x-ratelimit-limit') === null)).toBe(true);
    expect(anonymous.slice(0, LIMITS.anonymous).every((r) => r.status !== 429 && r.headers.get('x-ratelimit-limit') === String(LIMITS.anonymous))).toBe(true);
    expect(anonymous[LIMITS.anonymous].status).toBe(429);
    expect(anonymous[LIMITS.anonymous].headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('logs', () => {
  it('never contain a key, valid or not', async () => {
    const { key } = await createKey();
    await api('GET', '/api/v1/users/me', on({ apiKey: key }));
    const bogus = `sk_live_${'Q'.repeat(40)}`;
    keysSeen.push(bogus);
    await api('GET', '/api/v1/users/me', on({ apiKey: bogus }));
    await api('GET', '/api/v1/users/me', on({ headers: { 'X-API-Key': bogus } }));

    const output = server.output();
    for (const seen of keysSeen) {
      expect(output).not.toContain(seen);
      expect(output).not.toContain(seen.slice(12));
    }
  });
});
