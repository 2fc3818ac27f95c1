/**
 * POST /api/v1/batch through HTTP on DynamoDB Local: order, per-request statuses, the limit of
 * 20, nested batches, authorisation as the caller, rate counting and idempotent retries.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, sessionCookieOf } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';

interface SubResponse {
  id: string;
  status: number;
  body: any;
}

let tenant: TestTenant;
let user: TestUser;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
});

function batch(requests: unknown[], auth: { cookie?: string; apiKey?: string; headers?: Record<string, string>; baseUrl?: string }) {
  return api<{ success: boolean; responses: SubResponse[] }>('POST', '/api/v1/batch', { ...auth, body: { requests } });
}

async function createKey(cookie: string, scopes: string[]): Promise<string> {
  const response = await api('POST', '/api/v1/api-keys', { cookie, body: { name: `batch-${randomUUID()}`, scopes } });
  expect(response.status, response.text).toBe(201);
  return response.body.data.key;
}

describe('POST /api/v1/batch', () => {
  it('runs the sub-requests in order: a read sees the change made before it', async () => {
    const name = `Renamed ${randomUUID().slice(0, 8)}`;

    const response = await batch(
      [
        { id: 'before', method: 'GET', path: '/users/me' },
        { id: 'rename', method: 'PATCH', path: '/users/me', body: { name } },
        { id: 'after', method: 'GET', path: '/users/me' },
      ],
      { cookie: user.cookie },
    );

    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(response.body.responses.map((r) => [r.id, r.status])).toEqual([
      ['before', 200],
      ['rename', 200],
      ['after', 200],
    ]);
    expect(response.body.responses[0].body.data.name).not.toBe(name);
    expect(response.body.responses[2].body).toMatchObject({ success: true, data: { id: user.id, name } });
  });

  it('gives each sub-request its own status and body; failures do not stop the others', async () => {
    const response = await batch(
      [
        { id: 'missing-path', method: 'GET', path: '/no/such/path/at/all' },
        { id: 'invalid', method: 'POST', path: '/users', body: { email: 'not-an-email' } },
        { id: 'missing-user', method: 'GET', path: '/users/usr_doesnotexist' },
        { id: 'wrong-method', method: 'PUT', path: '/users/me' },
        { id: 'ok', method: 'GET', path: '/users/me' },
      ],
      { cookie: tenant.admin.cookie },
    );

    expect(response.status).toBe(200);
    const [missingPath, invalid, missingUser, wrongMethod, ok] = response.body.responses;
    expect(missingPath).toMatchObject({ id: 'missing-path', status: 404, body: { error: expect.any(String), code: 'NOT_FOUND' } });
    expect(invalid).toMatchObject({ id: 'invalid', status: 422, body: { error: expect.any(String), code: 'VALIDATION_FAILED', details: expect.any(Object) } });
    expect(missingUser).toMatchObject({ status: 404, body: { error: expect.any(String) } });
    expect(wrongMethod).toMatchObject({ status: 405, body: { code: 'METHOD_NOT_ALLOWED' } });
    expect(ok).toMatchObject({ status: 200, body: { success: true, data: { id: tenant.admin.id } } });
  });

  it('authorises each sub-request as the caller: a key is refused what its scopes or kind do not allow', async () => {
    const key = await createKey(user.cookie, ['tasks:read']);

    const response = await batch(
      [
        { id: 'list', method: 'GET', path: '/tasks' },
        { id: 'create', method: 'POST', path: '/tasks', body: { title: 'not allowed' } },
        { id: 'keys', method: 'GET', path: '/api-keys' },
        { id: 'me', method: 'GET', path: '/users/me' },
      ],
      { apiKey: key },
    );

    expect(response.status).toBe(200);
    expect(response.body.responses.map((r) => r.status)).toEqual([200, 403, 403, 200]);
    expect(response.body.responses[1].body).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS', error: expect.stringContaining('tasks:write') });
    expect(response.body.responses[2].body).toMatchObject({ code: 'FORBIDDEN' });
    expect(response.body.responses[3].body.data.id).toBe(user.id);
  });

  it('creates a task and reads it back in the same batch, with query strings passed through', async () => {
    const writer = await newUser(tenant.admin.cookie);
    const title = `Batch task ${randomUUID()}`;

    const first = await batch(
      [
        { id: 'create', method: 'POST', path: '/tasks', body: { title, priority: 'high' } },
        { id: 'list', method: 'GET', path: '/tasks?limit=5&page=1' },
      ],
      { cookie: writer.cookie },
    );

    expect(first.status).toBe(200);
    const [created, list] = first.body.responses;
    expect(created).toMatchObject({ status: 201, body: { success: true, data: { title, priority: 'high', status: 'todo' } } });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toMatchObject({ page: 1, limit: 5 });
    expect(list.body.data.map((t: { id: string }) => t.id)).toContain(created.body.data.id);

    const id = created.body.data.id as string;
    const second = await batch(
      [
        { id: 'read', method: 'GET', path: `/tasks/${id}` },
        { id: 'update', method: 'PATCH', path: `/tasks/${id}`, body: { status: 'completed' } },
        { id: 'reread', method: 'GET', path: `/tasks/${encodeURIComponent(id)}` },
      ],
      { cookie: writer.cookie },
    );
    expect(second.body.responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(second.body.responses[2].body.data).toMatchObject({ id, title, status: 'completed' });
  });

  it('refuses more than 20 sub-requests with 422 VALIDATION_FAILED and runs none', async () => {
    const name = `Not applied ${randomUUID().slice(0, 8)}`;
    const requests = [{ id: 'rename', method: 'PATCH', path: '/users/me', body: { name } }, ...Array.from({ length: 20 }, (_, i) => ({ id: `r${i}`, method: 'GET', path: '/users/me' }))];

    const response = await batch(requests, { cookie: user.cookie });

    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ success: false, code: 'VALIDATION_FAILED', details: { requests: expect.stringContaining('20') } });
    const me = await api('GET', '/api/v1/users/me', { cookie: user.cookie });
    expect(me.body.data.name).not.toBe(name);
  });

  it('accepts exactly 20 sub-requests', async () => {
    const requests = Array.from({ length: 20 }, (_, i) => ({ id: `r${i}`, method: 'GET', path: '/users/me' }));

    const response = await batch(requests, { cookie: tenant.admin.cookie });

    expect(response.status).toBe(200);
    expect(response.body.responses).toHaveLength(20);
    expect(response.body.responses.every((r) => r.status === 200)).toBe(true);
  });

  it.each([
    ['no requests', { requests: [] }, 'requests'],
    ['requests not an array', { requests: 'GET /users/me' }, 'requests'],
    ['a sub-request without id', { requests: [{ method: 'GET', path: '/users/me' }] }, 'requests[0].id'],
    ['an unknown method', { requests: [{ id: 'a', method: 'GET', path: '/users/me' }, { id: 'b', method: 'TRACE', path: '/users/me' }] }, 'requests[1].method'],
    ['a path without a leading slash', { requests: [{ id: 'a', method: 'GET', path: 'users/me' }] }, 'requests[0].path'],
    ['a body that is not an object', { requests: [{ id: 'a', method: 'POST', path: '/users', body: [1] }] }, 'requests[0].body'],
    ['a duplicate id', { requests: [{ id: 'a', method: 'GET', path: '/users/me' }, { id: 'a', method: 'GET', path: '/users/me' }] }, 'requests[1].id'],
  ])('refuses %s with 422 naming the field', async (_, body, field) => {
    const response = await api('POST', '/api/v1/batch', { cookie: user.cookie, body });

    expect(response.status).toBe(422);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(Object.keys(response.body.details)).toContain(field);
  });

  it('refuses a batch inside a batch for that sub-request only', async () => {
    const response = await batch(
      [
        { id: 'nested', method: 'POST', path: '/batch', body: { requests: [{ id: 'x', method: 'GET', path: '/users/me' }] } },
        { id: 'me', method: 'GET', path: '/users/me' },
      ],
      { cookie: user.cookie },
    );

    expect(response.status).toBe(200);
    expect(response.body.responses[0]).toMatchObject({ id: 'nested', status: 400, body: { error: expect.stringMatching(/batch/i), code: 'INVALID_REQUEST' } });
    expect(response.body.responses[1].status).toBe(200);
  });

  it('does not let a path escape /api/v1', async () => {
    const response = await batch([{ id: 'escape', method: 'GET', path: '/../health' }], { cookie: user.cookie });

    expect(response.body.responses[0]).toMatchObject({ status: 404, body: { error: expect.any(String) } });
  });

  it('needs authentication for the batch itself', async () => {
    const response = await batch([{ id: 'me', method: 'GET', path: '/users/me' }], {});

    expect(response.status).toBe(401);
  });

  it('applies the CSRF guard to the batch itself: a cookie batch from a foreign Origin runs nothing', async () => {
    const name = `Cross-site ${randomUUID().slice(0, 8)}`;

    const response = await batch([{ id: 'rename', method: 'PATCH', path: '/users/me', body: { name } }], {
      cookie: user.cookie,
      headers: { Origin: 'https://evil.example' },
    });

    expect(response.status).toBe(403);
    const me = await api('GET', '/api/v1/users/me', { cookie: user.cookie });
    expect(me.body.data.name).not.toBe(name);
  });

  it('carries a sub-request Set-Cookie (a refreshed session) to the outer response', async () => {
    const member = await newUser(tenant.admin.cookie);

    const response = await batch([{ id: 'refresh', method: 'POST', path: '/auth/refresh' }], { cookie: member.cookie });

    expect(response.body.responses[0].status).toBe(200);
    const cookie = sessionCookieOf(response);
    expect(cookie).toBeDefined();
    expect(cookie).not.toBe(member.cookie);
    expect((await api('GET', '/api/v1/users/me', { cookie })).status).toBe(200);
  });

  it('returns the first response to a retry with the same Idempotency-Key, creating nothing twice', async () => {
    const email = `batch-idem-${randomUUID().slice(0, 8)}@test.local`;
    const requests = [{ id: 'create', method: 'POST', path: '/users', body: { email, name: 'Idem', password: 'pw-long-enough-1', role: 'user' } }];
    const headers = { 'Idempotency-Key': randomUUID() };

    const first = await batch(requests, { cookie: tenant.admin.cookie, headers });
    const retry = await batch(requests, { cookie: tenant.admin.cookie, headers });

    expect(first.status).toBe(200);
    expect(first.body.responses[0].status).toBe(201);
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const users = await api('GET', '/api/v1/users', { cookie: tenant.admin.cookie });
    expect(users.body.data.filter((u: { email: string }) => u.email === email)).toHaveLength(1);
  });
});

describe('POST /api/v1/batch rate counting', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { RATE_LIMIT_SESSION_PER_HOUR: '5' } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('counts every sub-request against the caller: a batch of N costs N', async () => {
    const member = await newUser(tenant.admin.cookie);
    const requests = Array.from({ length: 6 }, (_, i) => ({ id: `r${i}`, method: 'GET', path: '/users/me' }));

    const response = await batch(requests, { cookie: member.cookie, baseUrl: server.url });

    // A limit of 5: sub-requests 1 to 5 pass, the sixth is over the limit.
    expect(response.status).toBe(200);
    expect(response.body.responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(response.body.responses[5].body).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', error: expect.any(String), retryAfter: expect.any(Number) });
    expect(response.headers.get('x-ratelimit-limit')).toBe('5');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
    const after = await api('GET', '/api/v1/users/me', { cookie: member.cookie, baseUrl: server.url });
    expect(after.status).toBe(429);
  });

  it('counts a batch refused as a whole once', async () => {
    const member = await newUser(tenant.admin.cookie);

    const response = await api('POST', '/api/v1/batch', { cookie: member.cookie, baseUrl: server.url, body: { requests: [] } });

    expect(response.status).toBe(422);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('counts a batch none of whose sub-requests runs once, with the rate-limit headers', async () => {
    const member = await newUser(tenant.admin.cookie);

    const response = await batch([{ id: 'a', method: 'GET', path: '/no/such/path/here' }], { cookie: member.cookie, baseUrl: server.url });

    expect(response.status).toBe(200);
    expect(response.body.responses[0].status).toBe(404);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('counts a batch with an Idempotency-Key once besides its sub-requests, and its replay once', async () => {
    const member = await newUser(tenant.admin.cookie);
    const requests = [
      { id: 'a', method: 'GET', path: '/users/me' },
      { id: 'b', method: 'GET', path: '/users/me' },
    ];
    const headers = { 'Idempotency-Key': randomUUID() };

    const first = await batch(requests, { cookie: member.cookie, baseUrl: server.url, headers });
    const replay = await batch(requests, { cookie: member.cookie, baseUrl: server.url, headers });

    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('x-ratelimit-remaining')).toBe('1');
  });
});
