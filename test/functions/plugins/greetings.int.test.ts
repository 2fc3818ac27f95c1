/**
 * The worked example plugin (plugins/greetings.plugin.ts) through HTTP on the local runtime: its
 * declared auth, scope, body schema and rate limit are honoured by the same stack as the core
 * routes, and a batch dispatches to it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';

let tenant: TestTenant;
let user: TestUser;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
});

async function createKey(cookie: string, scopes: string[]): Promise<string> {
  const response = await api('POST', '/api/v1/api-keys', { cookie, body: { name: 'greetings test', scopes } });
  expect(response.status, response.text).toBe(201);
  return response.body.data.key as string;
}

describe('example plugin: greetings', () => {
  it('greets in the success envelope, with the schema default applied', async () => {
    const response = await api('POST', '/api/v1/greetings', { cookie: user.cookie, body: { name: 'Ada' } });

    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ success: true, data: { greeting: 'Hello, Ada.', from: user.email } });
    expect(response.headers.get('x-ratelimit-limit')).toBe('3');
  });

  it('answers its public route without credentials', async () => {
    const response = await api('GET', '/api/v1/greetings/hello');

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ greeting: 'Hello, world.' });
  });

  it('needs credentials (401) and its declared scope (403); a key may carry that scope', async () => {
    const anonymous = await api('POST', '/api/v1/greetings', { body: { name: 'Ada' } });
    const otherScope = await createKey(tenant.admin.cookie, ['tasks:write']);
    const denied = await api('POST', '/api/v1/greetings', { apiKey: otherScope, body: { name: 'Ada' } });
    const ownScope = await createKey(tenant.admin.cookie, ['greetings:write']);
    const allowed = await api('POST', '/api/v1/greetings', { apiKey: ownScope, body: { name: 'Ada', excited: true } });

    expect(anonymous.status).toBe(401);
    expect(anonymous.body.success).toBe(false);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ success: false, code: 'INSUFFICIENT_PERMISSIONS', details: { scope: 'requires greetings:write' } });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body.data.greeting).toBe('Hello, Ada!');
  });

  it('checks the body against the declared schema: 422 naming the field', async () => {
    const caller = await newUser(tenant.admin.cookie);
    const missing = await api('POST', '/api/v1/greetings', { cookie: caller.cookie, body: {} });
    const tooLong = await api('POST', '/api/v1/greetings', { cookie: caller.cookie, body: { name: 'n'.repeat(51) } });

    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ success: false, code: 'VALIDATION_FAILED', details: { name: 'is required' } });
    expect(tooLong.status).toBe(422);
    expect(Object.keys(tooLong.body.details)).toEqual(['name']);
  });

  it('holds the caller to its rate limit of 3 per hour: the 4th call is 429', async () => {
    const caller = await newUser(tenant.admin.cookie);
    for (let i = 0; i < 3; i++) {
      expect((await api('POST', '/api/v1/greetings', { cookie: caller.cookie, body: { name: `n${i}` } })).status).toBe(200);
    }

    const over = await api('POST', '/api/v1/greetings', { cookie: caller.cookie, body: { name: 'n3' } });

    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED' });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers a wrong method on its path with 405 and is reachable from a batch', async () => {
    const caller = await newUser(tenant.admin.cookie);
    const wrongMethod = await api('DELETE', '/api/v1/greetings', { cookie: caller.cookie });
    const batch = await api('POST', '/api/v1/batch', {
      cookie: caller.cookie,
      body: { requests: [{ id: 'greet', method: 'POST', path: '/greetings', body: { name: 'Grace' } }, { id: 'hello', method: 'GET', path: '/greetings/hello' }] },
    });

    expect(wrongMethod.status).toBe(405);
    expect(batch.status, batch.text).toBe(200);
    expect(batch.body.responses.map((r: { status: number }) => r.status)).toEqual([200, 200]);
    expect(batch.body.responses[0].body.data.greeting).toBe('Hello, Grace.');
  });
});
