/**
 * 429 on the entity endpoints: a second local server (same engine) with a limit of 2 requests per
 * key and a window length of its own, so its counters are not shared with other test files.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { keyOf } from './support.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { RATE_LIMIT_API_KEY_PER_HOUR: '2', RATE_LIMIT_WINDOW_SECONDS: '3598' } });
  const tenant = await newTenant();
  key = await keyOf((await newUser(tenant.admin.cookie)).cookie);
});

afterAll(async () => {
  await server?.stop();
});

describe('rate limit on entity endpoints', () => {
  it('answers 429 RATE_LIMIT_EXCEEDED with Retry-After to every operation once the key is over its limit', async () => {
    const call = (method: string, path: string, body?: unknown) => api(method, path, { apiKey: key, body, baseUrl: server.url });
    const created = await call('POST', '/api/v1/tasks', { title: 'Counted' });
    const listed = await call('GET', '/api/v1/tasks');
    const id = created.body.data.id;

    const refused = [
      await call('GET', '/api/v1/tasks'),
      await call('POST', '/api/v1/tasks', { title: 'Too many' }),
      await call('GET', `/api/v1/tasks/${id}`),
      await call('PATCH', `/api/v1/tasks/${id}`, { title: 'Too many' }),
      await call('DELETE', `/api/v1/tasks/${id}`),
    ];

    expect(created.status).toBe(201);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-ratelimit-remaining')).toBe('0');
    for (const response of refused) {
      expect(response.status).toBe(429);
      expect(response.body).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // Nothing was written by the refused requests.
    const read = await api('GET', `/api/v1/tasks/${id}`, { apiKey: key });
    expect(read.body.data.title).toBe('Counted');
  });
});
