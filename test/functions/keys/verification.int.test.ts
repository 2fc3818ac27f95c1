/**
 * Authenticating with an API key through HTTP on DynamoDB Local: both headers, the 100 ms floor
 * of failures, expiry, inactive and active again, immediate revocation, scope denials.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api, type CallResult } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';

let tenant: TestTenant;
let user: TestUser;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
});

async function createKey(body: Record<string, unknown> = { name: 'k', scopes: ['tasks:read'] }): Promise<{ id: string; key: string }> {
  const response = await api('POST', '/api/v1/api-keys', { cookie: user.cookie, body });
  expect(response.status, response.text).toBe(201);
  return response.body.data;
}

async function timed(call: () => Promise<CallResult>): Promise<CallResult & { ms: number }> {
  const started = performance.now();
  const result = await call();
  return { ...result, ms: performance.now() - started };
}

async function auditActions(keyId: string): Promise<string[]> {
  const response = await api('GET', `/api/v1/api-keys/${keyId}/audit`, { cookie: user.cookie });
  return response.body.data.map((e: { action: string }) => e.action);
}

describe('authenticating with a key', () => {
  it("grants the owner's identity with Authorization: Bearer and with X-API-Key", async () => {
    const { key } = await createKey();

    const bearer = await api('GET', '/api/v1/users/me', { apiKey: key });
    const header = await api('GET', '/api/v1/users/me', { headers: { 'X-API-Key': key } });

    for (const response of [bearer, header]) {
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ id: user.id, email: user.email });
    }
  });

  it('answers 401 AUTHENTICATION_FAILED without credentials', async () => {
    const response = await api('GET', '/api/v1/users/me');

    expect(response.status).toBe(401);
    expect(response.body.code).toBe('AUTHENTICATION_FAILED');
  });

  it('refuses an unknown key and a malformed key with 401 INVALID_API_KEY, each after at least 100 ms', async () => {
    const unknown = await timed(() => api('GET', '/api/v1/users/me', { apiKey: `sk_live_${'Z'.repeat(40)}` }));
    const malformed = await timed(() => api('GET', '/api/v1/users/me', { apiKey: 'sk_live_tooShort' }));
    const otherHeader = await timed(() => api('GET', '/api/v1/users/me', { headers: { 'X-API-Key': 'not-a-key' } }));

    for (const response of [unknown, malformed, otherHeader]) {
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('INVALID_API_KEY');
      expect(response.ms).toBeGreaterThanOrEqual(100);
    }
  });

  it('uses the session first when both are sent', async () => {
    const response = await api('GET', '/api/v1/users/me', { cookie: tenant.admin.cookie, apiKey: `sk_live_${'Z'.repeat(40)}` });

    expect(response.status).toBe(200);
    expect(response.body.data.email).toBe(tenant.admin.email);
  });
});

describe('expiry', () => {
  it('works until expiresAt, then answers 401 EXPIRED_KEY after at least 100 ms and audits it', async () => {
    const { id, key } = await createKey({ name: 'short-lived', scopes: ['tasks:read'], expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await api('GET', '/api/v1/users/me', { apiKey: key })).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 1600));
    const response = await timed(() => api('GET', '/api/v1/users/me', { apiKey: key }));

    expect(response.status).toBe(401);
    expect(response.body.code).toBe('EXPIRED_KEY');
    expect(response.ms).toBeGreaterThanOrEqual(100);
    expect(await auditActions(id)).toContain('expired');
    expect((await api('GET', `/api/v1/api-keys/${id}`, { cookie: user.cookie })).body.data.status).toBe('expired');
  });
});

describe('status', () => {
  it('refuses an inactive key with 401 INVALID_API_KEY and accepts it again once active', async () => {
    const { id, key } = await createKey();
    expect((await api('GET', '/api/v1/users/me', { apiKey: key })).status).toBe(200);

    await api('PATCH', `/api/v1/api-keys/${id}`, { cookie: user.cookie, body: { status: 'inactive' } });
    const inactive = await timed(() => api('GET', '/api/v1/users/me', { apiKey: key }));
    await api('PATCH', `/api/v1/api-keys/${id}`, { cookie: user.cookie, body: { status: 'active' } });
    const active = await api('GET', '/api/v1/users/me', { apiKey: key });

    expect(inactive.status).toBe(401);
    expect(inactive.body.code).toBe('INVALID_API_KEY');
    expect(inactive.ms).toBeGreaterThanOrEqual(100);
    expect(active.status).toBe(200);
    expect(await auditActions(id)).toEqual(['updated', 'inactive', 'updated', 'created']);
  });

  it('refuses a revoked key at once, even right after a successful (cached) use', async () => {
    const { id, key } = await createKey();
    expect((await api('GET', '/api/v1/users/me', { apiKey: key })).status).toBe(200);

    expect((await api('DELETE', `/api/v1/api-keys/${id}`, { cookie: user.cookie })).status).toBe(200);
    const response = await api('GET', '/api/v1/users/me', { apiKey: key });

    expect(response.status).toBe(401);
    expect(response.body.code).toBe('INVALID_API_KEY');
  });

  it('applies changed scopes at once', async () => {
    const { id, key } = await createKey({ name: 's', scopes: ['tasks:read'] });
    expect((await api('GET', '/api/v1/tasks', { apiKey: key })).status).toBe(200);

    await api('PATCH', `/api/v1/api-keys/${id}`, { cookie: user.cookie, body: { scopes: ['products:read'] } });

    expect((await api('GET', '/api/v1/tasks', { apiKey: key })).status).toBe(403);
  });
});

describe('scopes', () => {
  it('refuses a missing scope with 403 INSUFFICIENT_PERMISSIONS naming it, after at least 100 ms, and audits it', async () => {
    const { id, key } = await createKey({ name: 'reader', scopes: ['tasks:read'] });

    const read = await api('GET', '/api/v1/tasks', { apiKey: key });
    const write = await timed(() => api('POST', '/api/v1/tasks', { apiKey: key, body: { title: 'nope' } }));

    expect(read.status).toBe(200);
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(write.body.error).toContain('tasks:write');
    expect(write.ms).toBeGreaterThanOrEqual(100);
    const entry = (await api('GET', `/api/v1/api-keys/${id}/audit`, { cookie: user.cookie })).body.data[0];
    expect(entry).toMatchObject({ action: 'insufficient_scope', keyId: id, ipAddress: '127.0.0.1' });
  });

  it('lets write create and update, read only view, delete only delete', async () => {
    const writer = await createKey({ name: 'w', scopes: ['tasks:write'] });
    const deleter = await createKey({ name: 'd', scopes: ['tasks:delete'] });

    const created = await api('POST', '/api/v1/tasks', { apiKey: writer.key, body: { title: 'written' } });
    expect(created.status).toBe(201);
    const taskId = created.body.data.id;
    expect((await api('PATCH', `/api/v1/tasks/${taskId}`, { apiKey: writer.key, body: { title: 'updated' } })).status).toBe(200);
    const writerRead = await api('GET', `/api/v1/tasks/${taskId}`, { apiKey: writer.key });
    expect(writerRead.status).toBe(403);
    expect(writerRead.body.error).toContain('tasks:read');
    expect((await api('DELETE', `/api/v1/tasks/${taskId}`, { apiKey: writer.key })).body.error).toContain('tasks:delete');
    expect((await api('POST', '/api/v1/tasks', { apiKey: deleter.key, body: { title: 'x' } })).status).toBe(403);
    expect((await api('DELETE', `/api/v1/tasks/${taskId}`, { apiKey: deleter.key })).status).toBe(200);
  });

  it('lets entity:* and the bare words cover every action of their reach', async () => {
    const all = await createKey({ name: 'all-tasks', scopes: ['tasks:*'] });
    const bare = await api('POST', '/api/v1/keys', { cookie: user.cookie, body: { name: 'bare', scopes: ['read'] } });

    expect((await api('POST', '/api/v1/tasks', { apiKey: all.key, body: { title: 'star' } })).status).toBe(201);
    expect((await api('GET', '/api/v1/orders', { apiKey: all.key })).status).toBe(403);
    expect((await api('GET', '/api/v1/orders', { apiKey: bare.body.data.key })).status).toBe(200);
    const bareWrite = await api('POST', '/api/v1/tasks', { apiKey: bare.body.data.key, body: { title: 'x' } });
    expect(bareWrite.status).toBe(403);
    expect(bareWrite.body.error).toContain('tasks:write');
  });
});
