/**
 * Key management through HTTP on DynamoDB Local: both families, shown-once keys, validation,
 * the admin-only `*`, session-only access, ownership, audit log and usage counters.
 */
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createHash } from 'node:crypto';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';

const KEY_PATTERN = /^sk_live_[A-Za-z0-9_-]{40}$/;

let tenant: TestTenant;
let user: TestUser;
let other: TestUser;
let outsider: TestTenant;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
  other = await newUser(tenant.admin.cookie);
  outsider = await newTenant();
});

async function createKey(cookie: string, body: Record<string, unknown> = { name: 'ci', scopes: ['tasks:read'] }, path = '/api/v1/api-keys') {
  const response = await api('POST', path, { cookie, body });
  expect(response.status, response.text).toBe(201);
  return response.body.data as { id: string; key: string; keyPrefix: string; scopes: string[]; status: string; expiresAt: string | null };
}

describe('POST /api/v1/api-keys', () => {
  it('returns the full key once, with its 12-character prefix and a warning', async () => {
    const response = await api('POST', '/api/v1/api-keys', { cookie: user.cookie, body: { name: 'deploy bot', scopes: ['tasks:read', 'tasks:write'] } });

    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body.success).toBe(true);
    expect(response.body.warning).toMatch(/only once/);
    const data = response.body.data;
    expect(data.key).toMatch(KEY_PATTERN);
    expect(data.keyPrefix).toBe(data.key.slice(0, 12));
    expect(data).toMatchObject({ id: expect.stringMatching(/^key_/), name: 'deploy bot', scopes: ['tasks:read', 'tasks:write'], status: 'active', expiresAt: null });
  });

  it('makes an sk_test_ key with {"environment": "test"}', async () => {
    const data = await createKey(user.cookie, { name: 'sandbox', scopes: ['tasks:*'], environment: 'test' });

    expect(data.key).toMatch(/^sk_test_[A-Za-z0-9_-]{40}$/);
  });

  it('keeps an expiry', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();

    const data = await createKey(user.cookie, { name: 'temp', scopes: ['tasks:read'], expiresAt });

    expect(data.expiresAt).toBe(expiresAt);
  });

  it('refuses an unknown scope, entity or action with 422 naming scopes', async () => {
    for (const scopes of [['tasks:admin'], ['widgets:read'], ['everything'], [], 'tasks:read']) {
      const response = await api('POST', '/api/v1/api-keys', { cookie: user.cookie, body: { name: 'x', scopes } });

      expect(response.status).toBe(422);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(response.body.details.scopes).toBeTypeOf('string');
    }
  });

  it('refuses a missing name, a past expiry and unknown fields with 422 and details by field', async () => {
    const response = await api('POST', '/api/v1/api-keys', {
      cookie: user.cookie,
      body: { scopes: ['tasks:read'], expiresAt: '2001-01-01T00:00:00Z', owner: 'me' },
    });

    expect(response.status).toBe(422);
    expect(Object.keys(response.body.details).sort()).toEqual(['expiresAt', 'name', 'owner']);
  });

  it('refuses an expiresAt on a day the calendar does not have with 422, rather than rolling it over', async () => {
    const responses = await Promise.all(
      ['2030-02-30', '2030-02-30T10:00:00Z', '2030-04-31T00:00:00Z'].map((expiresAt) =>
        api('POST', '/api/v1/api-keys', { cookie: user.cookie, body: { name: 'rolled', scopes: ['tasks:read'], expiresAt } }),
      ),
    );

    for (const response of responses) {
      expect(response.status, response.text).toBe(422);
      expect(response.body.details).toHaveProperty('expiresAt');
    }
  });

  it("refuses '*' from a non-admin with 403", async () => {
    const response = await api('POST', '/api/v1/api-keys', { cookie: user.cookie, body: { name: 'all', scopes: ['*'] } });

    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });

  it("grants '*' to an admin", async () => {
    const data = await createKey(tenant.admin.cookie, { name: 'root', scopes: ['*'] });

    expect(data.scopes).toEqual(['*']);
  });
});

describe('the /api/v1/keys family', () => {
  it('creates keys with the bare scopes read, write, delete and lists and revokes them', async () => {
    const created = await api('POST', '/api/v1/keys', { cookie: other.cookie, body: { name: 'dash', scopes: ['read', 'write'], expiresAt: null } });
    expect(created.status).toBe(201);
    expect(created.body.data.key).toMatch(KEY_PATTERN);
    expect(created.body.warning).toBeTypeOf('string');

    const listed = await api('GET', '/api/v1/keys', { cookie: other.cookie });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { id: string }) => k.id)).toContain(created.body.data.id);
    expect(listed.text).not.toContain(created.body.data.key);

    const revoked = await api('DELETE', `/api/v1/keys/${created.body.data.id}`, { cookie: other.cookie });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ success: true, message: expect.any(String) });
    expect((await api('DELETE', `/api/v1/keys/${created.body.data.id}`, { cookie: other.cookie })).status).toBe(404);
  });

  it('refuses entity scopes and * in this family with 422', async () => {
    for (const scopes of [['tasks:read'], ['*'], ['admin']]) {
      const response = await api('POST', '/api/v1/keys', { cookie: other.cookie, body: { name: 'x', scopes } });

      expect(response.status).toBe(422);
      expect(response.body.details.scopes).toBeDefined();
    }
  });
});

describe('GET /api/v1/api-keys', () => {
  it("lists the caller's keys, newest first, never with the key or its hash", async () => {
    const first = await createKey(other.cookie, { name: 'first', scopes: ['tasks:read'] });
    const second = await createKey(other.cookie, { name: 'second', scopes: ['tasks:read'] });

    const response = await api('GET', '/api/v1/api-keys', { cookie: other.cookie });

    expect(response.status).toBe(200);
    const ids = response.body.data.map((k: { id: string }) => k.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    for (const record of response.body.data) {
      expect(record).not.toHaveProperty('key');
      expect(Object.keys(record)).toEqual(
        expect.arrayContaining(['id', 'keyPrefix', 'name', 'scopes', 'status', 'expiresAt', 'lastUsedAt', 'createdAt', 'totalRequests', 'requestsLast24h']),
      );
    }
    expect(response.text).not.toContain(first.key);
    expect(response.text).not.toContain(second.key);
    expect(response.text).not.toContain(createHash('sha256').update(first.key).digest('hex'));
  });

  it("does not show another user's keys, but shows the tenant's to an admin with ?all=true", async () => {
    const mine = await createKey(user.cookie, { name: 'mine', scopes: ['tasks:read'] });

    const asOther = await api('GET', '/api/v1/api-keys', { cookie: other.cookie });
    const asAdmin = await api('GET', '/api/v1/api-keys?all=true', { cookie: tenant.admin.cookie });
    const asAdminForUser = await api('GET', `/api/v1/api-keys?userId=${user.id}`, { cookie: tenant.admin.cookie });
    const asUserAll = await api('GET', '/api/v1/api-keys?all=true', { cookie: user.cookie });
    const asOutsider = await api('GET', '/api/v1/api-keys?all=true', { cookie: outsider.admin.cookie });

    expect(asOther.body.data.map((k: { id: string }) => k.id)).not.toContain(mine.id);
    expect(asAdmin.body.data.map((k: { id: string }) => k.id)).toContain(mine.id);
    expect(asAdminForUser.body.data.map((k: { id: string }) => k.id)).toContain(mine.id);
    expect(asUserAll.status).toBe(403);
    expect(asOutsider.body.data.map((k: { id: string }) => k.id)).not.toContain(mine.id);
  });
});

describe('GET, PATCH and DELETE /api/v1/api-keys/{id}', () => {
  it('reads one key without the key itself', async () => {
    const created = await createKey(user.cookie);

    const response = await api('GET', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: created.id, keyPrefix: created.keyPrefix, status: 'active', totalRequests: 0, requestsLast24h: 0 });
    expect(response.text).not.toContain(created.key);
  });

  it("answers 404 for another user's key, another tenant's key and an unknown id; an admin of the tenant may read it", async () => {
    const created = await createKey(user.cookie);

    expect((await api('GET', `/api/v1/api-keys/${created.id}`, { cookie: other.cookie })).status).toBe(404);
    expect((await api('GET', `/api/v1/api-keys/${created.id}`, { cookie: outsider.admin.cookie })).status).toBe(404);
    expect((await api('PATCH', `/api/v1/api-keys/${created.id}`, { cookie: other.cookie, body: { name: 'x' } })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/api-keys/${created.id}`, { cookie: other.cookie })).status).toBe(404);
    expect((await api('GET', '/api/v1/api-keys/key_doesnotexist', { cookie: user.cookie })).status).toBe(404);
    expect((await api('GET', `/api/v1/api-keys/${created.id}`, { cookie: tenant.admin.cookie })).status).toBe(200);
  });

  it('updates name, scopes, status and expiry', async () => {
    const created = await createKey(user.cookie);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();

    const response = await api('PATCH', `/api/v1/api-keys/${created.id}`, {
      cookie: user.cookie,
      body: { name: 'renamed', scopes: ['products:read', 'tasks:*'], status: 'inactive', expiresAt },
    });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ name: 'renamed', scopes: ['products:read', 'tasks:*'], status: 'inactive', expiresAt });
    const read = await api('GET', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie });
    expect(read.body.data).toMatchObject({ name: 'renamed', status: 'inactive', expiresAt });
  });

  it("refuses an unknown status, unknown scope or '*' for a non-admin", async () => {
    const created = await createKey(user.cookie);

    const badStatus = await api('PATCH', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie, body: { status: 'expired' } });
    const badScope = await api('PATCH', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie, body: { scopes: ['nope:read'] } });
    const wildcard = await api('PATCH', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie, body: { scopes: ['*'] } });

    expect(badStatus.status).toBe(422);
    expect(badStatus.body.details.status).toBeDefined();
    expect(badScope.status).toBe(422);
    expect(wildcard.status).toBe(403);
  });

  it('revokes a key: gone from reads and lists', async () => {
    const created = await createKey(user.cookie);

    const response = await api('DELETE', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie });

    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect((await api('GET', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie })).status).toBe(404);
    const list = await api('GET', '/api/v1/api-keys', { cookie: user.cookie });
    expect(list.body.data.map((k: { id: string }) => k.id)).not.toContain(created.id);
  });
});

describe('session only', () => {
  it('answers 401 without credentials', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/api-keys'],
      ['POST', '/api/v1/api-keys'],
      ['GET', '/api/v1/keys'],
      ['POST', '/api/v1/keys'],
    ]) {
      const response = await api(method, path, { body: method === 'POST' ? { name: 'x', scopes: ['read'] } : undefined });
      expect(response.status).toBe(401);
    }
  });

  it('answers 403 FORBIDDEN to a key, whatever its scopes: a key cannot manage keys', async () => {
    const root = await createKey(tenant.admin.cookie, { name: 'root', scopes: ['*'] });
    const target = await createKey(tenant.admin.cookie);

    for (const [method, path] of [
      ['GET', '/api/v1/api-keys'],
      ['POST', '/api/v1/api-keys'],
      ['GET', `/api/v1/api-keys/${target.id}`],
      ['PATCH', `/api/v1/api-keys/${target.id}`],
      ['DELETE', `/api/v1/api-keys/${target.id}`],
      ['GET', `/api/v1/api-keys/${target.id}/audit`],
      ['GET', '/api/v1/keys'],
      ['POST', '/api/v1/keys'],
      ['DELETE', `/api/v1/keys/${target.id}`],
    ]) {
      const body = method === 'POST' || method === 'PATCH' ? { name: 'x', scopes: ['read'] } : undefined;
      const response = await api(method, path, { apiKey: root.key, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
    }
    expect((await api('GET', `/api/v1/api-keys/${target.id}`, { cookie: tenant.admin.cookie })).body.data.status).toBe('active');
  });
});

describe('GET /api/v1/api-keys/{id}/audit', () => {
  it('lists created, updated and revoked with IP address and user agent, newest first', async () => {
    const created = await api('POST', '/api/v1/api-keys', { cookie: user.cookie, body: { name: 'audited', scopes: ['tasks:read'] }, headers: { 'User-Agent': 'audit-test/1.0' } });
    const id = created.body.data.id;
    await api('PATCH', `/api/v1/api-keys/${id}`, { cookie: user.cookie, body: { name: 'audited 2' }, headers: { 'User-Agent': 'audit-test/1.0' } });
    await api('DELETE', `/api/v1/api-keys/${id}`, { cookie: user.cookie, headers: { 'User-Agent': 'audit-test/1.0' } });

    const response = await api('GET', `/api/v1/api-keys/${id}/audit`, { cookie: user.cookie });

    expect(response.status).toBe(200);
    expect(response.body.data.map((e: { action: string }) => e.action)).toEqual(['revoked', 'updated', 'created']);
    for (const entry of response.body.data) {
      expect(entry).toMatchObject({ id: expect.any(String), keyId: id, ipAddress: '127.0.0.1', userAgent: 'audit-test/1.0', timestamp: expect.any(String) });
    }
  });

  it("is the owner's and the tenant admin's only", async () => {
    const created = await createKey(user.cookie);

    expect((await api('GET', `/api/v1/api-keys/${created.id}/audit`, { cookie: other.cookie })).status).toBe(404);
    expect((await api('GET', `/api/v1/api-keys/${created.id}/audit`, { cookie: tenant.admin.cookie })).status).toBe(200);
  });

  it('continues from the Link cursor and refuses a cursor it did not issue with 400 INVALID_REQUEST', async () => {
    const created = await createKey(user.cookie);
    await api('PATCH', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie, body: { name: 'renamed' } });
    const first = await api('GET', `/api/v1/api-keys/${created.id}/audit?limit=1`, { cookie: user.cookie });
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];

    const second = await api('GET', next!, { cookie: user.cookie });
    const forged = await Promise.all(['=', 'zzzz', Buffer.from('#').toString('base64url')].map((cursor) =>
      api('GET', `/api/v1/api-keys/${created.id}/audit?cursor=${encodeURIComponent(cursor)}`, { cookie: user.cookie }),
    ));

    expect(second.status).toBe(200);
    expect(second.body.data.map((e: { action: string }) => e.action)).toEqual(['created']);
    for (const response of forged) {
      expect(response.status, response.text).toBe(400);
      expect(response.body.code).toBe('INVALID_REQUEST');
      expect(response.body.details).toHaveProperty('cursor');
    }
  });
});

describe('usage counters', () => {
  it('counts requests per key in totalRequests and requestsLast24h, and sets lastUsedAt', async () => {
    const created = await createKey(user.cookie);
    for (let i = 0; i < 3; i++) expect((await api('GET', '/api/v1/users/me', { apiKey: created.key })).status).toBe(200);

    const response = await api('GET', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie });

    expect(response.body.data.requestsLast24h).toBe(3);
    expect(response.body.data.totalRequests).toBe(3);
    expect(Date.parse(response.body.data.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('storage', () => {
  let client: DynamoDBClient;
  beforeAll(() => {
    client = new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  });
  afterAll(() => client.destroy());

  async function allItems(table: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, never> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []).map((i) => unmarshall(i)));
      start = page.LastEvaluatedKey as Record<string, never> | undefined;
    } while (start);
    return items;
  }

  it('never stores the key: only its SHA-256 and its 12-character prefix', async () => {
    const created = await createKey(user.cookie);
    await api('GET', '/api/v1/users/me', { apiKey: created.key });
    await api('PATCH', `/api/v1/api-keys/${created.id}`, { cookie: user.cookie, body: { name: 'stored' } });

    const everything = JSON.stringify([...(await allItems('Identity')), ...(await allItems('Limits')), ...(await allItems('Events'))]);

    expect(everything).not.toContain(created.key);
    expect(everything).not.toContain(created.key.slice(12));
    expect(everything).toContain(`APIKEY#${createHash('sha256').update(created.key).digest('hex')}`);
    expect(everything).toContain(created.keyPrefix);
  });
});
