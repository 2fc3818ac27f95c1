/**
 * Webhook registrations through HTTP on the shared local server (no ALLOW_INSECURE_WEBHOOKS):
 * the target-address rule, event names, the secret never answered, tenancy and scopes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant } from '../../support/identity.js';

const SECRET = 'registration-secret-0123456789';
// A literal public address: no DNS needed to register it.
const PUBLIC_URL = 'https://93.184.215.14/hooks/entity-record';

let tenant: TestTenant;

beforeAll(async () => {
  tenant = await newTenant();
});

async function register(body: unknown, cookie = tenant.admin.cookie) {
  return api('POST', '/api/v1/webhooks', { cookie, body });
}

describe('POST /api/v1/webhooks target rule', () => {
  it.each([
    ['http://127.0.0.1/hook', 'https'],
    ['https://127.0.0.1/hook', 'address'],
    ['https://169.254.169.254/latest/meta-data', 'address'],
    ['https://[::1]/hook', 'address'],
    ['https://[::ffff:10.0.0.1]/hook', 'address'],
    ['https://100.64.0.1/hook', 'address'],
    ['https://localhost/hook', 'resolve'],
    ['http://example.com/hook', 'https'],
    ['ftp://example.com/hook', 'https'],
    ['not a url', 'URL'],
  ])('refuses %s with 422 naming url', async (url, word) => {
    const response = await register({ url, events: ['task.created'], secret: SECRET });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ success: false, code: 'VALIDATION_FAILED' });
    expect(response.body.details.url).toContain(word);
  });
});

describe('POST /api/v1/webhooks', () => {
  it('registers a webhook and never answers its secret', async () => {
    const response = await register({ url: PUBLIC_URL, events: ['task.created', 'task.deleted'], secret: SECRET });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ url: PUBLIC_URL, events: ['task.created', 'task.deleted'], status: 'active' });
    expect(response.body.data.id).toMatch(/^whk_/);
    expect(response.text).not.toContain(SECRET);
    const list = await api('GET', '/api/v1/webhooks', { cookie: tenant.admin.cookie });
    expect(list.status).toBe(200);
    expect(list.body.data.map((w: { id: string }) => w.id)).toContain(response.body.data.id);
    expect(list.text).not.toContain(SECRET);
    const one = await api('GET', `/api/v1/webhooks/${response.body.data.id}`, { cookie: tenant.admin.cookie });
    expect(one.status).toBe(200);
    expect(one.text).not.toContain(SECRET);
  });

  it('answers 422 naming an unknown event', async () => {
    const response = await register({ url: PUBLIC_URL, events: ['task.created', 'task.exploded'], secret: SECRET });
    expect(response.status).toBe(422);
    expect(response.body.details.events).toContain("'task.exploded'");
  });

  it('accepts the events of every registered entity', async () => {
    const response = await register({ url: PUBLIC_URL, events: ['product.updated', 'order.deleted', 'comment.created'], secret: SECRET });
    expect(response.status).toBe(201);
  });

  it('answers 422 for a missing or short secret and for unknown fields', async () => {
    const response = await register({ url: PUBLIC_URL, events: ['task.created'], secret: 'short', extra: 1 });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.details).sort()).toEqual(['extra', 'secret']);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const response = await api('POST', '/api/v1/webhooks', { cookie: tenant.admin.cookie, rawBody: '{nope', headers: { 'Content-Type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.body.success).toBe(false);
  });
});

describe('webhooks belong to their tenant', () => {
  it('another tenant gets 404 for the id and an empty list', async () => {
    const created = await register({ url: PUBLIC_URL, events: ['task.created'], secret: SECRET });
    const other = await newTenant();
    const id = created.body.data.id;
    expect((await api('GET', `/api/v1/webhooks/${id}`, { cookie: other.admin.cookie })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/webhooks/${id}`, { cookie: other.admin.cookie })).status).toBe(404);
    expect((await api('GET', `/api/v1/webhooks/${id}/deliveries`, { cookie: other.admin.cookie })).status).toBe(404);
    expect((await api('POST', `/api/v1/webhooks/${id}/test`, { cookie: other.admin.cookie })).status).toBe(404);
    const list = await api('GET', '/api/v1/webhooks', { cookie: other.admin.cookie });
    expect(list.body.data).toEqual([]);
  });

  it('a user of the tenant does not see the admin’s webhook', async () => {
    const created = await register({ url: PUBLIC_URL, events: ['task.created'], secret: SECRET });
    const user = await newUser(tenant.admin.cookie);
    expect((await api('GET', `/api/v1/webhooks/${created.body.data.id}`, { cookie: user.cookie })).status).toBe(404);
  });

  it('DELETE removes it', async () => {
    const created = await register({ url: PUBLIC_URL, events: ['task.created'], secret: SECRET });
    const id = created.body.data.id;
    expect((await api('DELETE', `/api/v1/webhooks/${id}`, { cookie: tenant.admin.cookie })).status).toBe(200);
    expect((await api('GET', `/api/v1/webhooks/${id}`, { cookie: tenant.admin.cookie })).status).toBe(404);
  });

  it('PATCH disables and re-enables, and checks what it changes', async () => {
    const created = await register({ url: PUBLIC_URL, events: ['task.created'], secret: SECRET });
    const path = `/api/v1/webhooks/${created.body.data.id}`;
    const disabled = await api('PATCH', path, { cookie: tenant.admin.cookie, body: { status: 'disabled' } });
    expect(disabled.body.data.status).toBe('disabled');
    expect((await api('GET', path, { cookie: tenant.admin.cookie })).body.data.status).toBe('disabled');
    const enabled = await api('PATCH', path, { cookie: tenant.admin.cookie, body: { status: 'active' } });
    expect(enabled.body.data.status).toBe('active');
    const bad = await api('PATCH', path, { cookie: tenant.admin.cookie, body: { url: 'https://10.1.2.3/x', status: 'paused' } });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.details).sort()).toEqual(['status', 'url']);
  });
});

describe('webhook scopes', () => {
  it('webhooks:read lists but cannot register; webhooks:write registers', async () => {
    const readKey = await api('POST', '/api/v1/api-keys', { cookie: tenant.admin.cookie, body: { name: 'hooks-read', scopes: ['webhooks:read'] } });
    expect(readKey.status).toBe(201);
    const key = readKey.body.data.key as string;
    expect((await api('GET', '/api/v1/webhooks', { apiKey: key })).status).toBe(200);
    const denied = await api('POST', '/api/v1/webhooks', { apiKey: key, body: { url: PUBLIC_URL, events: ['task.created'], secret: SECRET } });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    const writeKey = await api('POST', '/api/v1/api-keys', { cookie: tenant.admin.cookie, body: { name: 'hooks-write', scopes: ['webhooks:write'] } });
    const created = await api('POST', '/api/v1/webhooks', { apiKey: writeKey.body.data.key, body: { url: PUBLIC_URL, events: ['task.created'], secret: SECRET } });
    expect(created.status).toBe(201);
  });

  it('no credentials: 401', async () => {
    expect((await api('GET', '/api/v1/webhooks')).status).toBe(401);
  });
});
