/**
 * LIST integrity through HTTP on DynamoDB Local: no record unreachable at any record size (pages
 * past DynamoDB's 1 MB per Query), cursor walks that lose nothing while read records are deleted
 * and new ones inserted before the position (every order), signed cursors, reversed date ranges.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, newUser, type TestTenant } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

let tenant: TestTenant;

const ids = (response: { body: any }): string[] => response.body.data.map((r: { id: string }) => r.id);

/** Runs `work` over `items` with at most `width` at a time (seeding without flooding the runtime). */
async function inParallel<T, R>(items: T[], width: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i], i);
      }
    }),
  );
  return out;
}

async function freshCaller(): Promise<Caller> {
  return as(await keyOf((await newUser(tenant.admin.cookie)).cookie));
}

/** Follows nextCursor from `path` to the end; every response must be a 200. */
async function walk(caller: Caller, path: string, between?: (page: string[]) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let response = await caller.get(path);
  for (let guard = 0; guard < 500; guard++) {
    expect(response.status, response.text).toBe(200);
    const page = ids(response);
    seen.push(...page);
    const { nextCursor, hasNext } = response.body.pagination;
    expect(hasNext).toBe(nextCursor !== null);
    if (between) await between(page);
    if (!nextCursor) break;
    response = await caller.get(`${path}&cursor=${encodeURIComponent(nextCursor)}`);
  }
  return seen;
}

beforeAll(async () => {
  tenant = await newTenant();
});

describe('large records (pages past 1 MB)', () => {
  let me: Caller;
  let all: string[];
  let todo: string[];
  const COUNT = 80;

  beforeAll(async () => {
    me = await freshCaller();
    // About 20 KB per listing copy (the description and its search copy): a Query stops near 50.
    const rows = Array.from({ length: COUNT }, (_, i) => ({ title: `big ${String(i).padStart(3, '0')}`, description: `${i} `.padEnd(10_000, 'x'), status: i % 2 ? 'todo' : 'completed' }));
    const records = await inParallel(rows, 8, (row) => created(me, 'tasks', row));
    const byNewest = [...records].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? 1 : -1));
    all = byNewest.map((r) => r.id);
    todo = byNewest.filter((r) => r.status === 'todo').map((r) => r.id);
  }, 180_000); // 80 records of 10 KB: slow to write on a loaded machine

  it.each([1, 25, 48, 49, 50, 51, 52, 53, 54, 55, 56, 79, 80, 99, 100])('fills page 1 of limit=%i and tells whether more follow', async (limit) => {
    const response = await me.get(`/api/v1/tasks?limit=${limit}&fields=title`);

    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(all.slice(0, limit));
    expect(response.body.pagination).toMatchObject({ total: COUNT, hasNext: limit < COUNT });
    expect(response.body.pagination.nextCursor === null).toBe(limit >= COUNT);
  });

  it.each([100, 60, 53, 30])('reaches every record by cursor with limit=%i, in the listing and in an indexed equality', { timeout: 120_000 }, async (limit) => {
    expect(await walk(me, `/api/v1/tasks?limit=${limit}&fields=title`)).toEqual(all);
    expect(await walk(me, `/api/v1/tasks?limit=${limit}&status=todo&fields=title`)).toEqual(todo);
  });

  it('fills a page of a later page number too', async () => {
    const response = await me.get('/api/v1/tasks?limit=60&page=2&fields=title');

    expect(ids(response)).toEqual(all.slice(60));
    expect(response.body.pagination).toMatchObject({ page: 2, hasNext: false, nextCursor: null });
  });
});

describe('read-and-delete loops lose nothing, in every order', () => {
  const orders: [string, string, (r: Record<string, any>) => boolean][] = [
    ['default order', '', () => true],
    ['an indexed equality', '&status=todo', (r) => r.status === 'todo'],
    ['sort=title', '&sort=title', () => true],
    ['sort=priority,title desc with a search', '&sort=priority,title&order=asc,desc&search=drain', () => true],
    ['createdAt ascending with a filter', `&order=asc&filter=${encodeURIComponent('{"priority":{"$ne":"high"}}')}`, (r) => r.priority !== 'high'],
  ];

  it.each(orders)('drains %s page by page while deleting what was read and inserting before the position', { timeout: 120_000 }, async (_name, query, selected) => {
    const me = await freshCaller();
    const rows = Array.from({ length: 18 }, (_, i) => ({
      title: `drain ${String((i * 7) % 18).padStart(2, '0')}`,
      status: i % 3 ? 'todo' : 'in_progress',
      priority: ['low', 'medium', 'high'][i % 3],
    }));
    const records = await inParallel(rows, 8, (row) => created(me, 'tasks', row));
    const expected = records.filter(selected).map((r) => r.id);
    let inserted = 0;

    const seen = await walk(me, `/api/v1/tasks?limit=5${query}`, async (page) => {
      await Promise.all(page.map((id) => me.del(`/api/v1/tasks/${id}`).then((r) => expect(r.status, r.text).toBe(200))));
      // A new record before the cursor's position (after it in createdAt ascending).
      if (inserted < 2) await created(me, 'tasks', { title: `aaa drain new ${inserted++}`, status: 'todo', priority: 'low' });
    });

    const original = seen.filter((id) => expected.includes(id));
    expect(new Set(original).size).toBe(original.length);
    expect([...original].sort()).toEqual([...expected].sort());
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('drains ids= in the order given while deleting', { timeout: 120_000 }, async () => {
    const me = await freshCaller();
    const records = await inParallel(Array.from({ length: 11 }, (_, i) => ({ title: `ids ${i}` })), 6, (row) => created(me, 'tasks', row));
    const order = records.map((r) => r.id).reverse();

    const seen = await walk(me, `/api/v1/tasks?limit=5&ids=${order.join(',')}`, async (page) => {
      await Promise.all(page.map((id) => me.del(`/api/v1/tasks/${id}`)));
    });

    expect(seen).toEqual(order);
  });
});

describe('signed cursors', () => {
  let me: Caller;
  let cursor: string;

  beforeAll(async () => {
    me = await freshCaller();
    await inParallel(Array.from({ length: 5 }, (_, i) => ({ title: `cursor ${i}` })), 5, (row) => created(me, 'tasks', row));
    cursor = (await me.get('/api/v1/tasks?limit=2&sort=title')).body.pagination.nextCursor;
  });

  it('refuses an edited cursor (page, position or signature) with 400 naming the cursor', async () => {
    const [payload, mac] = cursor.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const edits = [
      { ...decoded, p: 7 },
      { ...decoded, i: 'tsk_000000000000000000000000' },
      { ...decoded, v: ['a'] },
    ].map((c) => `${Buffer.from(JSON.stringify(c)).toString('base64url')}.${mac}`);
    edits.push(`${payload}.${mac.slice(0, -4)}AAAA`, payload);

    for (const edited of edits) {
      const response = await me.get(`/api/v1/tasks?limit=2&sort=title&cursor=${encodeURIComponent(edited)}`);
      expect(response.status, edited).toBe(400);
      expect(response.body).toMatchObject({ success: false, code: 'INVALID_REQUEST', details: { cursor: expect.any(String) } });
    }
    expect((await me.get(`/api/v1/tasks?limit=2&sort=title&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
  });

  it('refuses page together with cursor', async () => {
    const response = await me.get(`/api/v1/tasks?limit=2&sort=title&page=2&cursor=${encodeURIComponent(cursor)}`);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_REQUEST', details: { page: expect.any(String) } });
  });
});

describe('reversed date ranges', () => {
  it('answer an empty 200 on every date field and every collection, with or without credentials', async () => {
    const me = await freshCaller();
    const task = await created(me, 'tasks', { title: 'range parent' });
    await created(me, 'comments', { taskId: task.id, body: 'range child' });
    const reversed = 'startDate=2026-11-23&endDate=2026-11-22';
    const paths = [
      `/api/v1/tasks?${reversed}`,
      `/api/v1/tasks?${reversed}&dateField=createdAt`,
      `/api/v1/tasks?${reversed}&dateField=updatedAt`,
      `/api/v1/tasks?from=2030-01-01T00:00:00Z&to=1990-01-01T00:00:00Z&sort=title`,
      `/api/v1/tasks?${reversed}&status=todo`,
      `/api/v1/tasks?${reversed}&fields=title&distinct=true`,
      `/api/v1/tasks/${task.id}/comments?${reversed}`,
      `/api/v1/tasks/${task.id}/comments?${reversed}&dateField=updatedAt`,
      `/api/v1/tasks/${task.id}/tags?${reversed}`,
    ];
    for (const path of paths) {
      const response = await me.get(path);
      expect(response.status, `${path}: ${response.text}`).toBe(200);
      expect(response.body.data, path).toEqual([]);
      expect(response.body.pagination, path).toMatchObject({ total: 0, hasNext: false, nextCursor: null });
    }
    for (const path of [`/api/v1/products?${reversed}`, `/api/v1/products?${reversed}&dateField=updatedAt`, `/api/v1/products?${reversed}&sort=name`]) {
      const response = await as(undefined).get(path);
      expect(response.status, `${path}: ${response.text}`).toBe(200);
      expect(response.body.data, path).toEqual([]);
    }
  });
});

describe('one text order (UTF-8 bytes, as DynamoDB compares)', () => {
  it('compares, sorts and pages text beyond U+FFFF and full-width forms the same way', async () => {
    const me = await freshCaller();
    const rocket = await created(me, 'tasks', { title: 'uo 🚀' });
    const wide = await created(me, 'tasks', { title: 'uo ｚ' });
    const plain = await created(me, 'tasks', { title: 'uo z' });
    const filter = (f: unknown) => `/api/v1/tasks?filter=${encodeURIComponent(JSON.stringify(f))}`;

    // Code points: 'z' U+007A < 'ｚ' U+FF5A < '🚀' U+1F680.
    expect(ids(await me.get(`${filter({ title: { $startsWith: 'uo' } })}&sort=title`))).toEqual([plain.id, wide.id, rocket.id]);
    expect(ids(await me.get(`${filter({ title: { $startsWith: 'uo' } })}&sort=title&order=desc`))).toEqual([rocket.id, wide.id, plain.id]);
    expect(ids(await me.get(filter({ title: { $gt: 'uo ｚ' } })))).toEqual([rocket.id]);
    expect(ids(await me.get(`${filter({ title: { $lt: 'uo ｚ', $startsWith: 'uo' } })}`))).toEqual([plain.id]);
    expect(ids(await me.get(`${filter({ title: { $lte: 'uo 🚀', $gte: 'uo ｚ' } })}&sort=title`))).toEqual([wide.id, rocket.id]);
    expect(await walk(me, `${filter({ title: { $startsWith: 'uo' } })}&sort=title&limit=1`)).toEqual([plain.id, wide.id, rocket.id]);
  });
});

describe('numbers in parameters', () => {
  it('accept JSON number syntax only', async () => {
    const me = await freshCaller();
    const category = `num-${Date.now()}`;
    const ten = await created(me, 'products', { name: 'ten', price: 10, category });
    await created(me, 'products', { name: 'eleven', price: 11, category });

    for (const good of ['10', '10.0', '1e1', '1.0E+1']) {
      expect(ids(await me.get(`/api/v1/products?category=${category}&price=${encodeURIComponent(good)}`)), good).toEqual([ten.id]);
    }
    for (const loose of ['0x0A', '0b1010', '0o12', '+10', '%2010', '10%20', '010', '.10e2', '10.', 'Infinity', '']) {
      const response = await me.get(`/api/v1/products?category=${category}&price=${loose}`);
      expect(response.status, loose).toBe(400);
      expect(response.body).toMatchObject({ code: 'INVALID_FILTER', details: { filter: expect.stringContaining('price') } });
    }
  });
});

describe('case folding', () => {
  it('finds text whatever its case, accents and compatibility forms, in search and $contains', async () => {
    const me = await freshCaller();
    const pairs: [string, string][] = [
      ['İstanbul trip', 'istanbul'],
      ['STRASSE repair', 'straße'],
      ['Straße cleanup', 'STRASSE'],
      ['ΟΔΟΣ plan', 'οδος'],
      ['Café menu', 'cafe'],
      ['ｆｕｌｌ width', 'full'],
      ['Oﬃce move', 'office'],
    ];
    const records = await inParallel(pairs, 7, ([title]) => created(me, 'tasks', { title }));
    expect((await me.get('/api/v1/tasks?search=strasse')).body.pagination.total).toBe(2);
    expect((await me.get('/api/v1/tasks?search=istanbul%20cafe')).body.pagination.total).toBe(0);

    for (const [i, [title, word]] of pairs.entries()) {
      const search = await me.get(`/api/v1/tasks?search=${encodeURIComponent(word)}`);
      expect(ids(search), `search ${word} → ${title}`).toContain(records[i].id);
      const contains = await me.get(`/api/v1/tasks?filter=${encodeURIComponent(JSON.stringify({ title: { $contains: word } }))}`);
      expect(ids(contains), `$contains ${word} → ${title}`).toContain(records[i].id);
    }
  });
});
