/**
 * The LIST query language through HTTP on DynamoDB Local, on a known data set of six tasks (and
 * another user's task that must never show): every parameter and both spellings, every filter
 * operator, errors, headers, cursors, metadata on LIST and READ.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

let tenant: TestTenant;
let user: TestUser;
let me: Caller;
let other: Caller;
const t: Record<string, Record<string, any>> = {};
let otherTask: Record<string, any>;

const ids = (response: { body: any }): string[] => response.body.data.map((r: { id: string }) => r.id);
const q = (params: Record<string, string>) => `/api/v1/tasks?${new URLSearchParams(params).toString()}`;
const byId = (...names: string[]) => names.map((n) => t[n].id);
const sortedIds = (...names: string[]) => byId(...names).sort();

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
  me = as(await keyOf(user.cookie));
  other = as(await keyOf((await newUser(tenant.admin.cookie)).cookie));
  const rows: [string, Record<string, unknown>][] = [
    ['T1', { title: 'Alpha report', description: 'quarterly numbers', status: 'todo', priority: 'high', assigneeId: user.id, metadata: { workflow: { currentStage: 'draft' }, score: 5 } }],
    ['T2', { title: 'Beta plan', description: 'Roadmap for Q3', status: 'in_progress', priority: 'low', metas: { source: 'web', lang: 'en' } }],
    ['T3', { title: 'Gamma report', description: 'annual REPORT draft', status: 'completed', priority: 'high', metadata: { workflow: { currentStage: 'review' }, score: 1 } }],
    ['T4', { title: 'Delta', status: 'todo', priority: 'medium' }],
    ['T5', { title: 'Epsilon review', description: 'alpha testers', status: 'todo', priority: 'low' }],
    ['T6', { title: 'Zeta', description: 'misc', status: 'completed', priority: 'medium', metadata: { workflow: { currentStage: 'review' }, score: 3 } }],
  ];
  for (const [name, body] of rows) {
    t[name] = await created(me, 'tasks', body);
    await new Promise((r) => setTimeout(r, 3));
  }
  otherTask = await created(other, 'tasks', { title: 'Alpha report of someone else', status: 'todo', priority: 'high' });
});

describe('default order, pagination and headers', () => {
  it('lists newest first with the total, and the LIST headers', async () => {
    const response = await me.get('/api/v1/tasks');

    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(byId('T6', 'T5', 'T4', 'T3', 'T2', 'T1'));
    expect(response.body.pagination).toMatchObject({ page: 1, limit: 20, total: 6, totalPages: 1, hasNext: false, hasPrev: false, nextCursor: null });
    expect(response.headers.get('x-total-count')).toBe('6');
    expect(response.headers.get('x-page')).toBe('1');
    expect(response.headers.get('x-per-page')).toBe('20');
    expect(response.headers.get('link')).toBeNull();
    expect(response.headers.get('etag')).toMatch(/^W\/"/);
  });

  it('links the next page by cursor and the previous by page, the other parameters kept (RFC 8288)', async () => {
    const response = await me.get('/api/v1/tasks?limit=2&page=2&utm_source=bar');

    expect(ids(response)).toEqual(byId('T4', 'T3'));
    expect(response.body.pagination).toMatchObject({ page: 2, limit: 2, total: 6, totalPages: 3, hasNext: true, hasPrev: true });
    const cursor = new URLSearchParams({ cursor: response.body.pagination.nextCursor }).toString();
    expect(response.headers.get('link')).toBe(`</api/v1/tasks?limit=2&utm_source=bar&${cursor}>; rel="next", </api/v1/tasks?limit=2&utm_source=bar&page=1>; rel="prev"`);
    expect(response.headers.get('x-page')).toBe('2');
    expect(response.headers.get('x-per-page')).toBe('2');
  });

  it('caps limit at 100 and refuses a page or limit that is not a positive integer', async () => {
    expect((await me.get('/api/v1/tasks?limit=500')).body.pagination.limit).toBe(100);
    const bad = await me.get('/api/v1/tasks?page=0&limit=x');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_REQUEST', details: { page: expect.any(String), limit: expect.any(String) } });
  });

  it('ignores a cache buster and tracking parameters (_ and utm_*)', async () => {
    expect(ids(await me.get('/api/v1/tasks?_=123&utm_source=x'))).toEqual(byId('T6', 'T5', 'T4', 'T3', 'T2', 'T1'));
  });

  it('refuses an unknown parameter on READ too, and accepts its documented parameters', async () => {
    const task = (await me.post('/api/v1/tasks', { title: 'Read with parameters' })).body.data;

    const typo = await me.get(`/api/v1/tasks/${task.id}?feilds=title`);
    const listOnly = await me.get(`/api/v1/tasks/${task.id}?page=2`);
    const documented = await me.get(`/api/v1/tasks/${task.id}?fields=title&include=assignee&includeFields[assignee]=name&includeMetadata=true&metas=all`);

    expect(typo.status).toBe(400);
    expect(typo.body).toMatchObject({ code: 'INVALID_REQUEST', details: { feilds: expect.any(String) } });
    expect(listOnly.status).toBe(400);
    expect(listOnly.body.details).toHaveProperty('page');
    expect(documented.status, documented.text).toBe(200);
    await me.del(`/api/v1/tasks/${task.id}`);
  });

  it('refuses a parameter that is neither documented nor a field, naming it (a typo never lists everything)', async () => {
    const response = await me.get('/api/v1/tasks?stauts=completed&limit=2');

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 'INVALID_REQUEST', details: { stauts: expect.any(String) } });
    expect(Object.keys(response.body.details)).toEqual(['stauts']);
  });
});

describe('cursor pagination', () => {
  async function walk(path: string): Promise<string[]> {
    const seen: string[] = [];
    let response = await me.get(path);
    for (;;) {
      expect(response.status, response.text).toBe(200);
      seen.push(...ids(response));
      const cursor = response.body.pagination.nextCursor;
      if (!cursor) break;
      response = await me.get(`${path}&cursor=${encodeURIComponent(cursor)}`);
    }
    return seen;
  }

  it('walks the default order page by page, nextCursor null at the end', async () => {
    expect(await walk('/api/v1/tasks?limit=4')).toEqual(byId('T6', 'T5', 'T4', 'T3', 'T2', 'T1'));
  });

  it('walks an indexed equality and a filtered, sorted query', async () => {
    expect(await walk('/api/v1/tasks?limit=2&status=todo')).toEqual(byId('T5', 'T4', 'T1'));
    expect(await walk('/api/v1/tasks?limit=2&sort=title&search=a')).toEqual(byId('T1', 'T2', 'T4', 'T5', 'T3', 'T6'));
  });

  it('gives the page number of the cursor', async () => {
    const first = await me.get('/api/v1/tasks?limit=2');
    const second = await me.get(`/api/v1/tasks?limit=2&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);

    expect(second.body.pagination).toMatchObject({ page: 2, hasPrev: true, total: 6 });
    expect(second.headers.get('x-page')).toBe('2');
  });

  it('refuses a cursor from another query, another caller, or garbage', async () => {
    const cursor = encodeURIComponent((await me.get('/api/v1/tasks?limit=2')).body.pagination.nextCursor);

    for (const response of [await me.get(`/api/v1/tasks?limit=2&status=todo&cursor=${cursor}`), await me.get(`/api/v1/tasks?limit=3&cursor=${cursor}`), await other.get(`/api/v1/tasks?limit=2&cursor=${cursor}`), await me.get('/api/v1/tasks?cursor=abc')]) {
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'INVALID_REQUEST', details: { cursor: expect.any(String) } });
    }
  });
});

describe('filters', () => {
  const filter = (value: object) => me.get(q({ filter: JSON.stringify(value) }));

  it.each<[string, object, string[]]>([
    ['plain equality', { status: 'todo' }, ['T5', 'T4', 'T1']],
    ['$eq', { priority: { $eq: 'low' } }, ['T5', 'T2']],
    ['$ne', { status: { $ne: 'todo' } }, ['T6', 'T3', 'T2']],
    ['$gt', { title: { $gt: 'Epsilon review' } }, ['T6', 'T3']],
    ['$gte', { title: { $gte: 'Epsilon review' } }, ['T6', 'T5', 'T3']],
    ['$lt', { title: { $lt: 'Beta plan' } }, ['T1']],
    ['$lte', { title: { $lte: 'Beta plan' } }, ['T2', 'T1']],
    ['$in', { priority: { $in: ['medium', 'high'] } }, ['T6', 'T4', 'T3', 'T1']],
    ['$nin', { priority: { $nin: ['medium', 'high'] } }, ['T5', 'T2']],
    ['$contains (case-insensitive)', { description: { $contains: 'REPORT' } }, ['T3']],
    ['$startsWith', { title: { $startsWith: 'Gam' } }, ['T3']],
    ['$endsWith', { title: { $endsWith: 'report' } }, ['T3', 'T1']],
    ['$null true', { description: { $null: true } }, ['T4']],
    ['$null false', { assigneeId: { $null: false } }, ['T1']],
    ['several operators and fields', { status: 'todo', priority: { $ne: 'medium' }, title: { $contains: 'a' } }, ['T1']],
    ['a dotted metadata path', { 'metadata.workflow.currentStage': 'review' }, ['T6', 'T3']],
    ['a metadata comparison', { 'metadata.score': { $gte: 3 } }, ['T6', 'T1']],
    ['createdAt', { createdAt: { $gt: '1970-01-01T00:00:00Z' }, status: 'completed' }, ['T6', 'T3']],
  ])('%s', async (_label, value, expected) => {
    const response = await filter(value);

    expect(response.status, response.text).toBe(200);
    expect(ids(response)).toEqual(byId(...expected));
    expect(response.body.pagination.total).toBe(expected.length);
    expect(response.headers.get('x-total-count')).toBe(String(expected.length));
  });

  it('takes {field}=value equality on indexed and other fields, all of which must match', async () => {
    expect(ids(await me.get('/api/v1/tasks?status=todo'))).toEqual(byId('T5', 'T4', 'T1'));
    expect(ids(await me.get('/api/v1/tasks?status=todo&priority=high'))).toEqual(byId('T1'));
    expect(ids(await me.get('/api/v1/tasks?title=Delta'))).toEqual(byId('T4'));
    expect(ids(await me.get(`/api/v1/tasks?assigneeId=${user.id}&status=todo`))).toEqual(byId('T1'));
    expect(ids(await me.get('/api/v1/tasks?metadata.workflow.currentStage=draft'))).toEqual(byId('T1'));
    expect((await me.get('/api/v1/tasks?status=todo')).body.pagination.total).toBe(3);
  });

  it.each([
    ['not a JSON object', '[1,2]'],
    ['not JSON', '{status:'],
    ['an unknown operator', '{"status":{"$like":"t"}}'],
    ['an unknown field', '{"colour":"red"}'],
    ['a protected field', '{"password":"x"}'],
    ['a wrong operand type', '{"title":{"$gt":5}}'],
    ['a non-array $in', '{"status":{"$in":"todo"}}'],
  ])('answers 400 INVALID_FILTER for %s', async (_label, raw) => {
    const response = await me.get(q({ filter: raw }));

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 'INVALID_FILTER', details: { filter: expect.any(String) } });
  });

  it('refuses a protected field as an equality parameter', async () => {
    const response = await me.get('/api/v1/tasks?passwordHash=x');

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_FILTER');
  });
});

describe('search', () => {
  it.each<[string, string[]]>([
    ['report', ['T3', 'T1']],
    ['REPORT', ['T3', 'T1']],
    ['alpha report', ['T1']],
    ['alpha', ['T5', 'T1']],
    ['roadmap q3', ['T2']],
    ['nothing-like-this', []],
  ])('%j matches every word, case-insensitively, across title and description', async (search, expected) => {
    const response = await me.get(q({ search }));

    expect(ids(response)).toEqual(byId(...expected));
    expect(response.body.pagination.total).toBe(expected.length);
  });

  it('combines with filters', async () => {
    expect(ids(await me.get(q({ search: 'report', status: 'todo' })))).toEqual(byId('T1'));
  });
});

describe('sort', () => {
  it('sorts by one field, both spellings', async () => {
    expect(ids(await me.get('/api/v1/tasks?sort=title'))).toEqual(byId('T1', 'T2', 'T4', 'T5', 'T3', 'T6'));
    expect(ids(await me.get('/api/v1/tasks?sortBy=title&sortOrder=desc'))).toEqual(byId('T6', 'T3', 'T5', 'T4', 'T2', 'T1'));
    expect(ids(await me.get('/api/v1/tasks?sort=createdAt&order=asc'))).toEqual(byId('T1', 'T2', 'T3', 'T4', 'T5', 'T6'));
  });

  it('sorts by several fields with mixed orders', async () => {
    // priority descending (text order: medium, low, high), then title ascending.
    expect(ids(await me.get('/api/v1/tasks?sort=priority,title&order=desc,asc'))).toEqual(byId('T4', 'T6', 'T2', 'T5', 'T1', 'T3'));
    expect(ids(await me.get('/api/v1/tasks?sortBy=status,title&sortOrder=asc,desc'))).toEqual(byId('T6', 'T3', 'T2', 'T5', 'T4', 'T1'));
  });

  it('breaks ties by id ascending', async () => {
    const response = await me.get('/api/v1/tasks?sort=priority&order=desc');

    expect(ids(response)).toEqual([...sortedIds('T4', 'T6'), ...sortedIds('T2', 'T5'), ...sortedIds('T1', 'T3')]);
  });

  it('sorts by a dotted metadata path (missing values last when descending)', async () => {
    const response = await me.get('/api/v1/tasks?sort=metadata.score&order=desc');

    expect(ids(response)).toEqual([...byId('T1', 'T6', 'T3'), ...sortedIds('T2', 'T4', 'T5')]);
  });

  it.each([
    ['an unknown field', 'sort=colour', 'sort'],
    ['a protected field', 'sort=password', 'sort'],
    ['a bad order', 'sort=title&order=sideways', 'order'],
  ])('answers 400 INVALID_SORT for %s', async (_label, query, key) => {
    const response = await me.get(`/api/v1/tasks?${query}`);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_SORT', details: { [key]: expect.any(String) } });
  });
});

describe('fields, include, child, metas, ids, distinct', () => {
  it('returns only the named fields (id always)', async () => {
    const response = await me.get('/api/v1/tasks?fields=title,status&ids=' + t.T1.id);

    expect(response.body.data).toEqual([{ id: t.T1.id, title: 'Alpha report', status: 'todo' }]);
  });

  it('refuses protected or unknown fields in fields=', async () => {
    expect((await me.get('/api/v1/tasks?fields=password')).status).toBe(400);
    expect((await me.get('/api/v1/tasks?fields=nope')).body).toMatchObject({ code: 'INVALID_REQUEST', details: { fields: expect.any(String) } });
  });

  it('includes relations, nested with a dot, with includeFields per relation', async () => {
    const comment = await created(me, 'tasks/' + t.T1.id + '/comments', { body: 'First!' });
    const response = await me.get(`/api/v1/tasks?ids=${t.T1.id}&include=assignee,comments.author&includeFields[comments]=body`);

    expect(response.status, response.text).toBe(200);
    const [task] = response.body.data;
    expect(task.assignee).toEqual({ id: user.id, name: expect.any(String), email: user.email });
    expect(task.comments).toEqual([{ id: comment.id, body: 'First!', author: { id: user.id, name: expect.any(String), email: user.email } }]);
    expect((await me.get('/api/v1/tasks?include=assignee.team')).status).toBe(400);
  });

  it('includes child collections with child=all or by name', async () => {
    const all = await me.get(`/api/v1/tasks?ids=${t.T1.id}&child=all`);
    const named = await me.get(`/api/v1/tasks?ids=${t.T1.id}&child=comments`);

    expect(Object.keys(all.body.data[0])).toEqual(expect.arrayContaining(['comments', 'tags']));
    expect(named.body.data[0].comments).toHaveLength(1);
    expect(named.body.data[0]).not.toHaveProperty('tags');
    expect((await me.get('/api/v1/tasks?child=nope')).status).toBe(400);
  });

  it('returns metas only when asked, all or by name', async () => {
    expect((await me.get(`/api/v1/tasks?ids=${t.T2.id}`)).body.data[0]).not.toHaveProperty('metas');
    expect((await me.get(`/api/v1/tasks?ids=${t.T2.id}&metas=all`)).body.data[0].metas).toEqual({ source: 'web', lang: 'en' });
    expect((await me.get(`/api/v1/tasks?ids=${t.T2.id}&metas=source`)).body.data[0].metas).toEqual({ source: 'web' });
  });

  it('returns the ids asked for that the caller may see, in the order given', async () => {
    const response = await me.get(`/api/v1/tasks?ids=${t.T3.id},${otherTask.id},tsk_unknown,${t.T1.id}`);

    expect(ids(response)).toEqual(byId('T3', 'T1'));
    expect(response.body.pagination.total).toBe(2);
  });

  it('returns distinct values of one field', async () => {
    const response = await me.get('/api/v1/tasks?distinct=true&fields=status');

    expect(response.body.data).toEqual([
      { value: 'completed', label: 'completed', entityType: 'task' },
      { value: 'in_progress', label: 'in_progress', entityType: 'task' },
      { value: 'todo', label: 'todo', entityType: 'task' },
    ]);
    expect(response.body.pagination.total).toBe(3);
    expect((await me.get('/api/v1/tasks?distinct=true&fields=status&priority=low')).body.data.map((d: { value: string }) => d.value)).toEqual(['in_progress', 'todo']);
    expect((await me.get('/api/v1/tasks?distinct=true')).status).toBe(400);
  });

  it('returns a number field\'s distinct values as numbers in numeric order, page after page by cursor', async () => {
    for (const total of [100, 21, 3, 7.5, 0, 1, 21, 2.25, 10]) await created(me, 'orders', { total });

    const values: unknown[] = [];
    const labels: unknown[] = [];
    let path: string | null = '/api/v1/orders?distinct=true&fields=total&limit=3';
    while (path) {
      const response = await me.get(path);
      expect(response.status, response.text).toBe(200);
      expect(response.body.pagination.total).toBe(8);
      values.push(...response.body.data.map((d: { value: unknown }) => d.value));
      labels.push(...response.body.data.map((d: { label: unknown }) => d.label));
      const next: string | null = response.body.pagination.nextCursor;
      path = next ? `/api/v1/orders?distinct=true&fields=total&limit=3&cursor=${encodeURIComponent(next)}` : null;
    }

    expect(values).toEqual([0, 1, 2.25, 3, 7.5, 10, 21, 100]);
    expect(labels).toEqual(['0', '1', '2.25', '3', '7.5', '10', '21', '100']);
    const page2 = await me.get('/api/v1/orders?distinct=true&fields=total&limit=3&page=2');
    expect(page2.body.data.map((d: { value: unknown }) => d.value)).toEqual([3, 7.5, 10]);
  });
});

describe('date ranges', () => {
  const shift = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
  const withOffset = (iso: string) => {
    const d = new Date(Date.parse(iso) + 2 * 3600_000);
    return `${d.toISOString().slice(0, 23)}+02:00`;
  };

  it('includes both bounds exactly (ISO with Z)', async () => {
    const at = t.T3.createdAt;

    expect(ids(await me.get(q({ startDate: at })))).toEqual(byId('T6', 'T5', 'T4', 'T3'));
    expect(ids(await me.get(q({ endDate: at })))).toEqual(byId('T3', 'T2', 'T1'));
    expect(ids(await me.get(q({ startDate: at, endDate: at })))).toEqual(byId('T3'));
    expect(ids(await me.get(q({ startDate: shift(at, 1) })))).toEqual(byId('T6', 'T5', 'T4'));
    expect(ids(await me.get(q({ endDate: shift(at, -1) })))).toEqual(byId('T2', 'T1'));
  });

  it('accepts from/to and offsets', async () => {
    expect(ids(await me.get(q({ from: withOffset(t.T2.createdAt), to: withOffset(t.T4.createdAt) })))).toEqual(byId('T4', 'T3', 'T2'));
  });

  it('reads an end date given as a plain date as the whole day (UTC)', async () => {
    const firstDay = t.T1.createdAt.slice(0, 10);
    const lastDay = t.T6.createdAt.slice(0, 10);
    const response = await me.get(q({ startDate: firstDay, endDate: lastDay }));

    expect(ids(response)).toEqual(byId('T6', 'T5', 'T4', 'T3', 'T2', 'T1'));
    const dayBefore = new Date(Date.parse(firstDay) - 86_400_000).toISOString().slice(0, 10);
    expect(ids(await me.get(q({ endDate: dayBefore })))).toEqual([]);
  });

  it('applies to another date field with dateField', async () => {
    const updated = await me.patch(`/api/v1/tasks/${t.T2.id}`, { description: 'Roadmap for Q3' });
    const response = await me.get(q({ dateField: 'updatedAt', startDate: updated.body.data.updatedAt }));

    expect(ids(response)).toEqual(byId('T2'));
    t.T2 = updated.body.data;
  });

  it('refuses other forms and non-date fields with 400', async () => {
    expect((await me.get(q({ startDate: 'yesterday' }))).body).toMatchObject({ code: 'INVALID_REQUEST', details: { startDate: expect.any(String) } });
    expect((await me.get(q({ to: '2026-13-01' }))).body.details).toHaveProperty('to');
    expect((await me.get(q({ startDate: '2026-01-01', dateField: 'title' }))).status).toBe(400);
  });
});

describe('metadata', () => {
  it('is omitted unless asked for; includeMetadata and metadataFields on LIST and READ', async () => {
    expect((await me.get(`/api/v1/tasks?ids=${t.T1.id}`)).body.data[0]).not.toHaveProperty('metadata');
    expect((await me.get(`/api/v1/tasks/${t.T1.id}`)).body.data).not.toHaveProperty('metadata');
    expect((await me.get(`/api/v1/tasks?ids=${t.T1.id}&includeMetadata=true`)).body.data[0].metadata).toEqual({ workflow: { currentStage: 'draft' }, score: 5 });
    expect((await me.get(`/api/v1/tasks/${t.T1.id}?metadataFields=score`)).body.data.metadata).toEqual({ score: 5 });
    expect((await me.get(`/api/v1/tasks?ids=${t.T4.id}&includeMetadata=true`)).body.data[0].metadata).toEqual({});
  });

  it('READ accepts fields, include, metas and metadata together', async () => {
    const response = await me.get(`/api/v1/tasks/${t.T2.id}?fields=title&metas=lang&includeMetadata=true&include=assignee`);

    expect(response.body.data).toEqual({ id: t.T2.id, title: 'Beta plan', metas: { lang: 'en' }, metadata: {}, assignee: null });
  });

  it('PATCH merges deeply, null removes a key, replaceMetadata=true replaces', async () => {
    const task = await created(me, 'tasks', { title: 'Meta', metadata: { a: { b: 1, c: 2 }, d: 1 } });
    const path = `/api/v1/tasks/${task.id}`;

    await me.patch(path, { metadata: { a: { c: null, e: 3 }, f: { g: 1 } } });
    expect((await me.get(`${path}?includeMetadata=true`)).body.data.metadata).toEqual({ a: { b: 1, e: 3 }, d: 1, f: { g: 1 } });

    await me.patch(`${path}?replaceMetadata=true`, { metadata: { only: true, gone: null } });
    expect((await me.get(`${path}?includeMetadata=true`)).body.data.metadata).toEqual({ only: true });
  });

  it('removes __proto__ and constructor at any depth', async () => {
    const task = await created(me, 'tasks', { title: 'Proto' });
    const response = await me.patch(`/api/v1/tasks/${task.id}`, undefined, {
      rawBody: '{"metadata":{"__proto__":{"polluted":1},"x":{"constructor":{"y":1},"z":1}}}',
      headers: { 'Content-Type': 'application/json' },
    });

    expect(response.status, response.text).toBe(200);
    expect((await me.get(`/api/v1/tasks/${task.id}?includeMetadata=true`)).body.data.metadata).toEqual({ x: { z: 1 } });
  });

  it('refuses metadata over 10,000 characters serialized, also after merging (422)', async () => {
    const task = await created(me, 'tasks', { title: 'Big', metadata: { a: 'x'.repeat(6000) } });

    expect((await me.post('/api/v1/tasks', { title: 'Too big', metadata: { a: 'x'.repeat(10_001) } })).status).toBe(422);
    const merged = await me.patch(`/api/v1/tasks/${task.id}`, { metadata: { b: 'y'.repeat(6000) } });
    expect(merged.status).toBe(422);
    expect(merged.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { metadata: expect.any(String) } });
  });
});

describe('public products', () => {
  it('filters anonymously by an indexed field, a comparison and a search', async () => {
    const admin = as(await keyOf(tenant.admin.cookie, ['*']));
    const category = `cat-${randomBytes(4).toString('hex')}`;
    const cheap = await created(admin, 'products', { name: 'Cheap Widget', price: 5, category });
    const dear = await created(admin, 'products', { name: 'Dear Widget', price: 50, category });
    const anonymous = as(undefined);

    expect(ids(await anonymous.get(`/api/v1/products?category=${category}`))).toEqual([dear.id, cheap.id]);
    expect(ids(await anonymous.get(`/api/v1/products?category=${category}&filter=${encodeURIComponent('{"price":{"$lt":10}}')}`))).toEqual([cheap.id]);
    expect(ids(await anonymous.get(`/api/v1/products?category=${category}&price=50`))).toEqual([dear.id]);
    expect(ids(await anonymous.get(`/api/v1/products?category=${category}&search=DEAR&sort=price`))).toEqual([dear.id]);
    expect((await anonymous.get(`/api/v1/products?category=${category}&filter=${encodeURIComponent('{"price":{"$lt":"10"}}')}`)).body.code).toBe('INVALID_FILTER');
  });
});

describe('metadata equality parameters', () => {
  it('match numbers written as text', async () => {
    expect(ids(await me.get('/api/v1/tasks?metadata.score=3'))).toEqual(byId('T6'));
  });
});
