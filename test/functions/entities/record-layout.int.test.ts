/**
 * Where records live (shared/data/partitions.ts), through HTTP on DynamoDB Local. A record whose
 * id carries its creation time (every record created now) is its own copy in its tenant's listing;
 * a record whose id carries none (ids of earlier versions; ids an import derives from its
 * Idempotency-Key) has a detached record item and a copy there. Both kinds list together in order
 * with exact totals and read, update and delete alike; a soft-deleted record leaves the listing; a
 * caller of another tenant cannot reach a record by its id; a public entity's records stay detached.
 */
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient, tableName } from '../../../shared/data/client.js';
import { newTenant, newUser, type TestTenant } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());

let tenant: TestTenant;
let me: Caller;
let admin: Caller;
let stranger: Caller;

beforeAll(async () => {
  const [mine, theirs] = await Promise.all([newTenant(), newTenant()]);
  tenant = mine;
  const user = await newUser(tenant.admin.cookie);
  [me, admin, stranger] = (await Promise.all([keyOf(user.cookie), keyOf(tenant.admin.cookie), keyOf(theirs.admin.cookie)])).map(as);
});

async function item(pk: string, sk: string): Promise<Record<string, any> | undefined> {
  return (await engine.send(new GetCommand({ TableName: tableName('records'), Key: { pk, sk }, ConsistentRead: true }))).Item;
}

/** The items of a partition that stand for record `id` (records and copies). */
async function itemsFor(pk: string, id: string): Promise<Record<string, any>[]> {
  const { Items = [] } = await engine.send(
    new QueryCommand({ TableName: tableName('records'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }),
  );
  return Items.filter((i) => i.id === id);
}

const ids = (response: { body: any }): string[] => response.body.data.map((r: { id: string }) => r.id);

describe('records of both layouts', () => {
  it('list together newest first with exact totals, and read, update and delete alike', async () => {
    const imported = await me.post('/api/v1/import/tasks', { tasks: [{ title: 'Imported A' }, { title: 'Imported B' }] }, { headers: { 'Idempotency-Key': `layout-${Date.now()}` } });
    expect(imported.status, imported.text).toBe(201);
    const old = (imported.body.data.tasks as { id: string }[]).map((r) => r.id).sort();
    await new Promise((r) => setTimeout(r, 5));
    const fresh = [await created(me, 'tasks', { title: 'New A' }), await created(me, 'tasks', { title: 'New B' })].map((r) => r.id as string);
    const tenantView = `${tenant.tenantId}#tasks`;

    // Derived ids carry no time: a detached record and a copy. New ids: the record itself, and no detached item.
    for (const id of old) {
      expect(id).toMatch(/^tsk_[0-9A-Za-z]{20}$/);
      expect(await item(`tasks#${id}`, '#record')).toMatchObject({ kind: 'record', id });
      expect((await itemsFor(tenantView, id)).map((i) => i.kind)).toEqual(['index']);
    }
    for (const id of fresh) {
      expect(id).toMatch(/^tsk_[0-9A-Za-z]{22}$/);
      expect(await item(`tasks#${id}`, '#record')).toBeUndefined();
      expect((await itemsFor(tenantView, id)).map((i) => i.kind)).toEqual(['record']);
    }
    const list = await me.get('/api/v1/tasks');
    expect(ids(list)).toEqual([fresh[1], fresh[0], ...old]);
    expect(list.body.pagination.total).toBe(4);

    for (const id of [...old, ...fresh]) {
      expect((await me.get(`/api/v1/tasks/${id}`)).body.data.id).toBe(id);
      const patched = await me.patch(`/api/v1/tasks/${id}`, { status: 'completed', title: `Done ${id}` });
      expect(patched.status, patched.text).toBe(200);
    }
    const done = await me.get('/api/v1/tasks?status=completed');
    expect(ids(done)).toEqual([fresh[1], fresh[0], ...old]);
    expect(done.body.pagination.total).toBe(4);
    expect((await admin.get('/api/v1/tasks?status=completed&limit=2')).body.data.map((r: { title: string }) => r.title)).toEqual([`Done ${fresh[1]}`, `Done ${fresh[0]}`]);

    for (const id of [old[0], fresh[0]]) expect((await me.del(`/api/v1/tasks/${id}`)).status).toBe(200);
    const after = await me.get('/api/v1/tasks');
    expect(ids(after)).toEqual([fresh[1], old[1]]);
    expect(after.body.pagination.total).toBe(2);
    expect((await admin.get('/api/v1/tasks?status=completed')).body.pagination.total).toBe(2);
    expect((await me.get(`/api/v1/tasks/${fresh[0]}`)).status).toBe(404);
    expect(await itemsFor(tenantView, fresh[0])).toEqual([]);
  });
});

describe('a soft-deleted record', () => {
  it('leaves its tenant\'s listing for its detached key, and answers 404', async () => {
    const kept = await created(me, 'customers', { name: 'Kept' });
    const gone = await created(me, 'customers', { name: 'Gone' });

    const removed = await me.del(`/api/v1/customers/${gone.id}`);

    expect(removed.status).toBe(200);
    expect(removed.body.data.deletedAt).toEqual(expect.any(String));
    expect((await me.get(`/api/v1/customers/${gone.id}`)).status).toBe(404);
    expect((await me.patch(`/api/v1/customers/${gone.id}`, { name: 'Back' })).status).toBe(404);
    const list = await admin.get('/api/v1/customers');
    expect(ids(list)).toEqual([kept.id]);
    expect(list.body.pagination.total).toBe(1);
    expect(await itemsFor(`${tenant.tenantId}#customers`, gone.id)).toEqual([]);
    expect(await item(`customers#${gone.id}`, '#record')).toMatchObject({ kind: 'record', id: gone.id, deletedAt: removed.body.data.deletedAt, version: 2 });
  });
});

describe('a record by its id', () => {
  it('is out of reach of another tenant: 404 to read, update and delete, and left as it was', async () => {
    const task = await created(me, 'tasks', { title: 'Private' });

    expect((await stranger.get(`/api/v1/tasks/${task.id}`)).status).toBe(404);
    expect((await stranger.patch(`/api/v1/tasks/${task.id}`, { title: 'Taken' })).status).toBe(404);
    expect((await stranger.del(`/api/v1/tasks/${task.id}`)).status).toBe(404);
    expect((await stranger.get(`/api/v1/tasks?ids=${task.id}`)).body.data).toEqual([]);
    expect((await me.get(`/api/v1/tasks/${task.id}`)).body.data).toEqual(task);
  });

  it('of a public entity stays detached (its listing holds every tenant\'s records) and reads for anyone', async () => {
    const product = await created(admin, 'products', { name: 'Layout', price: 1 });

    expect(product.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await item(`products#${product.id}`, '#record')).toMatchObject({ kind: 'record', id: product.id });
    expect((await as(undefined).get(`/api/v1/products/${product.id}`)).body.data).toEqual(product);
  });
});
