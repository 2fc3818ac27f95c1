/**
 * A record's history through HTTP on DynamoDB Local: a revision per write with its actor and
 * diff, the record as it stood after a revision, restore (If-Match, bad input, soft- and
 * hard-deleted records), bulk operation ids, and 404 for everyone who may not read the record.
 */
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient, tableName } from '../../../shared/data/client.js';
import { newTenant, newUser } from '../../support/identity.js';
import { openSse } from '../stream/sse-client.js';
import { as, created, keyOf, type Caller } from './support.js';

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());

let me: Caller;
let colleague: Caller;
let stranger: Caller;
let tenantId: string;
let myKey: string;

beforeAll(async () => {
  const tenant = await newTenant();
  tenantId = tenant.tenantId;
  const user = await newUser(tenant.admin.cookie);
  const other = await newUser(tenant.admin.cookie);
  const elsewhere = await newTenant();
  const key = await keyOf(user.cookie);
  myKey = key;
  me = as(key);
  colleague = as(await keyOf(other.cookie));
  stranger = as(await keyOf(elsewhere.admin.cookie));
});

describe('revisions', () => {
  it('a record updated three times has four revisions, newest first, with actor, request id and diff', async () => {
    const task = await created(me, 'tasks', { title: 'v1', status: 'todo' });
    const path = `/api/v1/tasks/${task.id}`;
    for (const title of ['v2', 'v3']) expect((await me.patch(path, { title })).status).toBe(200);
    const last = await me.patch(path, { description: 'now described' }, { headers: { 'X-Request-ID': 'req-history-4' } });
    expect(last.status, last.text).toBe(200);

    const list = await me.get(`${path}/revisions`);
    expect(list.status, list.text).toBe(200);
    const revs = list.body.data;
    expect(revs.map((r: any) => r.revision)).toEqual([4, 3, 2, 1]);
    expect(revs.map((r: any) => r.operation)).toEqual(['update', 'update', 'update', 'create']);
    expect(revs[0].actor.type).toBe('api_key');
    expect(typeof revs[0].actor.id).toBe('string');
    expect(revs[0].requestId).toBe('req-history-4');
    expect(revs[0].changes).toEqual({ description: { from: null, to: 'now described' } });
    expect(revs[1].changes.title).toEqual({ from: 'v2', to: 'v3' });
    expect(revs[3].changes.title).toEqual({ from: null, to: 'v1' });

    const v2 = await me.get(`${path}/revisions/2`);
    expect(v2.status, v2.text).toBe(200);
    expect(v2.body.data.record).toMatchObject({ id: task.id, title: 'v2' });
    expect(v2.body.data.record.description).toBeUndefined();
  });

  it('pages newest first with a cursor, and refuses a cursor it did not give and a bad limit', async () => {
    const task = await created(me, 'tasks', { title: 'p1' });
    const path = `/api/v1/tasks/${task.id}`;
    for (const title of ['p2', 'p3', 'p4']) expect((await me.patch(path, { title })).status).toBe(200);
    const first = await me.get(`${path}/revisions?limit=3`);
    expect(first.body.data.map((r: any) => r.revision)).toEqual([4, 3, 2]);
    expect(first.body.pagination).toMatchObject({ limit: 3, hasNext: true });
    const second = await me.get(`${path}/revisions?limit=3&cursor=${first.body.pagination.nextCursor}`);
    expect(second.body.data.map((r: any) => r.revision)).toEqual([1]);
    expect(second.body.pagination).toMatchObject({ hasNext: false, nextCursor: null });
    expect((await me.get(`${path}/revisions?cursor=nonsense`)).status).toBe(400);
    const badLimit = await me.get(`${path}/revisions?limit=0`);
    expect(badLimit.status).toBe(422);
    expect(badLimit.body.code).toBe('VALIDATION_FAILED');
    expect((await me.get(`${path}/revisions/x`)).status).toBe(422);
    expect((await me.get(`${path}/revisions/99`)).status).toBe(404);
  });

  it('another user of a private entity and another tenant get 404 on history and restore', async () => {
    const task = await created(me, 'tasks', { title: 'private' });
    const path = `/api/v1/tasks/${task.id}`;
    for (const caller of [colleague, stranger]) {
      const list = await caller.get(`${path}/revisions`);
      expect(list.status).toBe(404);
      expect(list.body.code).toBe('NOT_FOUND');
      expect((await caller.get(`${path}/revisions/1`)).status).toBe(404);
      expect((await caller.post(`${path}/restore`, { revision: 1 })).status).toBe(404);
    }
    expect((await as(undefined).get(`${path}/revisions`)).status).toBe(401);
  });

  it('bulk update and bulk delete answer an operationId, kept in each revision', async () => {
    const a = await created(me, 'tasks', { title: 'bulk a' });
    const b = await created(me, 'tasks', { title: 'bulk b' });
    const bulk = await me.patch('/api/v1/tasks', { updates: [{ id: a.id, title: 'bulk a2' }, { id: b.id, title: 'bulk b2' }] });
    expect(bulk.status, bulk.text).toBe(200);
    const operationId = bulk.body.data.operationId;
    expect(operationId).toMatch(/^op_/);
    for (const id of [a.id, b.id]) {
      const [latest] = (await me.get(`/api/v1/tasks/${id}/revisions`)).body.data;
      expect(latest).toMatchObject({ revision: 2, operation: 'update', operationId });
    }
    const del = await me.del('/api/v1/tasks', { body: { ids: [a.id] } });
    expect(del.status, del.text).toBe(200);
    expect(del.body.data.operationId).toMatch(/^op_/);
    const afterDelete = await me.get(`/api/v1/tasks/${a.id}/revisions`);
    expect(afterDelete.status, afterDelete.text).toBe(200);
    expect(afterDelete.body.data[0]).toMatchObject({ revision: 3, operation: 'delete', operationId: del.body.data.operationId });
  });
});

describe('import', () => {
  it('an import answers an operationId, and each imported record has a create revision with it', async () => {
    const imported = await me.post('/api/v1/import/tags', { items: [{ name: 'hist-a' }, { name: 'hist-b' }] });
    expect(imported.status, imported.text).toBe(201);
    const { operationId, items } = imported.body.data;
    expect(operationId).toMatch(/^op_/);
    for (const tag of items) {
      const revisions = await me.get(`/api/v1/tags/${tag.id}/revisions`);
      expect(revisions.status, revisions.text).toBe(200);
      expect(revisions.body.data).toEqual([expect.objectContaining({ revision: 1, operation: 'create', operationId, changes: expect.objectContaining({ name: { from: null, to: tag.name } }) })]);
    }
  });
});

describe('restore', () => {
  it('puts a record back as it stood after each revision, as a new revision', async () => {
    const task = await created(me, 'tasks', { title: 'r1' });
    const path = `/api/v1/tasks/${task.id}`;
    expect((await me.patch(path, { title: 'r2', description: 'added' })).status).toBe(200);
    expect((await me.patch(path, { title: 'r3' })).status).toBe(200);

    const back = await me.post(`${path}/restore`, { revision: 1 });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ id: task.id, title: 'r1' });
    expect(back.body.data.description).toBeUndefined();
    expect(back.headers.get('etag')).toBeTruthy();
    const read = await me.get(path);
    expect(read.body.data.title).toBe('r1');
    const [latest] = (await me.get(`${path}/revisions`)).body.data;
    expect(latest).toMatchObject({ revision: 4, operation: 'restore' });
    expect(latest.changes.title).toEqual({ from: 'r3', to: 'r1' });

    const again = await me.post(`${path}/restore`, { revision: 2 });
    expect(again.body.data).toMatchObject({ title: 'r2', description: 'added' });
  });

  it('a stale If-Match is 412 and nothing is written', async () => {
    const task = await created(me, 'tasks', { title: 'e1' });
    const path = `/api/v1/tasks/${task.id}`;
    const stale = (await me.get(path)).headers.get('etag')!;
    expect((await me.patch(path, { title: 'e2' })).status).toBe(200);
    const refused = await me.post(`${path}/restore`, { revision: 1 }, { headers: { 'If-Match': stale } });
    expect(refused.status).toBe(412);
    expect(refused.body.code).toBe('PRECONDITION_FAILED');
    expect((await me.get(path)).body.data.title).toBe('e2');
    const current = (await me.get(path)).headers.get('etag')!;
    expect((await me.post(`${path}/restore`, { revision: 1 }, { headers: { 'If-Match': current } })).status).toBe(200);
  });

  it('bad input: no revision, not an integer, unknown keys, unknown revision', async () => {
    const task = await created(me, 'tasks', { title: 'bad' });
    const path = `/api/v1/tasks/${task.id}/restore`;
    for (const body of [{}, { revision: 'one' }, { revision: 1.5 }, { revision: 0 }, { revision: 1, extra: true }]) {
      const r = await me.post(path, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_FAILED');
    }
    // A body that is not an object is refused before the service.
    expect((await me.post(path, [])).status).toBe(400);
    expect((await me.post(path, { revision: 7 })).status).toBe(404);
    expect((await me.post('/api/v1/tasks/tsk_missing/restore', { revision: 1 })).status).toBe(404);
  });

  it('a hard-deleted record comes back with its id, listed again, and a deletion revision cannot be restored', async () => {
    const task = await created(me, 'tasks', { title: 'gone' });
    const path = `/api/v1/tasks/${task.id}`;
    expect((await me.del(path)).status).toBe(200);
    expect((await me.get(path)).status).toBe(404);
    const history = await me.get(`${path}/revisions`);
    expect(history.status, history.text).toBe(200);
    expect(history.body.data.map((r: any) => r.operation)).toEqual(['delete', 'create']);
    expect((await colleague.get(`${path}/revisions`)).status).toBe(404);
    expect((await me.post(`${path}/restore`, { revision: 2 })).status).toBe(422);

    const back = await me.post(`${path}/restore`, { revision: 1 });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ id: task.id, title: 'gone' });
    expect((await me.get(path)).body.data.title).toBe('gone');
    const listed = await me.get(`/api/v1/tasks?title=gone`);
    expect(listed.body.data.map((t: any) => t.id)).toContain(task.id);
    const [latest] = (await me.get(`${path}/revisions`)).body.data;
    expect(latest).toMatchObject({ revision: 3, operation: 'restore' });
  });

  it('a hard-deleted record brought back is counted again and created again in the event stream', async () => {
    const task = await created(me, 'tasks', { title: 'streamed back' });
    const path = `/api/v1/tasks/${task.id}`;
    const before = (await me.get('/api/v1/tasks?limit=1')).body.pagination.total;
    expect((await me.del(path)).status).toBe(200);
    expect((await me.get('/api/v1/tasks?limit=1')).body.pagination.total).toBe(before - 1);
    const stream = await openSse(`${inject('baseUrl')}/api/v1/stream/tasks`, { Authorization: `Bearer ${myKey}` });
    try {
      expect((await me.post(`${path}/restore`, { revision: 1 })).status).toBe(200);

      const event = await stream.waitFor((m) => m.data?.type === 'task.created' && m.data?.task?.id === task.id, 30_000);

      expect(event.data.task.title).toBe('streamed back');
      expect((await me.get('/api/v1/tasks?limit=1')).body.pagination.total).toBe(before);
    } finally {
      stream.close();
    }
  });

  it('a soft-deleted record comes back, listed and counted again', async () => {
    const customer = await created(me, 'customers', { name: 'Soft Once' });
    const path = `/api/v1/customers/${customer.id}`;
    const before = (await me.get('/api/v1/customers?limit=1')).body.pagination.total;
    expect((await me.del(path)).status).toBe(200);
    expect((await me.get('/api/v1/customers?limit=1')).body.pagination.total).toBe(before - 1);
    const back = await me.post(`${path}/restore`, { revision: 1 });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data.deletedAt).toBeUndefined();
    expect((await me.get(path)).body.data.name).toBe('Soft Once');
    expect((await me.get('/api/v1/customers?limit=1')).body.pagination.total).toBe(before);
    const [latest] = (await me.get(`${path}/revisions`)).body.data;
    expect(latest).toMatchObject({ revision: 3, operation: 'restore' });
  });
});

describe('undo of a bulk call', () => {
  it('a bulk update is undone but for a record changed in between (a conflict, left as it is); a second undo reverts nothing', async () => {
    const a = await created(me, 'tasks', { title: 'undo a' });
    const b = await created(me, 'tasks', { title: 'undo b' });
    const c = await created(me, 'tasks', { title: 'undo c' });
    const bulk = await me.patch('/api/v1/tasks', { updates: [a, b, c].map((t) => ({ id: t.id, status: 'completed' })) });
    expect(bulk.status, bulk.text).toBe(200);
    expect((await me.patch(`/api/v1/tasks/${c.id}`, { title: 'changed since' })).status).toBe(200);

    const undo = await me.post(`/api/v1/operations/${bulk.body.data.operationId}/undo`);
    expect(undo.status, undo.text).toBe(200);
    expect(undo.body.data).toEqual({ reverted: 2, conflicts: [c.id] });
    expect((await me.get(`/api/v1/tasks/${a.id}`)).body.data.status).toBe('todo');
    expect((await me.get(`/api/v1/tasks/${b.id}`)).body.data.status).toBe('todo');
    expect((await me.get(`/api/v1/tasks/${c.id}`)).body.data).toMatchObject({ status: 'completed', title: 'changed since' });

    const again = await me.post(`/api/v1/operations/${bulk.body.data.operationId}/undo`);
    expect(again.body.data).toEqual({ reverted: 0, conflicts: [] });
    expect((await me.get(`/api/v1/tasks/${a.id}/revisions`)).body.data[0].revision).toBe(3);
  });

  it('an import is undone: its records are gone', async () => {
    const imported = await me.post('/api/v1/import/tags', { items: [{ name: 'undo-import-a' }, { name: 'undo-import-b' }] });
    expect(imported.status, imported.text).toBe(201);
    const undo = await me.post(`/api/v1/operations/${imported.body.data.operationId}/undo`);
    expect(undo.body.data).toEqual({ reverted: 2, conflicts: [] });
    for (const tag of imported.body.data.items) expect((await me.get(`/api/v1/tags/${tag.id}`)).status).toBe(404);
  });

  it('a bulk delete is undone: the records come back', async () => {
    const a = await created(me, 'tasks', { title: 'undelete a' });
    const del = await me.del('/api/v1/tasks', { body: { ids: [a.id] } });
    expect(del.status, del.text).toBe(200);
    const undo = await me.post(`/api/v1/operations/${del.body.data.operationId}/undo`);
    expect(undo.body.data).toEqual({ reverted: 1, conflicts: [] });
    expect((await me.get(`/api/v1/tasks/${a.id}`)).body.data.title).toBe('undelete a');
  });

  it('a batch answers an operationId; its undo reverts every write of it, across entities, a record written twice back to before the first', async () => {
    const a = await created(me, 'tasks', { title: 'batch a' });
    const batch = await me.post('/api/v1/batch', {
      requests: [
        { id: '1', method: 'PATCH', path: `/tasks/${a.id}`, body: { status: 'in_progress' } },
        { id: '2', method: 'PATCH', path: `/tasks/${a.id}`, body: { status: 'completed' } },
        { id: '3', method: 'POST', path: '/tags', body: { name: 'batch-undo-tag' } },
        { id: '4', method: 'GET', path: `/tasks/${a.id}` },
      ],
    });
    expect(batch.status, batch.text).toBe(200);
    expect(batch.body.responses.map((r: { status: number }) => r.status)).toEqual([200, 200, 201, 200]);
    const tag = batch.body.responses[2].body.data;
    expect((await me.get(`/api/v1/tasks/${a.id}/revisions`)).body.data[0].operationId).toBe(batch.body.operationId);

    const undo = await me.post(`/api/v1/operations/${batch.body.operationId}/undo`);

    expect(undo.status, undo.text).toBe(200);
    expect(undo.body.data).toEqual({ reverted: 2, conflicts: [] });
    expect((await me.get(`/api/v1/tasks/${a.id}`)).body.data.status).toBe('todo');
    expect((await me.get(`/api/v1/tags/${tag.id}`)).status).toBe(404);
    expect((await me.post(`/api/v1/operations/${batch.body.operationId}/undo`)).body.data).toEqual({ reverted: 0, conflicts: [] });
  });

  it('another tenant gets 404, an unknown or malformed id 404, no credentials 401', async () => {
    const a = await created(me, 'tasks', { title: 'undo tenancy' });
    const bulk = await me.patch('/api/v1/tasks', { updates: [{ id: a.id, status: 'completed' }] });
    const path = `/api/v1/operations/${bulk.body.data.operationId}/undo`;
    expect((await stranger.post(path)).status).toBe(404);
    expect((await me.post('/api/v1/operations/op_unknown/undo')).status).toBe(404);
    expect((await me.post('/api/v1/operations/not-an-id/undo')).status).toBe(404);
    expect((await as(undefined).post(path)).status).toBe(401);
    expect((await me.get(`/api/v1/tasks/${a.id}`)).body.data.status).toBe('completed');
  });
});

describe('the trash', () => {
  it('lists the records deleted (hard and soft) to their owner, not to a colleague or another tenant, and a restored one leaves it', async () => {
    const task = await created(me, 'tasks', { title: 'trash me' });
    expect((await me.del(`/api/v1/tasks/${task.id}`)).status).toBe(200);
    const trash = await me.get('/api/v1/tasks/deleted');
    expect(trash.status, trash.text).toBe(200);
    expect(trash.body.data).toContainEqual({ id: task.id, deletedAt: expect.any(String), revision: 2 });
    expect((await colleague.get('/api/v1/tasks/deleted')).body.data.map((e: any) => e.id)).not.toContain(task.id);
    expect((await stranger.get('/api/v1/tasks/deleted')).body.data.map((e: any) => e.id)).not.toContain(task.id);
    expect((await as(undefined).get('/api/v1/tasks/deleted')).status).toBe(401);

    expect((await me.post(`/api/v1/tasks/${task.id}/restore`, { revision: 1 })).status).toBe(200);
    expect((await me.get('/api/v1/tasks/deleted')).body.data.map((e: any) => e.id)).not.toContain(task.id);

    const customer = await created(me, 'customers', { name: 'Soft trash' });
    expect((await me.del(`/api/v1/customers/${customer.id}`)).status).toBe(200);
    expect((await me.get('/api/v1/customers/deleted')).body.data.map((e: any) => e.id)).toContain(customer.id);
  });

  it('pages newest first with a cursor, a colleague walking past entries not theirs; a bad cursor is 400, a bad limit 422', async () => {
    const doomed = [];
    for (let i = 0; i < 5; i++) doomed.push(await created(me, 'tasks', { title: `paged trash ${i}` }));
    for (const task of doomed) expect((await me.del(`/api/v1/tasks/${task.id}`)).status).toBe(200);
    const theirs = await created(colleague, 'tasks', { title: 'colleague trash' });
    expect((await colleague.del(`/api/v1/tasks/${theirs.id}`)).status).toBe(200);

    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<Caller['get']>> = await me.get(`/api/v1/tasks/deleted?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status, page.text).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      walked.push(...page.body.data.map((e: { id: string }) => e.id));
      cursor = page.body.pagination.nextCursor;
    } while (cursor);

    // Deleted last, listed first; earlier tests' deletions follow, each once, none of the colleague's.
    expect(walked.slice(0, 5)).toEqual(doomed.map((t) => t.id).reverse());
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked).not.toContain(theirs.id);
    expect((await colleague.get('/api/v1/tasks/deleted?limit=1')).body.data.map((e: { id: string }) => e.id)).toEqual([theirs.id]);
    expect((await me.get('/api/v1/tasks/deleted?cursor=bm90LW91cnM')).status).toBe(400);
    expect((await me.get('/api/v1/tasks/deleted?limit=0')).status).toBe(422);
  });
});

describe('retention', () => {
  /** Moves an item of the history table past its expiry, as time would (DynamoDB Local never expires anything). */
  const expire = (pk: string, sk: string) =>
    engine.send(new UpdateCommand({ TableName: tableName('history'), Key: { pk, sk }, UpdateExpression: 'SET expiresAt = :past', ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 } }));

  it('a revision past its retention is gone from the list and from revisions/{n}, and cannot be restored', async () => {
    const task = await created(me, 'tasks', { title: 'kept a while' });
    expect((await me.patch(`/api/v1/tasks/${task.id}`, { title: 'kept longer' })).status).toBe(200);

    await expire(`${tenantId}#tasks#rev#${task.id}`, '0000000001');

    const list = await me.get(`/api/v1/tasks/${task.id}/revisions`);
    expect(list.body.data.map((r: { revision: number }) => r.revision)).toEqual([2]);
    expect((await me.get(`/api/v1/tasks/${task.id}/revisions/1`)).status).toBe(404);
    expect((await me.post(`/api/v1/tasks/${task.id}/restore`, { revision: 1 })).status).toBe(404);
    expect((await me.get(`/api/v1/tasks/${task.id}/revisions/2`)).status).toBe(200);
  });

  it('a deleted record past its retention leaves the trash', async () => {
    const task = await created(me, 'tasks', { title: 'deleted long ago' });
    expect((await me.del(`/api/v1/tasks/${task.id}`)).status).toBe(200);
    const entry = (await me.get('/api/v1/tasks/deleted?limit=1')).body.data[0];
    expect(entry.id).toBe(task.id);

    await expire(`${tenantId}#tasks#deleted`, `${entry.deletedAt}#${task.id}`);

    expect((await me.get('/api/v1/tasks/deleted?limit=100')).body.data.map((e: { id: string }) => e.id)).not.toContain(task.id);
  });
});
