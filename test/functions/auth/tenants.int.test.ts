import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { OPERATOR, login, loginAsOperator, newTenant, newUser, uniqueEmail, type TestTenant, type TestUser } from '../../support/identity.js';

let tenant: TestTenant;
let user: TestUser;

beforeAll(async () => {
  tenant = await newTenant('Acme');
  user = await newUser(tenant.admin.cookie);
});

describe('GET /api/v1/tenants/me', () => {
  it('answers the caller tenant with id, name and settings', async () => {
    const response = await api('GET', '/api/v1/tenants/me', { cookie: user.cookie });

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ id: tenant.tenantId, name: 'Acme', settings: {} });
  });
});

describe('PATCH /api/v1/tenants/me', () => {
  it('lets an admin change name and settings', async () => {
    const response = await api('PATCH', '/api/v1/tenants/me', { cookie: tenant.admin.cookie, body: { name: 'Acme Ltd', settings: { locale: 'en-GB' } } });

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ id: tenant.tenantId, name: 'Acme Ltd', settings: { locale: 'en-GB' } });
    expect((await api('GET', '/api/v1/tenants/me', { cookie: user.cookie })).body.data.name).toBe('Acme Ltd');
  });

  it('refuses a user with 403', async () => {
    const response = await api('PATCH', '/api/v1/tenants/me', { cookie: user.cookie, body: { name: 'Mine' } });

    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });

  it('refuses unknown fields and wrong types with 422', async () => {
    const response = await api('PATCH', '/api/v1/tenants/me', { cookie: tenant.admin.cookie, body: { id: 'ten_x', settings: [] } });

    expect(response.status).toBe(422);
    expect(response.body.details).toEqual({ id: 'is not an allowed field', settings: 'must be an object' });
  });
});

describe('POST /api/v1/tenants', () => {
  it('lets the operator create a tenant with its first admin', async () => {
    const operator = await loginAsOperator();
    const admin = { email: uniqueEmail('first'), name: 'First Admin', password: 'first-password' };

    const response = await api('POST', '/api/v1/tenants', { cookie: operator, body: { name: 'Globex', admin } });

    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ id: expect.stringMatching(/^ten_/), name: 'Globex', admin: { email: admin.email, role: 'admin' } });
    expect(response.text).not.toMatch(/password/i);
    const cookie = await login(admin.email, admin.password);
    const me = await api('GET', '/api/v1/users/me', { cookie });
    expect(me.body.data).toMatchObject({ role: 'admin', tenantId: response.body.data.id });
  });

  it('refuses another tenant admin with 403', async () => {
    const response = await api('POST', '/api/v1/tenants', {
      cookie: tenant.admin.cookie,
      body: { name: 'Sneaky', admin: { email: uniqueEmail(), name: 'X', password: 'password-123' } },
    });

    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });

  it('refuses a user with 403 and no credentials with 401', async () => {
    const body = { name: 'Sneaky', admin: { email: uniqueEmail(), name: 'X', password: 'password-123' } };

    expect((await api('POST', '/api/v1/tenants', { cookie: user.cookie, body })).status).toBe(403);
    expect((await api('POST', '/api/v1/tenants', { body })).status).toBe(401);
  });

  it('refuses an admin e-mail that is already registered with 409', async () => {
    const operator = await loginAsOperator();

    const response = await api('POST', '/api/v1/tenants', { cookie: operator, body: { name: 'Dup', admin: { email: user.email, name: 'X', password: 'password-123' } } });

    expect(response.status).toBe(409);
    expect(response.body.details).toHaveProperty(['admin.email']);
  });

  it('refuses invalid bodies with 422 and nested details', async () => {
    const operator = await loginAsOperator();

    const response = await api('POST', '/api/v1/tenants', { cookie: operator, body: { admin: { email: 'bad', password: 'short' } } });

    expect(response.status).toBe(422);
    expect(response.body.details).toEqual({
      name: 'is required',
      'admin.email': 'must be a valid email address',
      'admin.name': 'is required',
      'admin.password': 'must be at least 8 characters',
    });
  });
});

describe('the operator', () => {
  it('is an admin of the default tenant', async () => {
    const operator = await loginAsOperator();

    const response = await api('GET', '/api/v1/users/me', { cookie: operator });

    expect(response.body.data).toMatchObject({ email: OPERATOR.email, role: 'admin', tenantId: 'ten_default' });
  });
});
