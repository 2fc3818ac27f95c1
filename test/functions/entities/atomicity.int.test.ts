/**
 * Writes are atomic with their consequences: each create, update and delete is ONE
 * TransactWriteItems holding the record, its listing copies, their counters and a change event.
 * The handler runs in process against the test run's DynamoDB Local; a fault is injected by
 * adding a failing ConditionCheck to the transaction the service sends, and the engine is then
 * read directly: nothing of the failed write is left behind.
 */
import { GetCommand, DynamoDBDocumentClient, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient, db, dbOnce, tableName } from '../../../shared/data/client.js';
import { definitionLayout } from '../../../shared/data/layout.js';
import { recordKey } from '../../../shared/data/partitions.js';
import { loadDefinitions, type LoadedEntity } from '../../../shared/registry/index.js';
import { lambdaContext, parsed, proxyEvent } from '../../support/events.js';
import { newTenant, type TestTenant } from '../../support/identity.js';

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const { handler } = await import('../../../functions/entities/handler.js');

let tenant: TestTenant;
let entities: Record<string, LoadedEntity>;
const engine = DynamoDBDocumentClient.from(createDynamoClient());

beforeAll(async () => {
  tenant = await newTenant();
  entities = Object.fromEntries((await loadDefinitions()).map((e) => [e.slug, e]));
});

afterEach(() => vi.restoreAllMocks());

function call(method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { Cookie: tenant.admin.cookie };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return handler(proxyEvent({ method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) }), lambdaContext()).then(parsed);
}

interface Sent {
  commands: string[];
  /** Commands that touched the records table. */
  onRecords: string[];
  items: Record<string, any>[];
}

/** Counts the SDK commands sent; with `fail`, the next transaction gets a condition that cannot hold. */
function watch(options: { fail?: boolean } = {}): Sent {
  const sent: Sent = { commands: [], onRecords: [], items: [] };
  // Both clients: transactions go through the single-attempt one (shared/data/transact.ts sendTransaction).
  for (const client of [db(), dbOnce()]) {
    const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
    vi.spyOn(client, 'send').mockImplementation((async (command: { constructor: { name: string }; input: any }) => {
      sent.commands.push(command.constructor.name);
      if (command.input.TableName === tableName('records')) sent.onRecords.push(command.constructor.name);
      if (command instanceof TransactWriteCommand) {
        sent.items = [...(command.input.TransactItems ?? [])];
        if (options.fail) {
          command.input.TransactItems!.push({
            ConditionCheck: { TableName: tableName('records'), Key: { pk: 'fault-injection', sk: 'never' }, ConditionExpression: 'attribute_exists(pk)' },
          });
        }
      }
      return send(command);
    }) as never);
  }
  return sent;
}

async function item(pk: string, sk: string): Promise<Record<string, any> | undefined> {
  return (await engine.send(new GetCommand({ TableName: tableName('records'), Key: { pk, sk }, ConsistentRead: true }))).Item;
}

/** The record item of `id`, where the data layer keeps it. */
async function stored(slug: string, id: string): Promise<Record<string, any> | undefined> {
  const { pk, sk } = recordKey(definitionLayout(entities[slug]), id, tenant.tenantId);
  return item(pk, sk);
}

async function partition(pk: string): Promise<Record<string, any>[]> {
  return (await engine.send(new QueryCommand({ TableName: tableName('records'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }))).Items ?? [];
}

async function events(slug: string): Promise<Record<string, any>[]> {
  return (
    (await engine.send(new QueryCommand({ TableName: tableName('events'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `${tenant.tenantId}#${slug}` }, ConsistentRead: true })))
      .Items ?? []
  );
}

/** Everything a write could touch in one entity's tenant partitions. */
async function snapshot(slug: string, partitions: string[]) {
  return { partitions: await Promise.all(partitions.map(partition)), events: await events(slug) };
}

describe('a write and its consequences are one transaction', () => {
  it('CREATE sends one TransactWriteItems: the record (its own copy in the tenant partition), a counter per partition, the event', async () => {
    const sent = watch();

    const response = await call('POST', '/api/v1/tags', { name: 'atomic' });

    expect(response.status).toBe(201);
    expect(sent.commands.filter((c) => c === 'TransactWriteCommand')).toHaveLength(1);
    const id = response.body.data.id;
    const record = await stored('tags', id);
    expect(record).toMatchObject({ kind: 'record', id, tenantId: tenant.tenantId, ownerId: tenant.admin.id, version: 1, data: { name: 'atomic' } });
    expect((await partition(`${tenant.tenantId}#tags`)).filter((i) => i.id === id)).toEqual([record]);
    expect(await partition(`${tenant.tenantId}#tags`)).toContainEqual(expect.objectContaining({ kind: 'counter' }));
    const created = (await events('tags')).find((e) => e.recordId === id);
    expect(created).toMatchObject({ type: 'tag.created', entity: 'tags', tenantId: tenant.tenantId, ownerId: tenant.admin.id, data: response.body.data });
    expect(created!.expiresAt).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 24 * 3600 - 60);
  });

  it('UPDATE and DELETE each send one TransactWriteItems with their event (the delete event carries the id)', async () => {
    const task = (await call('POST', '/api/v1/tasks', { title: 'Evented' })).body.data;
    const updateSent = watch();
    const update = await call('PATCH', `/api/v1/tasks/${task.id}`, { status: 'completed' });
    vi.restoreAllMocks();
    const deleteSent = watch();
    const remove = await call('DELETE', `/api/v1/tasks/${task.id}`);

    expect(update.status).toBe(200);
    expect(remove.status).toBe(200);
    expect(updateSent.commands.filter((c) => c === 'TransactWriteCommand')).toHaveLength(1);
    expect(deleteSent.commands.filter((c) => c === 'TransactWriteCommand')).toHaveLength(1);
    const types = (await events('tasks')).filter((e) => e.recordId === task.id).map((e) => [e.type, e.data]);
    expect(types).toEqual([
      ['task.created', task],
      ['task.updated', update.body.data],
      ['task.deleted', { id: task.id }],
    ]);
    expect(await stored('tasks', task.id)).toBeUndefined();
    expect((await partition(`${tenant.tenantId}#tasks`)).filter((i) => i.id === task.id)).toEqual([]);
    // No copy is left; the partition's count is kept in the tenant partition's counter items.
    expect((await partition(`${tenant.tenantId}#tasks#status=completed`)).filter((i) => i.kind === 'index')).toEqual([]);
  });

  it('READ is one GetItem', async () => {
    const task = (await call('POST', '/api/v1/tasks', { title: 'Read me' })).body.data;
    const sent = watch();

    const response = await call('GET', `/api/v1/tasks/${task.id}`);

    expect(response.status).toBe(200);
    // The stack's own reads (session, user, rate-limit counter) go to other tables.
    expect(sent.onRecords).toEqual(['GetCommand']);
  });
});

describe('a failed transaction leaves nothing behind', () => {
  it('CREATE: no record, no copy, counters unchanged, no event', async () => {
    await call('POST', '/api/v1/tasks', { title: 'Existing', status: 'todo' });
    const partitions = [`${tenant.tenantId}#tasks`, `${tenant.tenantId}#tasks#owner=${tenant.admin.id}`, `${tenant.tenantId}#tasks#status=in_progress`];
    const before = await snapshot('tasks', partitions);
    const sent = watch({ fail: true });

    const response = await call('POST', '/api/v1/tasks', { title: 'Doomed', status: 'in_progress' });

    expect(response.status).toBe(500);
    expect(response.body).toEqual({ success: false, error: 'An unexpected error occurred', code: 'INTERNAL_ERROR' });
    const { pk, sk, kind } = sent.items[0].Put.Item;
    expect(kind).toBe('record');
    expect(await item(pk, sk)).toBeUndefined();
    expect(await snapshot('tasks', partitions)).toEqual(before);
  });

  it('UPDATE: the record, its copies, counters and events stay as they were', async () => {
    const task = (await call('POST', '/api/v1/tasks', { title: 'Stable' })).body.data;
    const partitions = [`${tenant.tenantId}#tasks#status=todo`, `${tenant.tenantId}#tasks#status=completed`, `${tenant.tenantId}#tasks`];
    const before = await snapshot('tasks', partitions);
    const record = await stored('tasks', task.id);
    watch({ fail: true });

    const response = await call('PATCH', `/api/v1/tasks/${task.id}`, { status: 'completed', title: 'Changed' });

    expect(response.status).toBe(500);
    expect(await stored('tasks', task.id)).toEqual(record);
    expect(await snapshot('tasks', partitions)).toEqual(before);
    vi.restoreAllMocks();
    expect((await call('GET', `/api/v1/tasks/${task.id}`)).body.data).toEqual(task);
  });

  it('DELETE (hard and soft): the record stays, counters and events unchanged', async () => {
    const tag = (await call('POST', '/api/v1/tags', { name: 'survivor' })).body.data;
    const customer = (await call('POST', '/api/v1/customers', { name: 'Survivor' })).body.data;
    const before = { tags: await snapshot('tags', [`${tenant.tenantId}#tags`]), customers: await snapshot('customers', [`${tenant.tenantId}#customers`]) };
    watch({ fail: true });

    const hard = await call('DELETE', `/api/v1/tags/${tag.id}`);
    const soft = await call('DELETE', `/api/v1/customers/${customer.id}`);

    expect(hard.status).toBe(500);
    expect(soft.status).toBe(500);
    expect(await stored('tags', tag.id)).toBeDefined();
    expect(await stored('customers', customer.id)).toMatchObject({ kind: 'record', version: 1 });
    expect((await stored('customers', customer.id))?.deletedAt).toBeUndefined();
    expect({ tags: await snapshot('tags', [`${tenant.tenantId}#tags`]), customers: await snapshot('customers', [`${tenant.tenantId}#customers`]) }).toEqual(before);
  });

  it('POST /tasks/{id}/tags: neither the tag nor the link', async () => {
    const task = (await call('POST', '/api/v1/tasks', { title: 'Unlinked' })).body.data;
    const before = await snapshot('tags', [`${tenant.tenantId}#tags`]);
    watch({ fail: true });

    const response = await call('POST', `/api/v1/tasks/${task.id}/tags`, { name: 'never' });

    expect(response.status).toBe(500);
    vi.restoreAllMocks();
    expect(await snapshot('tags', [`${tenant.tenantId}#tags`])).toEqual(before);
    expect((await call('GET', `/api/v1/tasks/${task.id}`)).body.data.tagIds).toEqual([]);
  });
});

describe('concurrent writes', () => {
  it('an update that loses the race to another update is re-applied on the new version, not lost or overwritten', async () => {
    const task = (await call('POST', '/api/v1/tasks', { title: 'Raced' })).body.data;
    // Transactions go through the single-attempt client (shared/data/transact.ts sendTransaction).
    const client = dbOnce();
    const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
    let interfered = false;
    let transactions = 0;
    vi.spyOn(client, 'send').mockImplementation((async (command: unknown) => {
      if (command instanceof TransactWriteCommand) {
        transactions += 1;
        if (!interfered) {
          interfered = true;
          // Another request changes the record after ours read it, before ours writes.
          const other = await call('PATCH', `/api/v1/tasks/${task.id}`, { priority: 'high' });
          expect(other.status).toBe(200);
        }
      }
      return send(command);
    }) as never);

    const response = await call('PATCH', `/api/v1/tasks/${task.id}`, { status: 'completed' });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ status: 'completed', priority: 'high' });
    expect(transactions).toBe(3);
    vi.restoreAllMocks();
    expect(await stored('tasks', task.id)).toMatchObject({ version: 3, data: { status: 'completed', priority: 'high' } });
    const highs = (await partition(`${tenant.tenantId}#tasks#priority=high`)).filter((i) => i.id === task.id);
    expect(highs).toHaveLength(1);
    expect(highs[0].data.status).toBe('completed');
  });
});
