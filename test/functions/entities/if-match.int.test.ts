/**
 * Conditional writes through HTTP on DynamoDB Local: If-Match and If-Unmodified-Since on PATCH
 * and DELETE, `*`, racing writers, bulk items with ifMatch, GraphQL ifMatch, and READ's ETag
 * being the one a write returns.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

let me: Caller;
let key: string;

beforeAll(async () => {
  const tenant = await newTenant();
  const user = await newUser(tenant.admin.cookie);
  key = await keyOf(user.cookie);
  me = as(key);
});

async function etagOf(path: string): Promise<string> {
  const read = await me.get(path);
  expect(read.status, read.text).toBe(200);
  return read.headers.get('etag')!;
}

describe('If-Match on a record', () => {
  it('READ and the write that made a version show the same ETag, and a strong one', async () => {
    const create = await me.post('/api/v1/tasks', { title: 'ETag' });
    expect(create.status).toBe(201);
    const path = `/api/v1/tasks/${create.body.data.id}`;
    expect(create.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(await etagOf(path)).toBe(create.headers.get('etag'));
    const patch = await me.patch(path, { title: 'ETag 2' });
    expect(patch.headers.get('etag')).not.toBe(create.headers.get('etag'));
    expect(await etagOf(path)).toBe(patch.headers.get('etag'));
    // Another view of the same version has the same ETag; If-None-Match still answers 304.
    const fields = await me.get(`${path}?fields=title`);
    expect(fields.headers.get('etag')).toBe(patch.headers.get('etag'));
    expect((await me.get(path, { headers: { 'If-None-Match': patch.headers.get('etag')! } })).status).toBe(304);
  });

  it('the current ETag updates; a stale one after another client’s update is 412 with the current ETag and nothing written', async () => {
    const task = await created(me, 'tasks', { title: 'Original' });
    const path = `/api/v1/tasks/${task.id}`;
    const first = await etagOf(path);
    const ok = await me.patch(path, { title: 'By client A' }, { headers: { 'If-Match': first } });
    expect(ok.status, ok.text).toBe(200);
    const current = ok.headers.get('etag')!;

    const stale = await me.patch(path, { title: 'By client B' }, { headers: { 'If-Match': first } });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ success: false, code: 'PRECONDITION_FAILED' });
    expect(stale.headers.get('etag')).toBe(current);
    const staleDelete = await me.del(path, { headers: { 'If-Match': first } });
    expect(staleDelete.status).toBe(412);

    const after = await me.get(path);
    expect(after.body.data.title).toBe('By client A');
    expect(after.headers.get('etag')).toBe(current);
  });

  it('* matches any existing record and is 412 on a deleted one', async () => {
    const task = await created(me, 'tasks', { title: 'Star' });
    const path = `/api/v1/tasks/${task.id}`;
    expect((await me.patch(path, { title: 'Star 2' }, { headers: { 'If-Match': '*' } })).status).toBe(200);
    expect((await me.del(path, { headers: { 'If-Match': '*' } })).status).toBe(200);
    const again = await me.patch(path, { title: 'Star 3' }, { headers: { 'If-Match': '*' } });
    expect(again.status).toBe(412);
    expect(again.body.code).toBe('PRECONDITION_FAILED');
    expect(again.headers.get('etag')).toBeNull();
    // Soft delete too (products).
    const product = await created(me, 'products', { name: 'Lamp', price: 10 });
    const productPath = `/api/v1/products/${product.id}`;
    expect((await me.del(productPath, { headers: { 'If-Match': '*' } })).status).toBe(200);
    expect((await me.patch(productPath, { price: 11 }, { headers: { 'If-Match': '*' } })).status).toBe(412);
  });

  it('two clients racing with the same ETag: exactly one wins', async () => {
    const task = await created(me, 'tasks', { title: 'Race' });
    const path = `/api/v1/tasks/${task.id}`;
    const etag = await etagOf(path);
    const other = as(key);
    const results = await Promise.all([
      me.patch(path, { title: 'Winner A' }, { headers: { 'If-Match': etag } }),
      other.patch(path, { title: 'Winner B' }, { headers: { 'If-Match': etag } }),
      me.patch(path, { title: 'Winner C' }, { headers: { 'If-Match': etag } }),
    ]);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 412, 412]);
    const winner = results.find((r) => r.status === 200)!;
    const after = await me.get(path);
    expect(after.body.data.title).toBe(winner.body.data.title);
    for (const loser of results.filter((r) => r.status === 412)) expect(loser.headers.get('etag')).toBe(after.headers.get('etag'));
  });

  it('If-Unmodified-Since on updatedAt: a date before the last change is 412, one after it passes', async () => {
    const task = await created(me, 'tasks', { title: 'Since' });
    const path = `/api/v1/tasks/${task.id}`;
    const before = new Date(Date.parse(task.updatedAt) - 60_000).toUTCString();
    const later = new Date(Date.parse(task.updatedAt) + 60_000).toUTCString();
    const refused = await me.patch(path, { title: 'Too late' }, { headers: { 'If-Unmodified-Since': before } });
    expect(refused.status).toBe(412);
    expect((await me.get(path)).body.data.title).toBe('Since');
    expect((await me.patch(path, { title: 'In time' }, { headers: { 'If-Unmodified-Since': later } })).status).toBe(200);
  });

  it('a malformed If-Match is 400; a PATCH without one keeps today’s behaviour', async () => {
    const task = await created(me, 'tasks', { title: 'Plain' });
    const path = `/api/v1/tasks/${task.id}`;
    const bad = await me.patch(path, { title: 'x' }, { headers: { 'If-Match': 'not-quoted' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_REQUEST');
    expect((await me.patch(path, { title: 'Unconditional' })).status).toBe(200);
  });
});

describe('ifMatch in bulk and GraphQL', () => {
  it('bulk items with a stale ifMatch fail alone; the others are written', async () => {
    const a = await created(me, 'tasks', { title: 'Bulk A' });
    const b = await created(me, 'tasks', { title: 'Bulk B' });
    const c = await created(me, 'tasks', { title: 'Bulk C' });
    const staleB = await etagOf(`/api/v1/tasks/${b.id}`);
    await me.patch(`/api/v1/tasks/${b.id}`, { title: 'B moved on' });
    const freshA = await etagOf(`/api/v1/tasks/${a.id}`);
    const update = await me.patch('/api/v1/tasks', {
      updates: [
        { id: a.id, ifMatch: freshA, status: 'completed' },
        { id: b.id, ifMatch: staleB, status: 'completed' },
        { id: c.id, status: 'completed' },
      ],
    });
    expect(update.status, update.text).toBe(200);
    expect(update.body.data).toMatchObject({ updated: 2, failed: 1 });
    expect(update.body.data.failures).toEqual([
      expect.objectContaining({ index: 1, id: b.id, code: 'PRECONDITION_FAILED', etag: await etagOf(`/api/v1/tasks/${b.id}`) }),
    ]);
    expect((await me.get(`/api/v1/tasks/${b.id}`)).body.data.status).toBe('todo');

    const staleA = freshA;
    const remove = await me.del('/api/v1/tasks', { body: { ids: [{ id: a.id, ifMatch: staleA }, { id: c.id, ifMatch: '*' }] } });
    expect(remove.status, remove.text).toBe(200);
    expect(remove.body.data).toMatchObject({ deleted: 1, failed: 1, ids: [c.id] });
    expect(remove.body.data.failures[0]).toMatchObject({ index: 0, code: 'PRECONDITION_FAILED' });
    expect((await me.get(`/api/v1/tasks/${a.id}`)).status).toBe(200);
  });

  it('GraphQL update and delete take ifMatch', async () => {
    const task = await created(me, 'tasks', { title: 'GraphQL' });
    const etag = await etagOf(`/api/v1/tasks/${task.id}`);
    const mutate = (query: string, variables: Record<string, unknown>) => api('POST', '/api/v1/graphql', { apiKey: key, body: { query, variables } });
    const update = 'mutation($id: ID!, $m: String) { updateTask(id: $id, input: {title: "GQL 2"}, ifMatch: $m) { title } }';
    const ok = await mutate(update, { id: task.id, m: etag });
    expect(ok.body.data?.updateTask?.title, ok.text).toBe('GQL 2');
    const stale = await mutate(update, { id: task.id, m: etag });
    expect(stale.body.errors[0].extensions).toMatchObject({ code: 'PRECONDITION_FAILED', status: 412 });
    const remove = await mutate('mutation($id: ID!, $m: String) { deleteTask(id: $id, ifMatch: $m) }', { id: task.id, m: etag });
    expect(remove.body.errors[0].extensions.code).toBe('PRECONDITION_FAILED');
    expect((await me.get(`/api/v1/tasks/${task.id}`)).body.data.title).toBe('GQL 2');
  });
});
