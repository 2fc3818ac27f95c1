/**
 * Counts, sums and averages answered from counters (`meta.source: "counters"`) against a model:
 * after each phase of writes (creates, updates that move records between groups, a bulk update,
 * an import, hard deletes on tasks; updates of summed values on orders; soft deletes and restores
 * on products), every count, sum and average — the total, per day of createdAt, per enum value,
 * per value of a filtered equality — and the first and last createdAt (from the listing order,
 * `meta.source: "index"`: in all, per enum value, of one value) equals what a full cursor walk of LIST shows the same caller: an admin, a plain user
 * of a private entity (own records only), another tenant, and an anonymous caller of a public entity.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, newUser } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

type Row = Record<string, any>;

const STATUSES = ['todo', 'in_progress', 'completed'] as const;
const PRIORITIES = ['low', 'medium', 'high'] as const;
const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)];

/** A tenant's admin, two plain users of it, and another tenant's admin. */
async function fourCallers(): Promise<Caller[]> {
  const [acme, globex] = await Promise.all([newTenant(), newTenant()]);
  const [a, b] = await Promise.all([newUser(acme.admin.cookie), newUser(acme.admin.cookie)]);
  return (await Promise.all([keyOf(acme.admin.cookie, ['*']), keyOf(a.cookie), keyOf(b.cookie), keyOf(globex.admin.cookie, ['*'])])).map(as);
}

/** Every record the caller can LIST at `path`, by cursor. */
async function walk(caller: Caller, path: string): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 200; pages++) {
    const sep = path.includes('?') ? '&' : '?';
    const response = await caller.get(`${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(response.status, response.text).toBe(200);
    rows.push(...response.body.data);
    cursor = response.body.pagination.nextCursor;
    if (!cursor) break;
  }
  return rows;
}

/** The groups a model computes: count per value of `field`, sorted by key (null first), empty groups left out. */
function modelGroups(rows: readonly Row[], field: string, values: readonly unknown[]): { key: Record<string, unknown>; count: number }[] {
  const order = [null, ...[...values].sort()];
  const counts = new Map<unknown, number>();
  for (const row of rows) {
    const value = row[field] ?? null;
    counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return order.filter((v) => counts.has(v)).map((v) => ({ key: { [field]: v }, count: counts.get(v)! }));
}

/** The groups a model computes: count per UTC day of createdAt, sorted. */
function dayGroups(rows: readonly Row[]): { key: Record<string, unknown>; count: number }[] {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.createdAt.slice(0, 10), (counts.get(row.createdAt.slice(0, 10)) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, count]) => ({ key: { createdAt: day }, count }));
}

/** The min and max of createdAt a model computes (null without records). */
function createdAtEnds(rows: readonly Row[]): { min: { createdAt: string | null }; max: { createdAt: string | null } } {
  const times = rows.map((r) => r.createdAt as string).sort((a, b) => Date.parse(a) - Date.parse(b));
  return { min: { createdAt: times[0] ?? null }, max: { createdAt: times.at(-1) ?? null } };
}

/** Every count a caller may ask of `slug` (in all, per day, per enum value, of one value) equals the model of its own LIST walk, each from counters. */
async function expectCountsMatch(caller: Caller, slug: string, grouped: Record<string, readonly unknown[]>): Promise<void> {
  const rows = await walk(caller, `/api/v1/${slug}`);
  const ask = async (query: string) => {
    const response = await caller.get(`/api/v1/${slug}/aggregate?${query}`);
    expect(response.status, response.text).toBe(200);
    return response.body;
  };
  const total = await ask('count');
  expect(total.data, `${slug}: total`).toEqual([{ key: {}, count: rows.length }]);
  expect(total.meta.source).toBe('counters');
  const perDay = await ask('interval=day');
  expect(perDay.data, `${slug}: per day of createdAt`).toEqual(dayGroups(rows));
  expect(perDay.meta.source).toBe('counters');
  const ends = await ask('count&min=createdAt&max=createdAt');
  expect(ends.data, `${slug}: first and last createdAt`).toEqual([{ key: {}, count: rows.length, ...createdAtEnds(rows) }]);
  expect(ends.meta.source).toBe('index');
  for (const [field, values] of Object.entries(grouped)) {
    const groups = await ask(`groupBy=${field}`);
    expect(groups.data, `${slug}: per ${field}`).toEqual(modelGroups(rows, field, values));
    expect(groups.meta).toEqual({ groups: groups.data.length, source: 'counters' });
    // Records without a value are in no value's listing: their group is the scan's.
    const groupEnds = await ask(`groupBy=${field}&count&min=createdAt&max=createdAt`);
    const perValue = modelGroups(rows, field, values).map((g) => ({ ...g, ...createdAtEnds(rows.filter((r) => (r[field] ?? null) === g.key[field])) }));
    expect(groupEnds.data, `${slug}: first and last createdAt per ${field}`).toEqual(perValue);
    expect(groupEnds.meta.source, `${slug}: first and last createdAt per ${field}`).toBe(rows.some((r) => (r[field] ?? null) === null) ? 'scan' : 'index');
    for (const value of values) {
      const one = await ask(`${field}=${value}`);
      const matching = rows.filter((r) => r[field] === value);
      expect(one.data, `${slug}: ${field}=${value}`).toEqual([{ key: {}, count: matching.length }]);
      expect(one.meta.source).toBe('counters');
      const oneEnds = await ask(`${field}=${value}&max=createdAt&min=createdAt`);
      expect(oneEnds.data, `${slug}: ${field}=${value} first and last`).toEqual([{ key: {}, ...createdAtEnds(matching) }]);
      expect(oneEnds.meta.source).toBe('index');
    }
  }
}

describe('counts from counters, against a model of LIST (tasks: private, hard delete)', () => {
  let admin: Caller;
  let alice: Caller;
  let bob: Caller;
  let outsider: Caller;
  const ids: { id: string; by: Caller }[] = [];

  const check = async () => {
    for (const caller of [admin, alice, bob, outsider]) await expectCountsMatch(caller, 'tasks', { status: STATUSES, priority: PRIORITIES });
  };

  beforeAll(async () => {
    [admin, alice, bob, outsider] = await fourCallers();
  }, 60_000);

  it('holds after creates by three users of a tenant and another tenant', async () => {
    for (let i = 0; i < 24; i++) {
      const by = pick([admin, alice, alice, bob, outsider]);
      const task = await created(by, 'tasks', { title: `agg ${i}`, status: pick(STATUSES), ...(i % 4 ? { priority: pick(PRIORITIES) } : {}) });
      ids.push({ id: task.id, by });
    }
    await check();
  }, 120_000);

  it('holds after updates that move records between groups, and a bulk update', async () => {
    for (const { id, by } of ids.slice(0, 10)) {
      const response = await by.patch(`/api/v1/tasks/${id}`, { status: pick(STATUSES), priority: pick(PRIORITIES) });
      expect(response.status, response.text).toBe(200);
    }
    const theirs = ids.filter((x) => x.by === alice).slice(0, 4);
    const bulk = await alice.patch('/api/v1/tasks', { updates: theirs.map(({ id }) => ({ id, status: 'completed' })) });
    expect(bulk.status, bulk.text).toBe(200);
    await check();
  }, 120_000);

  it('holds after an import and hard deletes (one by one and in bulk)', async () => {
    const imported = await admin.post('/api/v1/import/tasks', { tasks: STATUSES.map((status, i) => ({ title: `imported ${i}`, status })) });
    expect(imported.status, imported.text).toBe(201);
    for (const { id, by } of ids.slice(10, 14)) expect((await by.del(`/api/v1/tasks/${id}`)).status).toBe(200);
    const bobs = ids.filter((x) => x.by === bob).slice(0, 2).map((x) => x.id);
    if (bobs.length) expect((await bob.del('/api/v1/tasks', { body: { ids: bobs } })).status).toBe(200);
    await check();
  }, 120_000);

  it('answers what counters cannot (a second group, a search, a sum) by a scan that agrees with them', async () => {
    const counted = (await admin.get('/api/v1/tasks/aggregate?groupBy=status')).body;
    const scanned = (await admin.get('/api/v1/tasks/aggregate?groupBy=status,priority')).body;
    const perStatus = new Map<string, number>();
    for (const g of scanned.data) perStatus.set(g.key.status, (perStatus.get(g.key.status) ?? 0) + g.count);

    expect(scanned.meta.source).toBe('scan');
    expect(counted.meta.source).toBe('counters');
    expect(counted.data.map((g: Row) => [g.key.status, g.count])).toEqual([...perStatus]);
  });
});

/** The sum and average of `field` over `rows` as an aggregate shows them (0 and null with no value). */
function modelSum(rows: readonly Row[], field: string): { sum: number; avg: number | null } {
  const values = rows.map((r) => r[field]).filter((v): v is number => typeof v === 'number');
  const sum = values.reduce((n, v) => n + v, 0);
  return { sum, avg: values.length ? sum / values.length : null };
}

/** Every sum and average of orders' `total` a caller may ask equals the model of its own LIST walk, each from counters. */
async function expectSumsMatch(caller: Caller): Promise<void> {
  const rows = await walk(caller, '/api/v1/orders');
  const ask = async (query: string) => {
    const response = await caller.get(`/api/v1/orders/aggregate?${query}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body.meta.source, query).toBe('counters');
    return response.body.data;
  };
  const all = modelSum(rows, 'total');
  expect(await ask('sum=total')).toEqual([{ key: {}, sum: { total: all.sum } }]);
  expect(await ask('avg=total')).toEqual([{ key: {}, avg: { total: all.avg } }]);
  expect(await ask('count&sum=total&avg=total')).toEqual([{ key: {}, count: rows.length, sum: { total: all.sum }, avg: { total: all.avg } }]);
  const perStatus = ORDER_STATUSES.filter((status) => rows.some((r) => r.status === status)).map((status) => {
    const m = modelSum(rows.filter((r) => r.status === status), 'total');
    return { key: { status }, sum: { total: m.sum }, avg: { total: m.avg } };
  });
  expect(await ask('groupBy=status&sum=total&avg=total')).toEqual(perStatus);
  expect(await ask('status=paid&sum=total')).toEqual([{ key: {}, sum: { total: modelSum(rows.filter((r) => r.status === 'paid'), 'total').sum } }]);
}

const ORDER_STATUSES = ['cancelled', 'paid', 'pending', 'shipped'] as const;

describe('sums and averages from counters, against a model of LIST (orders: private, updates only)', () => {
  let admin: Caller;
  let alice: Caller;
  let bob: Caller;
  let outsider: Caller;
  const ids: { id: string; by: Caller }[] = [];
  /** Values with at most one decimal .5: their sums are exact in floating point, whatever the order. */
  const amount = () => Math.floor(Math.random() * 200) / 2;

  const check = async () => {
    for (const caller of [admin, alice, bob, outsider]) await expectSumsMatch(caller);
  };

  beforeAll(async () => {
    [admin, alice, bob, outsider] = await fourCallers();
  }, 60_000);

  it('holds after creates, some without a total (counted, not summed)', async () => {
    for (let i = 0; i < 20; i++) {
      const by = pick([admin, alice, alice, bob, outsider]);
      const order = await created(by, 'orders', { status: pick(ORDER_STATUSES), ...(i % 5 ? { total: amount() } : {}) });
      ids.push({ id: order.id, by });
    }
    await check();
    const counted = (await admin.get('/api/v1/orders/aggregate?count')).body.data[0].count;
    const walked = await walk(admin, '/api/v1/orders');
    expect(counted).toBe(walked.length);
    expect(walked.some((r) => r.total === undefined)).toBe(true);
  }, 120_000);

  it('holds after updates of the total alone, of the status alone, of both, one giving a total to an order without, and a bulk update', async () => {
    for (const [n, { id, by }] of ids.slice(0, 12).entries()) {
      const change = [{ total: amount() }, { status: pick(ORDER_STATUSES) }, { status: pick(ORDER_STATUSES), total: amount() }][n % 3];
      const response = await by.patch(`/api/v1/orders/${id}`, change);
      expect(response.status, response.text).toBe(200);
    }
    const withoutTotal = ids[5];
    expect((await withoutTotal.by.patch(`/api/v1/orders/${withoutTotal.id}`, { total: 7.5 })).status).toBe(200);
    const theirs = ids.filter((x) => x.by === alice).slice(0, 4);
    const bulk = await alice.patch('/api/v1/orders', { updates: theirs.map(({ id }, i) => ({ id, status: 'paid', total: i * 1.5 })) });
    expect(bulk.status, bulk.text).toBe(200);
    await check();
  }, 120_000);

  it('holds after an import', async () => {
    const imported = await admin.post('/api/v1/import/orders', { items: [{ status: 'paid', total: 12.5 }, { status: 'shipped', total: 3 }, { status: 'paid' }] });
    expect(imported.status, imported.text).toBe(201);
    await check();
  }, 120_000);
});

describe('counts from counters, against a model of LIST (products: public, soft delete, restore)', () => {
  const category = `aggc-${randomBytes(4).toString('hex')}`;
  const anonymous = as(undefined);
  let acme: Caller;
  let globex: Caller;
  const products: { id: string; by: Caller }[] = [];

  beforeAll(async () => {
    const [a, g] = await Promise.all([newTenant(), newTenant()]);
    [acme, globex] = (await Promise.all([keyOf(a.admin.cookie, ['*']), keyOf(g.admin.cookie, ['*'])])).map(as);
  }, 60_000);

  /**
   * Other tests write products meanwhile: the checks stay within this test's category (one
   * equality: its own counted partition), and its split per status is a scan that must agree.
   */
  const check = async () => {
    const rows = await walk(anonymous, `/api/v1/products?category=${category}`);
    for (const caller of [anonymous, acme, globex]) {
      const response = await caller.get(`/api/v1/products/aggregate?category=${category}`);
      expect(response.body.data).toEqual([{ key: {}, count: rows.length }]);
      expect(response.body.meta.source).toBe('counters');
    }
    const prices = modelSum(rows, 'price');
    const summed = await anonymous.get(`/api/v1/products/aggregate?category=${category}&sum=price&avg=price`);
    expect(summed.body.data).toEqual([{ key: {}, sum: { price: prices.sum }, avg: { price: prices.avg } }]);
    expect(summed.body.meta.source).toBe('counters');
    for (const caller of [anonymous, acme]) {
      const ends = await caller.get(`/api/v1/products/aggregate?category=${category}&min=createdAt&max=createdAt`);
      expect(ends.body.data).toEqual([{ key: {}, ...createdAtEnds(rows) }]);
      expect(ends.body.meta.source).toBe('index');
    }
    const perStatus = await anonymous.get(`/api/v1/products/aggregate?category=${category}&groupBy=status`);
    expect(perStatus.body.data).toEqual(modelGroups(rows, 'status', ['active', 'inactive']));
    expect(perStatus.body.meta.source).toBe('scan');
  };

  it('holds after creates by two tenants, soft deletes and restores', async () => {
    for (let i = 0; i < 8; i++) {
      const by = i % 2 ? acme : globex;
      const product = await created(by, 'products', { name: `p${i}`, price: i + 0.5, category, status: i % 3 ? 'active' : 'inactive' });
      products.push({ id: product.id, by });
    }
    await check();
    for (const { id, by } of products.slice(0, 3)) expect((await by.del(`/api/v1/products/${id}`)).status).toBe(200);
    await check();
    const [first] = products;
    const restored = await first.by.post(`/api/v1/products/${first.id}/restore`, { revision: 1 });
    expect(restored.status, restored.text).toBe(200);
    await check();
  }, 180_000);
});
