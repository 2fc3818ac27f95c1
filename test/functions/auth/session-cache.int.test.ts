/**
 * The session cache through HTTP on the local runtime (one process: every family shares the
 * container's cache): a warm session request reads neither the session nor its user again; a
 * logout and a role change take effect at once.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { login, newTenant, newUser, type TestTenant } from '../../support/identity.js';

let tenant: TestTenant;

beforeAll(async () => {
  tenant = await newTenant();
});

function dbCalls(response: { headers: Headers }): number {
  return Number(/db;dur=[\d.]+;desc="(\d+) call/.exec(response.headers.get('server-timing') ?? '')![1]);
}

describe('session cache', () => {
  it('a warm session request reads neither the session nor the user again', async () => {
    const user = await newUser(tenant.admin.cookie);
    const cookie = await login(user.email, user.password);
    const cold = await api('GET', '/api/v1/tasks/tsk_00000000000000000000', { cookie });
    const warm = await api('GET', '/api/v1/tasks/tsk_00000000000000000000', { cookie });
    expect(cold.status).toBe(404);
    expect(warm.status).toBe(404);
    // Cold: the session, its user, the record (and a rate-limit lease); warm: the record only
    // (the test server's limits are high enough for leases of 10 tokens).
    expect(dbCalls(cold)).toBeGreaterThanOrEqual(3);
    expect(dbCalls(warm)).toBe(1);
  });

  it('a logout takes effect at once', async () => {
    const user = await newUser(tenant.admin.cookie);
    const cookie = await login(user.email, user.password);
    expect((await api('GET', '/api/v1/users/me', { cookie })).status).toBe(200);
    expect((await api('POST', '/api/v1/auth/logout', { cookie })).status).toBe(200);
    const after = await api('GET', '/api/v1/users/me', { cookie });
    expect(after.status).toBe(401);
  });

  it('a role change takes effect at once', async () => {
    const admin = await newUser(tenant.admin.cookie, 'admin');
    expect((await api('GET', '/api/v1/users', { cookie: admin.cookie })).status).toBe(200);
    const demote = await api('PATCH', `/api/v1/users/${admin.id}`, { cookie: tenant.admin.cookie, body: { role: 'user' } });
    expect(demote.status, demote.text).toBe(200);
    const me = await api('GET', '/api/v1/users/me', { cookie: admin.cookie });
    expect(me.body.data.role).toBe('user');
    expect((await api('GET', '/api/v1/users', { cookie: admin.cookie })).status).toBe(403);
  });
});
