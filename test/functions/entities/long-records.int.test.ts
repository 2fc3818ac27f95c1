/**
 * Records over 1 KB through HTTP on DynamoDB Local: their listing copies are partial (at most
 * 1 KB, shared/data/items.ts copyItem), and every LIST path shows them whole, exact
 * contents and totals, mixed with short records: the default page, an indexed filter, a filter and
 * a search on the long field itself, a sort on a value the copies leave out, page N and cursors,
 * GraphQL, included children, a record turned long and back, a long record edited where its copies
 * were left as they stood, a long record deleted between pages.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

let tenant: TestTenant;
let apiKey: string;
let me: Caller;
let other: Caller;
const t: Record<string, Record<string, any>> = {};

/** About 2,000 characters starting with `lead` (so sorts by description are known). */
const long = (lead: string, word = '') => `${lead} ${'a long description of a task that does not fit in one kilobyte. '.repeat(31)}${word}`.slice(0, 2000 - word.length) + word;

const ids = (response: { body: any }): string[] => response.body.data.map((r: { id: string }) => r.id);
const byId = (...names: string[]) => names.map((n) => t[n].id);
const q = (params: Record<string, string>) => `/api/v1/tasks?${new URLSearchParams(params).toString()}`;

/** The page's records are the created ones, field for field (long descriptions whole). */
function expectWhole(response: { body: any }, ...names: string[]): void {
  expect(response.body.data).toEqual(names.map((n) => t[n]));
}

beforeAll(async () => {
  tenant = await newTenant();
  const user = await newUser(tenant.admin.cookie);
  apiKey = await keyOf(user.cookie);
  me = as(apiKey);
  other = as(await keyOf((await newUser(tenant.admin.cookie)).cookie));
  const rows: [string, Record<string, unknown>][] = [
    ['S1', { title: 'Short one', description: 'b plain', status: 'todo', priority: 'low' }],
    ['L1', { title: 'Long one', description: long('e', ' zephyrword'), status: 'todo', priority: 'high', metadata: { note: 'n'.repeat(300) } }],
    ['S2', { title: 'Short two', description: 'd plain', status: 'completed', priority: 'high' }],
    ['L2', { title: 'Long two', description: long('a'), status: 'in_progress', priority: 'low' }],
    ['L3', { title: 'Long three', description: long('c', ' kumquat'), status: 'todo', priority: 'medium', metas: { source: 'import' } }],
    ['S3', { title: 'Short three', description: 'f plain', status: 'todo', priority: 'medium' }],
    ['L4', { title: 'Long four', description: long('g'), status: 'completed', priority: 'high' }],
  ];
  for (const [name, body] of rows) {
    t[name] = await created(me, 'tasks', body);
    await new Promise((r) => setTimeout(r, 3));
  }
  await created(other, 'tasks', { title: 'Long of someone else', description: long('a', ' zephyrword kumquat'), status: 'todo', priority: 'high' });
});

describe('records over 1 KB in listings', () => {
  it('lists them whole on the default page, with the exact total', async () => {
    const response = await me.get('/api/v1/tasks');

    expect(response.status).toBe(200);
    expectWhole(response, 'L4', 'S3', 'L3', 'L2', 'S2', 'L1', 'S1');
    expect(response.body.pagination).toMatchObject({ total: 7, hasNext: false });
    expect(t.L1.description).toHaveLength(2000);
  });

  it('filters by an indexed field (its own partition)', async () => {
    const response = await me.get('/api/v1/tasks?status=todo');

    expectWhole(response, 'S3', 'L3', 'L1', 'S1');
    expect(response.body.pagination.total).toBe(4);
  });

  it('filters on the long field itself and with two indexed equalities (one pushed down)', async () => {
    const contains = await me.get(q({ filter: JSON.stringify({ description: { $contains: 'kumquat' } }) }));
    expectWhole(contains, 'L3');
    expect(contains.body.pagination.total).toBe(1);

    const startsWith = await me.get(q({ filter: JSON.stringify({ description: { $startsWith: 'a a long' } }) }));
    expectWhole(startsWith, 'L2');
    const eq = await me.get(q({ filter: JSON.stringify({ description: t.L2.description }) }));
    expectWhole(eq, 'L2');

    const two = await me.get(q({ status: 'todo', priority: 'high' }));
    expectWhole(two, 'L1');
    expect(two.body.pagination.total).toBe(1);
    const metadata = await me.get(q({ filter: JSON.stringify({ 'metadata.note': { $startsWith: 'nnn' } }) }));
    expectWhole(metadata, 'L1');
  });

  it('finds a word that only a long description holds', async () => {
    const response = await me.get('/api/v1/tasks?search=zephyrword');

    expectWhole(response, 'L1');
    expect(response.body.pagination.total).toBe(1);
    expectWhole(await me.get('/api/v1/tasks?search=kumquat&status=todo'), 'L3');
  });

  it('sorts by a value the copies leave out', async () => {
    const response = await me.get('/api/v1/tasks?sort=description');

    expectWhole(response, 'L2', 'S1', 'L3', 'S2', 'L1', 'S3', 'L4');
    expect(ids(await me.get('/api/v1/tasks?sort=description&order=desc&limit=2&page=2'))).toEqual(byId('L1', 'S2'));
  });

  it('pages by number and by cursor', async () => {
    const second = await me.get('/api/v1/tasks?limit=3&page=2');
    expectWhole(second, 'L2', 'S2', 'L1');
    expect(second.body.pagination).toMatchObject({ total: 7, hasNext: true, hasPrev: true });

    const first = await me.get('/api/v1/tasks?limit=3');
    const next = await me.get(`/api/v1/tasks?limit=3&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
    expectWhole(next, 'L2', 'S2', 'L1');
    const last = await me.get(`/api/v1/tasks?limit=3&cursor=${encodeURIComponent(next.body.pagination.nextCursor)}`);
    expectWhole(last, 'S1');
    expect(last.body.pagination).toMatchObject({ total: 7, hasNext: false });
  });

  it('selects fields of whole records (fields=)', async () => {
    const response = await me.get('/api/v1/tasks?fields=description&status=todo&limit=2');

    expect(response.body.data).toEqual([
      { id: t.S3.id, description: t.S3.description },
      { id: t.L3.id, description: t.L3.description },
    ]);
  });

  it('lists them whole through GraphQL', async () => {
    const response = await api('POST', '/api/v1/graphql', {
      apiKey,
      body: { query: '{ tasks(limit: 3, filter: {status: todo}) { edges { node { id description } } totalCount } }' },
    });

    expect(response.status, response.text).toBe(200);
    expect(response.body.data.tasks.edges.map((e: any) => e.node)).toEqual(['S3', 'L3', 'L1'].map((n) => ({ id: t[n].id, description: t[n].description })));
    expect(response.body.data.tasks.totalCount).toBe(4);
  });

  it('includes long children whole', async () => {
    const parent = await created(me, 'tasks', { title: 'Parent', description: long('z') });
    const comment = await created(me, 'comments', { taskId: parent.id, body: long('comment') });

    const response = await me.get(`/api/v1/tasks/${parent.id}?include=comments`);

    expect(response.body.data.comments).toEqual([comment]);
    expect((await me.del(`/api/v1/tasks/${parent.id}`)).status).toBe(200);
  });
});

describe('records changing size and going away', () => {
  it('shows a record turned long, then short again, whole in every listing', async () => {
    const task = await created(me, 'tasks', { title: 'Grows', description: 'short', status: 'in_progress', priority: 'low' });
    const grown = (await me.patch(`/api/v1/tasks/${task.id}`, { description: long('h', ' growword') })).body.data;

    expect((await me.get(q({ status: 'in_progress' }))).body.data).toEqual([grown, t.L2]);
    expect((await me.get('/api/v1/tasks?search=growword')).body.data).toEqual([grown]);
    const shrunk = (await me.patch(`/api/v1/tasks/${task.id}`, { description: 'short again', status: 'todo' })).body.data;

    expect((await me.get(q({ status: 'in_progress' }))).body.data).toEqual([t.L2]);
    expect((await me.get(q({ status: 'todo', limit: '1' }))).body.data).toEqual([shrunk]);
    expect((await me.get('/api/v1/tasks?search=growword')).body.data).toEqual([]);
    expect((await me.del(`/api/v1/tasks/${task.id}`)).status).toBe(200);
  });

  it('shows the new text and times of a long record whose edit left its partial copies as they stood', async () => {
    const task = await created(me, 'tasks', { title: 'Edited', description: long('i'), status: 'in_progress', priority: 'medium' });
    await new Promise((r) => setTimeout(r, 5));
    const edited = (await me.patch(`/api/v1/tasks/${task.id}`, { description: long('i', ' editword') })).body.data;
    expect(edited.updatedAt > task.updatedAt).toBe(true);

    expect((await me.get(q({ status: 'in_progress' }))).body.data).toEqual([edited, t.L2]);
    expect((await me.get('/api/v1/tasks?search=editword')).body.data).toEqual([edited]);
    const since = await me.get(q({ filter: JSON.stringify({ updatedAt: { $gte: edited.updatedAt } }) }));
    expect(since.body.data).toEqual([edited]);
    expect(ids(await me.get('/api/v1/tasks?sort=updatedAt&order=desc&limit=1'))).toEqual([task.id]);
    const retitled = (await me.patch(`/api/v1/tasks/${task.id}`, { title: 'Edited twice' })).body.data;
    expect((await me.get(q({ status: 'in_progress', limit: '1' }))).body.data).toEqual([retitled]);
    expect((await me.del(`/api/v1/tasks/${task.id}`)).status).toBe(200);
  });

  it('drops a long record deleted between pages, and counts it out', async () => {
    const doomed = await created(me, 'tasks', { title: 'Doomed', description: long('y'), priority: 'low' });
    await new Promise((r) => setTimeout(r, 3));
    const newer = await created(me, 'tasks', { title: 'Newer', description: 'short', priority: 'low' });
    const first = await me.get('/api/v1/tasks?limit=1&priority=low');
    expect(first.body.data).toEqual([newer]);
    expect(first.body.pagination.total).toBe(4);

    expect((await me.del(`/api/v1/tasks/${doomed.id}`)).status).toBe(200);
    const next = await me.get(`/api/v1/tasks?limit=1&priority=low&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
    const second = await me.get('/api/v1/tasks?limit=1&priority=low&page=2');

    expectWhole(next, 'L2');
    expect(next.body.pagination).toMatchObject({ total: 3, hasNext: true });
    expectWhole(second, 'L2');
    expect(second.body.pagination).toMatchObject({ total: 3, hasNext: true });
    expect((await me.del(`/api/v1/tasks/${newer.id}`)).status).toBe(200);
    expectWhole(await me.get('/api/v1/tasks?priority=low'), 'L2', 'S1');
  });
});
