/**
 * The dynamic entity endpoints through HTTP on DynamoDB Local, for every entity of the registry:
 * CREATE, READ, UPDATE, LIST, DELETE (hard, soft, disabled), validation, and every status and
 * error code of SPEC.md's dynamic-endpoint table (429 is in limits.int.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { as, created, keyOf, PROTECTED, type Caller } from './support.js';

let tenant: TestTenant;
let user: TestUser;
let me: Caller;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
  me = as(await keyOf(user.cookie));
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Case {
  slug: string;
  id: RegExp;
  body: () => Promise<Record<string, unknown>>;
  /** What CREATE answers beyond the body (defaults, generated fields). */
  extra: () => Record<string, unknown>;
  change: Record<string, unknown>;
  invalid: Record<string, unknown>;
  details: Record<string, string>;
  deletion: 'hard' | 'soft' | 'disabled';
}

const cases: Case[] = [
  {
    slug: 'tasks',
    id: /^tsk_[A-Za-z0-9]{22}$/,
    body: async () => ({ title: 'Write the report', description: 'Quarterly numbers' }),
    extra: () => ({ status: 'todo', priority: 'medium', tagIds: [] }),
    change: { status: 'in_progress', priority: 'high' },
    invalid: { title: 'x'.repeat(201), status: 'done', priority: 'urgent', estimate: 3 },
    details: {
      title: 'must be at most 200 characters',
      status: 'must be one of: todo, in_progress, completed',
      priority: 'must be one of: low, medium, high',
      estimate: 'is not a field of tasks',
    },
    deletion: 'hard',
  },
  {
    slug: 'products',
    id: UUID,
    body: async () => ({ name: 'Desk lamp', price: 39.5, category: 'lighting' }),
    extra: () => ({ status: 'active' }),
    change: { price: 35, status: 'inactive' },
    invalid: { price: -1, status: 'sold-out' },
    details: { name: 'is required', price: 'must be greater than or equal to 0', status: 'must be one of: active, inactive' },
    deletion: 'soft',
  },
  {
    slug: 'comments',
    id: /^cmt_[A-Za-z0-9]{22}$/,
    body: async () => ({ taskId: (await created(me, 'tasks', { title: 'Commented' })).id, body: 'Looks good' }),
    extra: () => ({ authorId: user.id }),
    change: { body: 'Looks great' },
    invalid: { body: 'b'.repeat(5001) },
    details: { taskId: 'is required', body: 'must be at most 5000 characters' },
    deletion: 'hard',
  },
  {
    slug: 'tags',
    id: /^tag_[A-Za-z0-9]{22}$/,
    body: async () => ({ name: 'urgent', color: '#ff0000' }),
    extra: () => ({}),
    change: { color: '#00FF00' },
    invalid: { name: 'n'.repeat(51), color: 'red' },
    details: { name: 'must be at most 50 characters', color: 'must match the pattern ^#[0-9a-fA-F]{6}$' },
    deletion: 'hard',
  },
  {
    slug: 'orders',
    id: /^ord_[A-Za-z0-9]{22}$/,
    body: async () => ({ customerId: 'cus_external', total: 120 }),
    extra: () => ({ status: 'pending' }),
    change: { status: 'paid' },
    invalid: { status: 'lost', total: -5 },
    details: { status: 'must be one of: pending, paid, shipped, cancelled', total: 'must be greater than or equal to 0' },
    deletion: 'disabled',
  },
  {
    slug: 'customers',
    id: /^cus_[A-Za-z0-9]{22}$/,
    body: async () => ({ name: 'Ada Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0000' }),
    extra: () => ({}),
    change: { phone: '+44 20 7946 0001' },
    invalid: { email: 'not-an-email', vip: true },
    details: { name: 'is required', email: 'must match the pattern ^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', vip: 'is not a field of customers' },
    deletion: 'soft',
  },
];

describe.each(cases)('/api/v1/$slug', (c) => {
  it('CREATE answers 201 with the record: generated id and timestamps, defaults, the fields sent', async () => {
    const body = await c.body();

    const response = await me.post(`/api/v1/${c.slug}`, { ...body, id: 'mine', createdAt: '2000-01-01T00:00:00.000Z' });

    expect(response.status).toBe(201);
    expect(response.body.success).toBe(true);
    const record = response.body.data;
    expect(record.id).toMatch(c.id);
    expect(record).toEqual({ id: record.id, ...body, ...c.extra(), createdAt: expect.stringMatching(ISO), updatedAt: record.createdAt });
    expect(Date.now() - Date.parse(record.createdAt)).toBeLessThan(60_000);
  });

  it('READ answers 200 with the same record; UPDATE changes only the fields sent and moves updatedAt', async () => {
    const record = await created(me, c.slug, await c.body());

    const read = await me.get(`/api/v1/${c.slug}/${record.id}`);
    const updated = await me.patch(`/api/v1/${c.slug}/${record.id}`, c.change);
    const reread = await me.get(`/api/v1/${c.slug}/${record.id}`);

    expect(read.status).toBe(200);
    expect(read.body).toEqual({ success: true, data: record });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toEqual({ ...record, ...c.change, updatedAt: expect.stringMatching(ISO) });
    expect(Date.parse(updated.body.data.updatedAt)).toBeGreaterThan(Date.parse(record.updatedAt));
    expect(reread.body.data).toEqual(updated.body.data);
  });

  it('LIST answers 200 with the records and the pagination object', async () => {
    const record = await created(me, c.slug, await c.body());

    const response = await me.get(`/api/v1/${c.slug}?limit=100`);

    expect(response.status).toBe(200);
    expect(response.body.data).toContainEqual(record);
    expect(response.body.pagination).toMatchObject({ page: 1, limit: 100, total: expect.any(Number), totalPages: expect.any(Number), hasNext: expect.any(Boolean), hasPrev: false });
  });

  it('CREATE and UPDATE answer 422 VALIDATION_FAILED naming every failing field', async () => {
    const record = await created(me, c.slug, await c.body());

    const create = await me.post(`/api/v1/${c.slug}`, c.invalid);
    const update = await me.patch(`/api/v1/${c.slug}/${record.id}`, c.invalid);

    expect(create.status).toBe(422);
    expect(create.body).toEqual({ success: false, error: 'Validation failed', code: 'VALIDATION_FAILED', details: c.details });
    expect(update.status).toBe(422);
    const requiredOnly = Object.fromEntries(Object.entries(c.details).filter(([, m]) => m !== 'is required'));
    expect(update.body.details).toEqual(requiredOnly);
    expect((await me.get(`/api/v1/${c.slug}/${record.id}`)).body.data).toEqual(record);
  });

  if (c.deletion === 'hard') {
    it('DELETE removes the record: 200 {success, message}, then 404 on READ and absent from LIST', async () => {
      const record = await created(me, c.slug, await c.body());

      const response = await me.del(`/api/v1/${c.slug}/${record.id}`);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: expect.stringContaining(record.id) });
      const read = await me.get(`/api/v1/${c.slug}/${record.id}`);
      expect(read.status).toBe(404);
      expect(read.body.code).toBe('NOT_FOUND');
      expect((await me.get(`/api/v1/${c.slug}?limit=100`)).body.data.map((r: { id: string }) => r.id)).not.toContain(record.id);
      expect((await me.del(`/api/v1/${c.slug}/${record.id}`)).status).toBe(404);
    });
  }

  if (c.deletion === 'soft') {
    it('DELETE marks deletedAt: 200 with the record, then 404 on READ and UPDATE, absent from LIST', async () => {
      const record = await created(me, c.slug, await c.body());

      const response = await me.del(`/api/v1/${c.slug}/${record.id}`);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, data: { ...record, updatedAt: expect.stringMatching(ISO), deletedAt: expect.stringMatching(ISO) } });
      expect(response.body.data.deletedAt).toBe(response.body.data.updatedAt);
      expect((await me.get(`/api/v1/${c.slug}/${record.id}`)).status).toBe(404);
      expect((await me.patch(`/api/v1/${c.slug}/${record.id}`, c.change)).status).toBe(404);
      expect((await me.del(`/api/v1/${c.slug}/${record.id}`)).status).toBe(404);
      expect((await me.get(`/api/v1/${c.slug}?limit=100`)).body.data.map((r: { id: string }) => r.id)).not.toContain(record.id);
    });
  }

  if (c.deletion === 'disabled') {
    it('DELETE answers 405 METHOD_NOT_ALLOWED and leaves the record', async () => {
      const record = await created(me, c.slug, await c.body());

      const response = await me.del(`/api/v1/${c.slug}/${record.id}`);

      expect(response.status).toBe(405);
      expect(response.body).toMatchObject({ success: false, code: 'METHOD_NOT_ALLOWED' });
      expect(response.headers.get('allow')).toBe('GET, POST, PATCH, OPTIONS');
      expect((await me.get(`/api/v1/${c.slug}/${record.id}`)).status).toBe(200);
    });
  }

  it('OPTIONS answers 200 with the entity description', async () => {
    const response = await me.options(`/api/v1/${c.slug}`);

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data)).toEqual(['entity', 'slug', 'methods', 'schema', 'relations', 'permissions', 'rateLimit']);
    expect(response.body.data.slug).toBe(c.slug);
    expect(response.body.data.permissions).toEqual({ read: true, write: true, delete: c.deletion !== 'disabled' });
  });

  it('READ, UPDATE and DELETE of an unknown id answer 404 NOT_FOUND', async () => {
    for (const response of [
      await me.get(`/api/v1/${c.slug}/nope`),
      await me.patch(`/api/v1/${c.slug}/nope`, c.change),
      ...(c.deletion === 'disabled' ? [] : [await me.del(`/api/v1/${c.slug}/nope`)]),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
    }
  });
});

describe('errors shared by every entity', () => {
  it('answers 404 ENTITY_NOT_FOUND for an unregistered slug, whatever the method', async () => {
    const responses = [
      await me.get('/api/v1/widgets'),
      await me.post('/api/v1/widgets', { a: 1 }),
      await me.get('/api/v1/widgets/w1'),
      await me.patch('/api/v1/widgets/w1', { a: 1 }),
      await me.del('/api/v1/widgets/w1'),
      await me.options('/api/v1/widgets'),
      await as(undefined).get('/api/v1/widgets'),
    ];

    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: "Entity 'widgets' is not registered", code: 'ENTITY_NOT_FOUND' });
    }
  });

  it('answers 401 without credentials and with an unknown key', async () => {
    const unknownKey = as(`sk_live_${'x'.repeat(40)}`);
    for (const response of [
      await as(undefined).get('/api/v1/tasks'),
      await as(undefined).post('/api/v1/tasks', { title: 'x' }),
      await as(undefined).get('/api/v1/tasks/tsk_1'),
      await as(undefined).patch('/api/v1/tasks/tsk_1', { title: 'x' }),
      await as(undefined).del('/api/v1/tasks/tsk_1'),
      await as(undefined).options('/api/v1/tasks'),
      await unknownKey.get('/api/v1/tasks'),
    ]) {
      expect(response.status).toBe(401);
      expect(response.body.success).toBe(false);
      expect(['AUTHENTICATION_FAILED', 'UNAUTHORIZED', 'INVALID_API_KEY']).toContain(response.body.code);
    }
  });

  it('answers 403 INSUFFICIENT_PERMISSIONS naming the scope a key lacks', async () => {
    const reader = as(await keyOf(user.cookie, ['tasks:read']));
    const task = await created(me, 'tasks', { title: 'Scoped' });

    const list = await reader.get('/api/v1/tasks');
    const create = await reader.post('/api/v1/tasks', { title: 'x' });
    const update = await reader.patch(`/api/v1/tasks/${task.id}`, { title: 'x' });
    const remove = await reader.del(`/api/v1/tasks/${task.id}`);
    const otherEntity = await reader.get('/api/v1/tags');

    expect(list.status).toBe(200);
    expect(create.status).toBe(403);
    expect(create.body).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS', error: 'Missing required scope: tasks:write' });
    expect(update.status).toBe(403);
    expect(remove.status).toBe(403);
    expect(remove.body.error).toBe('Missing required scope: tasks:delete');
    expect(otherEntity.status).toBe(403);
    expect(otherEntity.body.error).toBe('Missing required scope: tags:read');
  });

  it('answers 400 INVALID_REQUEST for malformed JSON, a non-object body and a wrong Content-Type', async () => {
    const key = await keyOf(user.cookie);
    for (const [rawBody, contentType] of [['{"title":', 'application/json'], ['["a"]', 'application/json'], ['title=x', 'text/plain']]) {
      const response = await api('POST', '/api/v1/tasks', { apiKey: key, rawBody, headers: { 'Content-Type': contentType } });

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
    }
    const patch = await api('PATCH', '/api/v1/tasks/tsk_x', { apiKey: key, rawBody: '{', headers: { 'Content-Type': 'application/json' } });
    expect(patch.status).toBe(400);
  });

  it('answers a CORS preflight with 204 and no authentication', async () => {
    const response = await api('OPTIONS', '/api/v1/tasks', { headers: { Origin: 'http://127.0.0.1', 'Access-Control-Request-Method': 'POST' } });
    const onRecord = await api('OPTIONS', '/api/v1/tasks/tsk_1', { headers: { Origin: 'http://127.0.0.1', 'Access-Control-Request-Method': 'PATCH' } });

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(onRecord.status).toBe(204);
  });

  it('never shows internal attributes nor protected fields, and refuses protected names as unknown fields', async () => {
    const record = await created(me, 'tasks', { title: 'Clean' });
    const refused = await me.post('/api/v1/tasks', { title: 'x', password: 'hunter2', passwordHash: 'abc' });

    const read = await me.get(`/api/v1/tasks/${record.id}`);
    const list = await me.get('/api/v1/tasks');

    for (const text of [read.text, list.text]) {
      expect(text).not.toMatch(PROTECTED);
      expect(text).not.toMatch(/"(pk|sk|tenantId|ownerId|version|kind)"/);
    }
    expect(refused.status).toBe(422);
    expect(refused.body.details).toEqual({ password: 'is not a field of tasks', passwordHash: 'is not a field of tasks' });
  });

  it('carries the rate-limit headers on entity responses', async () => {
    const response = await me.get('/api/v1/tasks');

    expect(response.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(response.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    expect(response.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
  });
});

describe('ETag', () => {
  it('READ carries an ETag; If-None-Match with it answers 304 with no body; a change gives a new ETag', async () => {
    const record = await created(me, 'tags', { name: 'etag' });
    const first = await me.get(`/api/v1/tags/${record.id}`);
    const etag = first.headers.get('etag')!;

    const notModified = await me.get(`/api/v1/tags/${record.id}`, { headers: { 'If-None-Match': etag } });
    await me.patch(`/api/v1/tags/${record.id}`, { name: 'etag2' });
    const changed = await me.get(`/api/v1/tags/${record.id}`, { headers: { 'If-None-Match': etag } });

    // A record's ETag is strong (If-Match compares strongly) and names its version.
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('LIST carries an ETag and answers 304 while nothing changes', async () => {
    const fresh = as(await keyOf((await newUser(tenant.admin.cookie)).cookie));
    await created(fresh, 'customers', { name: 'Grace' });
    const first = await fresh.get('/api/v1/customers');
    const etag = first.headers.get('etag')!;

    const notModified = await fresh.get('/api/v1/customers', { headers: { 'If-None-Match': etag } });
    await created(fresh, 'customers', { name: 'Alan' });
    const changed = await fresh.get('/api/v1/customers', { headers: { 'If-None-Match': etag } });

    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(changed.status).toBe(200);
    expect(changed.body.data).toHaveLength(2);
  });
});

describe('LIST pagination and order', () => {
  let pager: Caller;
  const ids: string[] = [];

  beforeAll(async () => {
    // A user of its own: their customers partition holds exactly these five records.
    pager = as(await keyOf((await newUser(tenant.admin.cookie)).cookie));
    for (let i = 0; i < 5; i++) ids.push((await created(pager, 'customers', { name: `Customer ${i}` })).id);
  });

  it('orders by createdAt descending (newest first)', async () => {
    const response = await pager.get('/api/v1/customers');

    expect(response.body.data.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    expect(response.body.pagination).toEqual({ page: 1, limit: 20, total: 5, totalPages: 1, hasNext: false, hasPrev: false, nextCursor: null });
  });

  it('pages with page and limit, with hasNext / hasPrev and a total from the counters', async () => {
    const first = await pager.get('/api/v1/customers?limit=2');
    const second = await pager.get('/api/v1/customers?limit=2&page=2');
    const last = await pager.get('/api/v1/customers?limit=2&page=3');
    const beyond = await pager.get('/api/v1/customers?limit=2&page=4');
    const newest = [...ids].reverse();

    expect(first.body.data.map((r: { id: string }) => r.id)).toEqual(newest.slice(0, 2));
    expect(first.body.pagination).toMatchObject({ page: 1, limit: 2, total: 5, totalPages: 3, hasNext: true, hasPrev: false, nextCursor: expect.any(String) });
    expect(second.body.data.map((r: { id: string }) => r.id)).toEqual(newest.slice(2, 4));
    expect(second.body.pagination).toMatchObject({ page: 2, hasNext: true, hasPrev: true });
    expect(last.body.data.map((r: { id: string }) => r.id)).toEqual(newest.slice(4));
    expect(last.body.pagination).toMatchObject({ page: 3, hasNext: false, hasPrev: true, nextCursor: null });
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination).toMatchObject({ page: 4, total: 5, hasNext: false, hasPrev: true });
  });

  it('continues from nextCursor exactly where page numbers would', async () => {
    const first = await pager.get('/api/v1/customers?limit=2');
    const next = await pager.get(`/api/v1/customers?limit=2&cursor=${first.body.pagination.nextCursor}`);
    const byNumber = await pager.get('/api/v1/customers?limit=2&page=2');

    expect(next.status).toBe(200);
    expect(next.body.data).toEqual(byNumber.body.data);
    expect(next.body.pagination).toEqual(byNumber.body.pagination);
  });

  it('caps limit at 100 and refuses a page or limit that is not a positive integer', async () => {
    const capped = await pager.get('/api/v1/customers?limit=1000');
    const bad = await pager.get('/api/v1/customers?page=0&limit=abc');
    const badCursor = await pager.get('/api/v1/customers?cursor=nonsense');

    expect(capped.status).toBe(200);
    expect(capped.body.pagination.limit).toBe(100);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_REQUEST', details: { page: 'must be a positive integer', limit: 'must be a positive integer' } });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.details).toHaveProperty('cursor');
  });

  it('keeps the total right through updates and deletes', async () => {
    const extra = await created(pager, 'customers', { name: 'Temporary' });
    await pager.patch(`/api/v1/customers/${extra.id}`, { name: 'Renamed' });
    const during = await pager.get('/api/v1/customers?limit=1');
    await pager.del(`/api/v1/customers/${extra.id}`);
    const after = await pager.get('/api/v1/customers?limit=1');

    expect(during.body.pagination.total).toBe(6);
    expect(after.body.pagination.total).toBe(5);
  });
});
