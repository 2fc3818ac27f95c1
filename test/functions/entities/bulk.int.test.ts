/**
 * Bulk update PATCH /api/v1/{entity} and bulk delete DELETE /api/v1/{entity} (CONTRACT.md)
 * through HTTP: the single operations' validation, scopes, row-level security, soft delete and
 * change events, item by item, across two users' records.
 */
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient, tableName } from '../../../shared/data/client.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

let acme: TestTenant;
let alice: TestUser;
let bob: TestUser;
let asAlice: Caller;
let asBob: Caller;
let writeOnly: Caller;

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());

/** Change events of these records, read from the events table. */
async function eventsOf(ids: string[]): Promise<string[]> {
  const { Items = [] } = await engine.send(
    new QueryCommand({ TableName: tableName('events'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `${acme.tenantId}#tasks` }, ConsistentRead: true }),
  );
  return Items.filter((e) => ids.includes(e.recordId)).map((e) => `${e.recordId} ${e.type}`);
}

beforeAll(async () => {
  acme = await newTenant();
  [alice, bob] = await Promise.all([newUser(acme.admin.cookie), newUser(acme.admin.cookie)]);
  [asAlice, asBob, writeOnly] = (await Promise.all([keyOf(alice.cookie), keyOf(bob.cookie), keyOf(alice.cookie, ['tasks:read', 'tasks:write'])])).map(as);
});

describe('PATCH /api/v1/{entity} (bulk update)', () => {
  it('updates the caller’s records; another user’s ids and invalid changes fail per item and change nothing of theirs', async () => {
    const [a1, a2] = [await created(asAlice, 'tasks', { title: 'a1' }), await created(asAlice, 'tasks', { title: 'a2' })];
    const b1 = await created(asBob, 'tasks', { title: 'b1' });

    const response = await asAlice.patch('/api/v1/tasks', {
      updates: [
        { id: a1.id, status: 'completed' },
        { id: b1.id, title: 'stolen' },
        { id: a2.id, priority: 'urgent' },
        { id: 'tsk_doesnotexist', title: 'x' },
        { title: 'no id' },
      ],
    });

    expect(response.status, response.text).toBe(200);
    expect(response.body.data.updated).toBe(1);
    expect(response.body.data.failed).toBe(4);
    expect(response.body.data.items).toHaveLength(1);
    expect(response.body.data.items[0]).toMatchObject({ id: a1.id, status: 'completed' });
    expect(response.body.data.items[0].updatedAt > a1.updatedAt).toBe(true);
    const failures = response.body.data.failures;
    expect(failures.map((f: any) => [f.index, f.code])).toEqual([
      [1, 'NOT_FOUND'],
      [2, 'VALIDATION_FAILED'],
      [3, 'NOT_FOUND'],
      [4, 'VALIDATION_FAILED'],
    ]);
    expect(failures[1].details).toHaveProperty('priority');
    expect((await asBob.get(`/api/v1/tasks/${b1.id}`)).body.data.title).toBe('b1');
    expect((await asAlice.get(`/api/v1/tasks/${a2.id}`)).body.data.priority).toBe('medium');
  });

  it('refuses more than 100 updates, an empty list and a repeated id with 422', async () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ id: `tsk_${i}`, title: 'x' }));
    for (const updates of [[], many, [{ id: 'tsk_1', title: 'a' }, { id: 'tsk_1', title: 'b' }]]) {
      const response = await asAlice.patch('/api/v1/tasks', { updates });
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('VALIDATION_FAILED');
    }
  });

  it('answers 404 ENTITY_NOT_FOUND for an unknown entity', async () => {
    expect((await asAlice.patch('/api/v1/widgets', { updates: [{ id: 'x' }] })).body.code).toBe('ENTITY_NOT_FOUND');
  });
});

describe('bulk operations and change events', () => {
  it('write one task.updated / task.deleted event per changed record, none for failed items', async () => {
    const task = await created(asAlice, 'tasks', { title: 'evented' });
    const bobs = await created(asBob, 'tasks', { title: 'not evented' });

    await asAlice.patch('/api/v1/tasks', { updates: [{ id: task.id, title: 'evented 2' }, { id: bobs.id, title: 'x' }] });
    await asAlice.del('/api/v1/tasks', { body: { ids: [task.id, bobs.id] } });

    expect((await eventsOf([task.id, bobs.id])).sort()).toEqual(
      [`${task.id} task.created`, `${task.id} task.updated`, `${task.id} task.deleted`, `${bobs.id} task.created`].sort(),
    );
  });
});

describe('DELETE /api/v1/{entity} (bulk delete)', () => {
  it('deletes the caller’s records; another user’s ids fail and their records stay', async () => {
    const mine = [await created(asAlice, 'tasks', { title: 'd1' }), await created(asAlice, 'tasks', { title: 'd2' })];
    const bobs = await created(asBob, 'tasks', { title: 'bob keeps this' });

    const response = await asAlice.del('/api/v1/tasks', { body: { ids: [mine[0].id, bobs.id, mine[1].id] } });

    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toMatchObject({ deleted: 2, failed: 1 });
    expect(response.body.data.failures).toEqual([expect.objectContaining({ index: 1, id: bobs.id, code: 'NOT_FOUND' })]);
    for (const task of mine) expect((await asAlice.get(`/api/v1/tasks/${task.id}`)).status).toBe(404);
    expect((await asBob.get(`/api/v1/tasks/${bobs.id}`)).status).toBe(200);
  });

  it('soft-deletes on a softDelete entity: gone from READ and LIST, counted in pagination', async () => {
    const c = [await created(asAlice, 'customers', { name: 'c1' }), await created(asAlice, 'customers', { name: 'c2' })];
    const before = (await asAlice.get('/api/v1/customers?limit=1')).body.pagination.total;

    const response = await asAlice.del('/api/v1/customers', { body: { ids: c.map((x) => x.id) } });

    expect(response.status, response.text).toBe(200);
    expect(response.body.data.deleted).toBe(2);
    expect((await asAlice.get(`/api/v1/customers/${c[0].id}`)).status).toBe(404);
    expect((await asAlice.get('/api/v1/customers?limit=1')).body.pagination.total).toBe(before - 2);
  });

  it('needs <entity>:delete (403 for a key without it, nothing deleted), 405 where delete is disabled, 422 without ids', async () => {
    const task = await created(asAlice, 'tasks', { title: 'kept' });
    const denied = await writeOnly.del('/api/v1/tasks', { body: { ids: [task.id] } });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await asAlice.get(`/api/v1/tasks/${task.id}`)).status).toBe(200);

    const order = await created(asAlice, 'orders', { total: 5 });
    expect((await asAlice.del('/api/v1/orders', { body: { ids: [order.id] } })).status).toBe(405);
    expect((await asAlice.del('/api/v1/tasks', { body: { ids: [] } })).status).toBe(422);
    expect((await asAlice.del('/api/v1/tasks')).status).toBe(400);
  });
});
