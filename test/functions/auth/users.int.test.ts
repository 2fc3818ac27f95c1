import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { login, newTenant, newUser, uniqueEmail, type TestTenant, type TestUser } from '../../support/identity.js';

let tenant: TestTenant;
let other: TestTenant;
let user: TestUser;

beforeAll(async () => {
  [tenant, other] = await Promise.all([newTenant(), newTenant()]);
  user = await newUser(tenant.admin.cookie);
});

function expectNoPasswords(response: { text: string }): void {
  expect(response.text).not.toMatch(/password/i);
  expect(response.text).not.toContain('scrypt$');
}

describe('GET /api/v1/users/me', () => {
  it('answers the caller without any password field', async () => {
    const response = await api('GET', '/api/v1/users/me', { cookie: user.cookie });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: user.id, email: user.email, name: 'Test user', role: 'user', tenantId: tenant.tenantId, preferences: {} });
    expectNoPasswords(response);
  });

  it('answers 401 without credentials', async () => {
    expect((await api('GET', '/api/v1/users/me')).status).toBe(401);
  });
});

describe('PATCH /api/v1/users/me', () => {
  it('changes name and merges preferences', async () => {
    const me = await newUser(tenant.admin.cookie);
    await api('PATCH', '/api/v1/users/me', { cookie: me.cookie, body: { preferences: { theme: 'dark', lang: 'en' } } });

    const response = await api('PATCH', '/api/v1/users/me', { cookie: me.cookie, body: { name: 'Renamed', preferences: { lang: 'de', theme: null } } });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ name: 'Renamed', preferences: { lang: 'de' } });
    expectNoPasswords(response);
  });

  it('changes the password with the current one; the old password stops working', async () => {
    const me = await newUser(tenant.admin.cookie);

    const response = await api('PATCH', '/api/v1/users/me', { cookie: me.cookie, body: { currentPassword: me.password, password: 'a-new-password' } });

    expect(response.status).toBe(200);
    expectNoPasswords(response);
    expect((await api('POST', '/api/v1/auth/login', { body: { email: me.email, password: me.password } })).status).toBe(401);
    expect((await api('POST', '/api/v1/auth/login', { body: { email: me.email, password: 'a-new-password' } })).status).toBe(200);
    expect((await api('GET', '/api/v1/users/me', { cookie: me.cookie })).status).toBe(200);
  });

  it('ends the other sessions of the user on a password change', async () => {
    const me = await newUser(tenant.admin.cookie);
    const otherSession = await login(me.email, me.password);

    await api('PATCH', '/api/v1/users/me', { cookie: me.cookie, body: { currentPassword: me.password, password: 'another-password' } });

    expect((await api('GET', '/api/v1/users/me', { cookie: otherSession })).status).toBe(401);
  });

  it('refuses a wrong current password with 422 on currentPassword', async () => {
    const response = await api('PATCH', '/api/v1/users/me', { cookie: user.cookie, body: { currentPassword: 'not-my-password', password: 'a-new-password' } });

    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { currentPassword: 'is incorrect' } });
  });

  it('needs currentPassword with password', async () => {
    const response = await api('PATCH', '/api/v1/users/me', { cookie: user.cookie, body: { password: 'a-new-password' } });

    expect(response.status).toBe(422);
    expect(response.body.details).toHaveProperty('currentPassword');
  });

  it('refuses unknown fields, short passwords and wrong types with 422, every field at once', async () => {
    const response = await api('PATCH', '/api/v1/users/me', {
      cookie: user.cookie,
      body: { role: 'admin', password: 'short', currentPassword: user.password, preferences: 'dark', name: 5 },
    });

    expect(response.status).toBe(422);
    expect(response.body.details).toEqual({
      role: 'is not an allowed field',
      password: 'must be at least 8 characters',
      preferences: 'must be an object',
      name: 'must be a string',
    });
  });

  it('answers 422, not 500, for preferences and settings DynamoDB cannot store', async () => {
    const deep = `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`;
    const bodies = [`{"preferences":${deep}}`, '{"preferences":{"":1}}', '{"preferences":{"x":1e400}}', '{"preferences":{"x":12345678901234567890123}}'];

    const responses = await Promise.all([
      ...bodies.map((rawBody) => api('PATCH', '/api/v1/users/me', { cookie: user.cookie, rawBody, headers: { 'Content-Type': 'application/json' } })),
      api('PATCH', '/api/v1/tenants/me', { cookie: tenant.admin.cookie, rawBody: '{"settings":{"":1}}', headers: { 'Content-Type': 'application/json' } }),
    ]);

    for (const response of responses) {
      expect(response.status, response.text).toBe(422);
      expect(response.body.code).toBe('VALIDATION_FAILED');
    }
  });

  it('refuses an empty body with 422', async () => {
    const response = await api('PATCH', '/api/v1/users/me', { cookie: user.cookie, body: {} });

    expect(response.status).toBe(422);
  });

  it('refuses a read-only key with 403 INSUFFICIENT_PERMISSIONS and accepts a key with write', async () => {
    const me = await newUser(tenant.admin.cookie);
    const keyWith = async (scopes: string[]) => (await api('POST', '/api/v1/api-keys', { cookie: me.cookie, body: { name: 'k', scopes } })).body.data.key as string;
    const readOnly = await keyWith(['tasks:read', 'read']);
    const writer = await keyWith(['write']);

    const refused = await api('PATCH', '/api/v1/users/me', { apiKey: readOnly, body: { name: 'Renamed by a read-only key' } });
    const accepted = await api('PATCH', '/api/v1/users/me', { apiKey: writer, body: { name: 'Renamed by a writer' } });

    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(accepted.status).toBe(200);
    expect((await api('GET', '/api/v1/users/me', { cookie: me.cookie })).body.data.name).toBe('Renamed by a writer');
  });
});

describe('user administration', () => {
  it('creates a user in the admin tenant with 201, lower-casing the e-mail', async () => {
    const email = uniqueEmail('Mixed').replace('mixed', 'MiXeD');

    const response = await api('POST', '/api/v1/users', { cookie: tenant.admin.cookie, body: { email, name: 'Mixed', password: 'password-123', role: 'user' } });

    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ email: email.toLowerCase(), name: 'Mixed', role: 'user', tenantId: tenant.tenantId });
    expectNoPasswords(response);
  });

  it('refuses a duplicate e-mail with 409', async () => {
    const response = await api('POST', '/api/v1/users', { cookie: tenant.admin.cookie, body: { email: user.email.toUpperCase(), name: 'Dup', password: 'password-123' } });

    expect(response.status).toBe(409);
    expect(response.body.details).toHaveProperty('email');
  });

  it('refuses missing and invalid fields with 422 and details for each', async () => {
    const response = await api('POST', '/api/v1/users', { cookie: tenant.admin.cookie, body: { email: 'not-an-email', password: 'short', role: 'root' } });

    expect(response.status).toBe(422);
    expect(response.body.details).toEqual({
      email: 'must be a valid email address',
      name: 'is required',
      password: 'must be at least 8 characters',
      role: 'must be one of: admin, user',
    });
  });

  it('lists the tenant users only, without passwords', async () => {
    const response = await api('GET', '/api/v1/users', { cookie: tenant.admin.cookie });

    expect(response.status).toBe(200);
    const ids = response.body.data.map((u: { id: string }) => u.id);
    expect(ids).toContain(user.id);
    expect(ids).toContain(tenant.admin.id);
    expect(ids).not.toContain(other.admin.id);
    expect(response.body.data.every((u: { tenantId: string }) => u.tenantId === tenant.tenantId)).toBe(true);
    expectNoPasswords(response);
  });

  it('reads, updates and deletes a user of the tenant', async () => {
    const target = await newUser(tenant.admin.cookie);

    const read = await api('GET', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie });
    const updated = await api('PATCH', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie, body: { name: 'Promoted', role: 'admin' } });
    const deleted = await api('DELETE', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie });

    expect(read.status).toBe(200);
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'Promoted', role: 'admin' });
    expect(deleted.status).toBe(200);
    expect((await api('GET', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie })).status).toBe(404);
    expect((await api('GET', '/api/v1/users/me', { cookie: target.cookie })).status).toBe(401);
    expect((await api('POST', '/api/v1/auth/login', { body: { email: target.email, password: target.password } })).status).toBe(401);
  });

  it('takes a role change into effect at once', async () => {
    const target = await newUser(tenant.admin.cookie);

    await api('PATCH', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie, body: { role: 'admin' } });

    expect((await api('GET', '/api/v1/users', { cookie: target.cookie })).status).toBe(200);
  });

  it('resets a password as admin and ends that user sessions', async () => {
    const target = await newUser(tenant.admin.cookie);

    const response = await api('PATCH', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie, body: { password: 'reset-password-1' } });

    expect(response.status).toBe(200);
    expectNoPasswords(response);
    expect((await api('GET', '/api/v1/users/me', { cookie: target.cookie })).status).toBe(401);
    expect((await api('POST', '/api/v1/auth/login', { body: { email: target.email, password: 'reset-password-1' } })).status).toBe(200);
  });

  it('answers 404 for a user of another tenant, for read, update and delete', async () => {
    const id = other.admin.id;

    const read = await api('GET', `/api/v1/users/${id}`, { cookie: tenant.admin.cookie });
    const update = await api('PATCH', `/api/v1/users/${id}`, { cookie: tenant.admin.cookie, body: { name: 'Hijack' } });
    const remove = await api('DELETE', `/api/v1/users/${id}`, { cookie: tenant.admin.cookie });

    expect([read.status, update.status, remove.status]).toEqual([404, 404, 404]);
    expect(read.body.code).toBe('NOT_FOUND');
  });

  it('does not let an admin delete themself or change their own role', async () => {
    const remove = await api('DELETE', `/api/v1/users/${tenant.admin.id}`, { cookie: tenant.admin.cookie });
    const demote = await api('PATCH', `/api/v1/users/${tenant.admin.id}`, { cookie: tenant.admin.cookie, body: { role: 'user' } });

    expect(remove.status).toBe(403);
    expect(demote.status).toBe(403);
  });

  it('refuses every administration route to a user with 403 FORBIDDEN', async () => {
    const calls = await Promise.all([
      api('GET', '/api/v1/users', { cookie: user.cookie }),
      api('POST', '/api/v1/users', { cookie: user.cookie, body: { email: uniqueEmail(), name: 'X', password: 'password-123' } }),
      api('GET', `/api/v1/users/${tenant.admin.id}`, { cookie: user.cookie }),
      api('PATCH', `/api/v1/users/${tenant.admin.id}`, { cookie: user.cookie, body: { name: 'X' } }),
      api('DELETE', `/api/v1/users/${tenant.admin.id}`, { cookie: user.cookie }),
    ]);

    for (const response of calls) {
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
    }
  });
});

async function adminKey(owner: TestUser): Promise<string> {
  const created = await api('POST', '/api/v1/api-keys', { cookie: owner.cookie, body: { name: 'admin key', scopes: ['*'] } });
  expect(created.status, created.text).toBe(201);
  // Used once, so that the key is verified (and cached) before the change.
  expect((await api('GET', '/api/v1/users', { apiKey: created.body.data.key })).status).toBe(200);
  return created.body.data.key;
}

describe("a user's API keys after an admin changes the user", () => {
  it("stops granting admin rights at once when the key's owner is demoted", async () => {
    const owner = await newUser(tenant.admin.cookie, 'admin');
    const key = await adminKey(owner);

    const demoted = await api('PATCH', `/api/v1/users/${owner.id}`, { cookie: tenant.admin.cookie, body: { role: 'user' } });
    const response = await api('GET', '/api/v1/users', { apiKey: key });

    expect(demoted.status).toBe(200);
    expect(response.status).toBe(403);
  });

  it("stops authenticating at once when the key's owner is deleted", async () => {
    const owner = await newUser(tenant.admin.cookie, 'admin');
    const key = await adminKey(owner);

    const deleted = await api('DELETE', `/api/v1/users/${owner.id}`, { cookie: tenant.admin.cookie });
    const response = await api('GET', '/api/v1/tenants/me', { apiKey: key });

    expect(deleted.status).toBe(200);
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('INVALID_API_KEY');
  });
});

describe('a disabled user', () => {
  it('can neither sign in nor use a session or an API key, until enabled again', async () => {
    const target = await newUser(tenant.admin.cookie, 'admin');
    const key = await adminKey(target);

    const disabled = await api('PATCH', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie, body: { status: 'disabled' } });
    const session = await api('GET', '/api/v1/users/me', { cookie: target.cookie });
    const byKey = await api('GET', '/api/v1/users/me', { apiKey: key });
    const signIn = await api('POST', '/api/v1/auth/login', { body: { email: target.email, password: target.password } });
    const listed = await api('GET', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie });
    const enabled = await api('PATCH', `/api/v1/users/${target.id}`, { cookie: tenant.admin.cookie, body: { status: 'active' } });

    expect(disabled.status).toBe(200);
    expect(disabled.body.data.status).toBe('disabled');
    expect(session.status).toBe(401);
    expect(byKey.status).toBe(401);
    // As a wrong password: the answer does not tell that the account exists.
    expect(signIn.status).toBe(401);
    expect(signIn.body.error).toBe('Invalid email or password');
    expect(listed.body.data.status).toBe('disabled');
    expect(enabled.body.data.status).toBe('active');
    expect((await api('GET', '/api/v1/users/me', { apiKey: key })).status).toBe(200);
    expect((await login(target.email, target.password)).startsWith('session=')).toBe(true);
  });

  it('is never the admin themself, nor the operator', async () => {
    const self = await api('PATCH', `/api/v1/users/${tenant.admin.id}`, { cookie: tenant.admin.cookie, body: { status: 'disabled' } });
    const invalid = await api('PATCH', `/api/v1/users/${user.id}`, { cookie: tenant.admin.cookie, body: { status: 'gone' } });

    expect(self.status).toBe(403);
    expect(invalid.status).toBe(422);
    expect(invalid.body.details).toHaveProperty('status');
  });
});
