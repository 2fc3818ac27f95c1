import { beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl, sessionCookieOf } from '../../support/http.js';
import { login, newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';

let tenant: TestTenant;
let user: TestUser;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
});

async function timed<T>(call: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await call();
  return { result, ms: performance.now() - started };
}

describe('POST /api/v1/auth/login', () => {
  it('answers 200 with the user and sets an HttpOnly, SameSite=Lax session cookie', async () => {
    const response = await api('POST', '/api/v1/auth/login', { body: { email: user.email, password: user.password } });

    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(response.body.data.user).toEqual({ id: user.id, email: user.email, name: 'Test user', role: 'user', tenantId: tenant.tenantId });
    const setCookie = response.headers.getSetCookie().find((c) => c.startsWith('session='))!;
    expect(setCookie).toMatch(/^session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).toMatch(/Max-Age=\d+/);
    expect(setCookie).not.toContain('Secure');
    expect(response.text).not.toMatch(/password/i);
  });

  it('accepts the e-mail in any letter case', async () => {
    const response = await api('POST', '/api/v1/auth/login', { body: { email: user.email.toUpperCase(), password: user.password } });

    expect(response.status).toBe(200);
  });

  it('refuses a wrong password and an unknown e-mail with the same 401 body, each after at least 100 ms', async () => {
    const wrongPassword = await timed(() => api('POST', '/api/v1/auth/login', { body: { email: user.email, password: 'wrong-password' } }));
    const unknownEmail = await timed(() => api('POST', '/api/v1/auth/login', { body: { email: 'nobody@test.local', password: 'wrong-password' } }));

    for (const { result, ms } of [wrongPassword, unknownEmail]) {
      expect(result.status).toBe(401);
      expect(result.body).toEqual({ success: false, error: 'Invalid email or password', code: 'AUTHENTICATION_FAILED' });
      expect(result.headers.getSetCookie()).toEqual([]);
      expect(ms).toBeGreaterThanOrEqual(100);
    }
  });

  it('answers 422 with details for missing and wrong-typed fields', async () => {
    const missing = await api('POST', '/api/v1/auth/login', { body: {} });
    const wrongType = await api('POST', '/api/v1/auth/login', { body: { email: 42, password: ['x'] } });

    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { email: 'is required', password: 'is required' } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.details).toEqual({ email: 'must be a string', password: 'must be a string' });
  });

  it('answers 400 INVALID_REQUEST for malformed JSON', async () => {
    const response = await api('POST', '/api/v1/auth/login', { rawBody: '{"email": ', headers: { 'Content-Type': 'application/json' } });

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_REQUEST');
  });
});

describe('sessions', () => {
  it('let the cookie authenticate GET /users/me', async () => {
    const cookie = await login(user.email, user.password);

    const response = await api('GET', '/api/v1/users/me', { cookie });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: user.id, email: user.email, role: 'user', tenantId: tenant.tenantId });
  });

  it('end at logout: 200, a cleared cookie, and the old cookie answers 401 afterwards', async () => {
    const cookie = await login(user.email, user.password);

    const response = await api('POST', '/api/v1/auth/logout', { cookie });
    const after = await api('GET', '/api/v1/users/me', { cookie });

    expect(response.status).toBe(200);
    expect(response.headers.getSetCookie()[0]).toMatch(/^session=; .*Max-Age=0/);
    expect(after.status).toBe(401);
  });

  it('rotate on refresh: a new token works and the old one no longer does', async () => {
    const cookie = await login(user.email, user.password);

    const response = await api('POST', '/api/v1/auth/refresh', { cookie });
    const fresh = sessionCookieOf(response)!;

    expect(response.status).toBe(200);
    expect(response.body.data.user.id).toBe(user.id);
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(cookie);
    expect((await api('GET', '/api/v1/users/me', { cookie: fresh })).status).toBe(200);
    expect((await api('GET', '/api/v1/users/me', { cookie })).status).toBe(401);
  });

  it('rotate on POST /api/v1/auth as well', async () => {
    const cookie = await login(user.email, user.password);

    const response = await api('POST', '/api/v1/auth', { cookie });

    expect(response.status).toBe(200);
    expect(sessionCookieOf(response)).not.toBe(cookie);
    expect((await api('GET', '/api/v1/users/me', { cookie })).status).toBe(401);
  });

  it('answer 401 for an unknown session token', async () => {
    const response = await api('GET', '/api/v1/users/me', { cookie: `session=${'x'.repeat(43)}` });

    expect(response.status).toBe(401);
  });

  it('refuse logout without credentials with 401', async () => {
    const response = await api('POST', '/api/v1/auth/logout');

    expect(response.status).toBe(401);
  });
});

describe('CSRF guard', () => {
  it('refuses a cookie-authenticated POST from a foreign Origin with 403', async () => {
    const cookie = await login(user.email, user.password);

    const response = await api('POST', '/api/v1/auth/refresh', { cookie, headers: { Origin: 'https://evil.example' } });

    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
    expect((await api('GET', '/api/v1/users/me', { cookie })).status).toBe(200);
  });

  it('lets a cookie-authenticated PATCH without Origin through', async () => {
    const cookie = await login(user.email, user.password);

    const response = await api('PATCH', '/api/v1/users/me', { cookie, body: { name: 'No Origin' } });

    expect(response.status).toBe(200);
  });

  it('lets a cookie-authenticated POST from the same origin through', async () => {
    const cookie = await login(user.email, user.password);

    const response = await api('POST', '/api/v1/auth/refresh', { cookie, headers: { Origin: new URL(baseUrl()).origin } });

    expect(response.status).toBe(200);
  });

  it('refuses a cookie-authenticated PATCH from a foreign Origin with 403', async () => {
    const cookie = await login(user.email, user.password);

    const response = await api('PATCH', '/api/v1/users/me', { cookie, body: { name: 'Evil' }, headers: { Origin: 'https://evil.example' } });

    expect(response.status).toBe(403);
  });
});
