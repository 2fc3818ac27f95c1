/**
 * GET /api/v1/{entity}/aggregate through HTTP on DynamoDB Local: the figures of each group against
 * the records created, tenancy and row-level security as LIST applies them (orders: private; products:
 * public, soft-deleted), LIST's filters, bad input, and AGGREGATE_SCAN_LIMIT (a server of its own,
 * with the test-only members entity: date fields for the time buckets).
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { as, created, keyOf, type Caller } from './support.js';

type Group = { key: Record<string, unknown>; count?: number; sum?: Record<string, number>; avg?: Record<string, number | null>; min?: Record<string, unknown>; max?: Record<string, unknown> };

const groupsOf = (response: { body: { data: Group[] } }) => response.body.data;

describe('aggregates of a private entity (orders)', () => {
  let asAlice: Caller;
  let asBob: Caller;
  let asAdmin: Caller;
  let asOutsider: Caller;
  let asTaskReader: Caller;

  beforeAll(async () => {
    const [acme, globex] = await Promise.all([newTenant(), newTenant()]);
    const [alice, bob] = await Promise.all([newUser(acme.admin.cookie), newUser(acme.admin.cookie)]);
    [asAlice, asBob, asAdmin, asOutsider, asTaskReader] = (
      await Promise.all([keyOf(alice.cookie), keyOf(bob.cookie), keyOf(acme.admin.cookie, ['*']), keyOf(globex.admin.cookie, ['*']), keyOf(alice.cookie, ['tasks:read'])])
    ).map(as);
    for (const [caller, status, total] of [
      [asAlice, 'paid', 30],
      [asAlice, 'paid', 40],
      [asAlice, 'pending', 12.5],
      [asBob, 'paid', 100],
      [asBob, 'shipped', 7],
      [asAdmin, 'pending', 1],
      [asOutsider, 'paid', 999],
    ] as const) {
      await created(caller, 'orders', { status, total });
    }
    // An order without a total: counted, not summed, not averaged.
    await created(asAlice, 'orders', { status: 'cancelled' });
  }, 90_000);

  it('counts, sums and averages per status only the caller’s own orders (a plain user)', async () => {
    const response = await asAlice.get('/api/v1/orders/aggregate?count&sum=total&avg=total&groupBy=status');

    expect(response.status, response.text).toBe(200);
    expect(groupsOf(response)).toEqual([
      { key: { status: 'cancelled' }, count: 1, sum: { total: 0 }, avg: { total: null } },
      { key: { status: 'paid' }, count: 2, sum: { total: 70 }, avg: { total: 35 } },
      { key: { status: 'pending' }, count: 1, sum: { total: 12.5 }, avg: { total: 12.5 } },
    ]);
    expect(response.body.meta).toEqual({ groups: 3, source: 'counters' });
    expect(response.headers.get('x-request-cost')).toMatch(/rcu=/);
  });

  it('answers an admin the whole tenant, and another tenant only its own', async () => {
    const admin = await asAdmin.get('/api/v1/orders/aggregate?sum=total&min=total&max=total&count');
    const outsider = await asOutsider.get('/api/v1/orders/aggregate');

    expect(groupsOf(admin)).toEqual([{ key: {}, count: 7, sum: { total: 190.5 }, min: { total: 1 }, max: { total: 100 } }]);
    expect(groupsOf(outsider)).toEqual([{ key: {}, count: 1 }]);
  });

  it('applies LIST’s filters: an indexed equality, a filter operator', async () => {
    const paid = await asAdmin.get('/api/v1/orders/aggregate?status=paid&sum=total');
    const large = await asAdmin.get(`/api/v1/orders/aggregate?count&filter=${encodeURIComponent(JSON.stringify({ total: { $gte: 30 } }))}`);
    const none = await asAdmin.get('/api/v1/orders/aggregate?status=paid&groupBy=status&startDate=2001-01-01&endDate=2001-12-31');

    expect(groupsOf(paid)).toEqual([{ key: {}, sum: { total: 170 } }]);
    expect(groupsOf(large)).toEqual([{ key: {}, count: 3 }]);
    expect(none.status, none.text).toBe(200);
    expect(groupsOf(none)).toEqual([]);
  });

  it('answers an empty aggregate without grouping as one group: count 0, sum 0, avg null', async () => {
    const response = await asBob.get('/api/v1/orders/aggregate?status=cancelled&count&sum=total&avg=total&min=total');

    expect(groupsOf(response)).toEqual([{ key: {}, count: 0, sum: { total: 0 }, avg: { total: null }, min: { total: null } }]);
  });

  it('refuses an anonymous caller (401) and a key without the entity’s read scope (403)', async () => {
    const anonymous = await as(undefined).get('/api/v1/orders/aggregate');
    const taskReader = await asTaskReader.get('/api/v1/orders/aggregate');

    expect(anonymous.status, anonymous.text).toBe(401);
    expect(taskReader.status, taskReader.text).toBe(403);
  });

  it.each([
    ['a sum of a non-number field', 'sum=status', 'sum'],
    ['an avg of an unknown field', 'avg=weight', 'avg'],
    ['a min of an enum', 'min=status', 'min'],
    ['a protected field', 'max=password', 'max'],
    ['three groupBy fields', 'groupBy=status,customerId,total', 'groupBy'],
    ['a groupBy of a number field', 'groupBy=total', 'groupBy'],
    ['an unknown interval', 'interval=year', 'interval'],
    ['a dateField that is not a date', 'interval=day&dateField=total', 'dateField'],
    ['a count of a field', 'count=total', 'count'],
    ['a page parameter', 'limit=5', 'limit'],
    ['a sort', 'sort=total', 'sort'],
  ])('refuses %s with 400 INVALID_REQUEST naming it', async (_label, query, parameter) => {
    const response = await asAdmin.get(`/api/v1/orders/aggregate?${query}`);

    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('INVALID_REQUEST');
    expect(Object.keys(response.body.details)).toContain(parameter);
  });

  it('refuses LIST’s bad input as LIST does: an unknown parameter, a bad filter', async () => {
    const unknown = await asAdmin.get('/api/v1/orders/aggregate?stauts=paid');
    const filter = await asAdmin.get('/api/v1/orders/aggregate?filter=not-json');

    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toHaveProperty('stauts');
    expect(filter.status).toBe(400);
    expect(filter.body.code).toBe('INVALID_FILTER');
  });

  it('answers 404 ENTITY_NOT_FOUND for an unknown entity', async () => {
    const response = await asAdmin.get('/api/v1/nothings/aggregate');

    expect(response.status).toBe(404);
    expect(response.body.code).toBe('ENTITY_NOT_FOUND');
  });
});

describe('aggregates of a public entity (products)', () => {
  const category = `agg-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    const [acme, globex] = await Promise.all([newTenant(), newTenant()]);
    const [asAcme, asGlobex] = (await Promise.all([keyOf(acme.admin.cookie, ['*']), keyOf(globex.admin.cookie, ['*'])])).map(as);
    await created(asAcme, 'products', { name: 'Anvil', price: 10, category, status: 'active' });
    await created(asAcme, 'products', { name: 'Rocket', price: 250, category, status: 'inactive' });
    await created(asGlobex, 'products', { name: 'Glue', price: 4, category, status: 'active' });
    const gone = await created(asGlobex, 'products', { name: 'Gone', price: 1000, category, status: 'active' });
    const deleted = await asGlobex.del(`/api/v1/products/${gone.id}`);
    expect(deleted.status, deleted.text).toBe(200);
  }, 60_000);

  it('answers anonymous callers every tenant’s live records, soft-deleted ones left out', async () => {
    const response = await as(undefined).get(`/api/v1/products/aggregate?category=${category}&groupBy=status&sum=price&max=price`);

    expect(response.status, response.text).toBe(200);
    expect(groupsOf(response)).toStrictEqual([
      { key: { status: 'active' }, sum: { price: 14 }, max: { price: 10 } },
      { key: { status: 'inactive' }, sum: { price: 250 }, max: { price: 250 } },
    ]);
  });

  it('matches LIST’s search and groups by a second field', async () => {
    const response = await as(undefined).get(`/api/v1/products/aggregate?category=${category}&search=rock&groupBy=category,status`);
    const listed = await as(undefined).get(`/api/v1/products?category=${category}&search=rock`);

    expect(groupsOf(response)).toEqual([{ key: { category, status: 'inactive' }, count: 1 }]);
    expect(listed.body.data).toHaveLength(1);
  });
});

describe('time buckets and the scan limit (members, AGGREGATE_SCAN_LIMIT=8)', () => {
  const ENTITIES_DIR = fileURLToPath(new URL('../../support/entities/', import.meta.url));
  let server: TestServer;
  let key: string;
  let bigKey: string;
  const get = (path: string, apiKey = key) => api('GET', path, { apiKey, baseUrl: server.url });

  beforeAll(async () => {
    server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ENTITIES_DIR, AGGREGATE_SCAN_LIMIT: '8' } });
    const [small, big] = await Promise.all([newTenant(), newTenant()]);
    [key, bigKey] = await Promise.all([keyOf(small.admin.cookie, ['*']), keyOf(big.admin.cookie, ['*'])]);
    const post = (body: unknown, apiKey = key) => api('POST', '/api/v1/members', { apiKey, baseUrl: server.url, body });
    const rows: [string, string, number, string][] = [
      ['Sun', '2024-01-28', 1, 'gold'], // Sunday: ISO week of Monday 2024-01-22
      ['Mon', '2024-01-29', 2, 'gold'], // Monday: week of 2024-01-29
      ['Wed', '2024-01-31', 3, 'silver'],
      ['Thu', '2024-02-01', 4, 'gold'], // across the month boundary, same ISO week
      ['Leap', '2024-02-29', 5, 'bronze'],
    ];
    for (const [name, joinedOn, badge, level] of rows) {
      const response = await post({ name, joinedOn, badge, level });
      expect(response.status, response.text).toBe(201);
    }
    const undated = await post({ name: 'Undated', badge: 6, level: 'gold' });
    const gone = await post({ name: 'Gone', joinedOn: '2024-01-29', badge: 7, level: 'gold' });
    expect(undated.status).toBe(201);
    expect((await api('DELETE', `/api/v1/members/${gone.body.data.id}`, { apiKey: key, baseUrl: server.url })).status).toBe(200);
    // Nine live members in another tenant: over the limit of 8.
    for (let i = 0; i < 9; i++) {
      const response = await post({ name: `Big ${i}`, badge: 100 + i, renewsOn: i === 0 ? '2030-01-01' : '2031-01-01' }, bigKey);
      expect(response.status, response.text).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('counts per UTC day, ISO week and month of a date field (null bucket first), soft-deleted left out', async () => {
    const day = await get('/api/v1/members/aggregate?interval=day&dateField=joinedOn');
    const week = await get('/api/v1/members/aggregate?interval=week&dateField=joinedOn&sum=badge');
    const month = await get('/api/v1/members/aggregate?interval=month&dateField=joinedOn&groupBy=level');

    expect(groupsOf(day).map((g) => [g.key.joinedOn, g.count])).toEqual([
      [null, 1], ['2024-01-28', 1], ['2024-01-29', 1], ['2024-01-31', 1], ['2024-02-01', 1], ['2024-02-29', 1],
    ]);
    expect(groupsOf(week)).toStrictEqual([
      { key: { joinedOn: null }, sum: { badge: 6 } },
      { key: { joinedOn: '2024-01-22' }, sum: { badge: 1 } },
      { key: { joinedOn: '2024-01-29' }, sum: { badge: 9 } },
      { key: { joinedOn: '2024-02-26' }, sum: { badge: 5 } },
    ]);
    expect(groupsOf(month)).toEqual([
      { key: { level: 'bronze', joinedOn: '2024-02-01' }, count: 1 },
      { key: { level: 'gold', joinedOn: null }, count: 1 },
      { key: { level: 'gold', joinedOn: '2024-01-01' }, count: 2 },
      { key: { level: 'gold', joinedOn: '2024-02-01' }, count: 1 },
      { key: { level: 'silver', joinedOn: '2024-01-01' }, count: 1 },
    ]);
  });

  it('buckets createdAt by default and bounds it with LIST’s date range', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const all = await get('/api/v1/members/aggregate?interval=day');
    const past = await get('/api/v1/members/aggregate?interval=day&startDate=2001-01-01&endDate=2001-01-31');

    expect(groupsOf(all)).toEqual([{ key: { createdAt: today }, count: 6 }]);
    expect(groupsOf(past)).toEqual([]);
  });

  it('gives min and max of a date field and of createdAt', async () => {
    const response = await get('/api/v1/members/aggregate?min=joinedOn,createdAt&max=joinedOn');

    expect(groupsOf(response)[0].min!.joinedOn).toBe('2024-01-28');
    expect(groupsOf(response)[0].max!.joinedOn).toBe('2024-02-29');
    expect(typeof groupsOf(response)[0].min!.createdAt).toBe('string');
  });

  it('refuses a scan over AGGREGATE_SCAN_LIMIT records with 400 AGGREGATE_TOO_LARGE, and answers once narrowed', async () => {
    const over = await get('/api/v1/members/aggregate?sum=badge', bigKey);
    const narrowed = await get('/api/v1/members/aggregate?renewsOn=2031-01-01&sum=badge', bigKey);

    expect(over.status, over.text).toBe(400);
    expect(over.body.code).toBe('AGGREGATE_TOO_LARGE');
    expect(over.body.details.limit).toBe(8);
    expect(narrowed.status, narrowed.text).toBe(200);
    expect(groupsOf(narrowed)).toEqual([{ key: {}, sum: { badge: 101 + 102 + 103 + 104 + 105 + 106 + 107 + 108 } }]);
  });

  it('counts over the scan limit from counters: no scan, whatever the number of records', async () => {
    const all = await get('/api/v1/members/aggregate', bigKey);
    const one = await get('/api/v1/members/aggregate?renewsOn=2030-01-01', bigKey);

    expect(all.status, all.text).toBe(200);
    expect(all.body).toMatchObject({ data: [{ key: {}, count: 9 }], meta: { groups: 1, source: 'counters' } });
    expect(one.body).toMatchObject({ data: [{ key: {}, count: 1 }], meta: { source: 'counters' } });
  });
});
