/**
 * Bulk import through HTTP (SPEC.md Bulk operations, CONTRACT.md): the generic variant with
 * skipInvalid × returnFailures, the tasks variant (1..100 items, assignUsers, notify), scopes,
 * counters kept exact, and an idempotent retry.
 */
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient, tableName } from '../../../shared/data/client.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { as, keyOf, type Caller } from '../entities/support.js';

let acme: TestTenant;
let globex: TestTenant;
let alice: TestUser;
let bob: TestUser;
let asAlice: Caller;
let asBob: Caller;
let readOnly: Caller;
let outsider: TestUser;

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());

beforeAll(async () => {
  [acme, globex] = await Promise.all([newTenant(), newTenant()]);
  [alice, bob, outsider] = await Promise.all([newUser(acme.admin.cookie), newUser(acme.admin.cookie), newUser(globex.admin.cookie)]);
  [asAlice, asBob, readOnly] = (await Promise.all([keyOf(alice.cookie), keyOf(bob.cookie), keyOf(alice.cookie, ['tasks:read', 'customers:read'])])).map(as);
});

/** task.created events of these tasks, read from the events table. */
async function createdEvents(tenantId: string, ids: string[]): Promise<Record<string, any>[]> {
  const { Items = [] } = await engine.send(
    new QueryCommand({
      TableName: tableName('events'),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `${tenantId}#tasks` },
      ConsistentRead: true,
    }),
  );
  return Items.filter((e) => ids.includes(e.recordId) && e.type === 'task.created');
}

async function total(caller: Caller, slug: string): Promise<number> {
  const response = await caller.get(`/api/v1/${slug}?limit=1`);
  expect(response.status, response.text).toBe(200);
  return response.body.pagination.total;
}

const customers = [{ name: 'Ada', email: 'ada@example.com' }, { email: 'not an email' }, { name: 'Grace' }, { name: 'Bad', phone: 12 }];

describe('POST /api/v1/import/{entity}', () => {
  it('skipInvalid false: refuses the request at the first invalid item with 422 naming its index, nothing created', async () => {
    const before = await total(asAlice, 'customers');

    const response = await asAlice.post('/api/v1/import/customers', { items: customers });

    expect(response.status, response.text).toBe(422);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.details).toHaveProperty(['items[1].name'], 'is required');
    expect(Object.keys(response.body.details).every((k: string) => k.startsWith('items[1].'))).toBe(true);
    expect(response.body.error).toMatch(/Item 1/);
    expect(await total(asAlice, 'customers')).toBe(before);
  });

  it('skipInvalid false with returnFailures: the same refusal, nothing created', async () => {
    const before = await total(asAlice, 'customers');
    const response = await asAlice.post('/api/v1/import/customers', { items: customers, options: { skipInvalid: false, returnFailures: true } });
    expect(response.status).toBe(422);
    expect(await total(asAlice, 'customers')).toBe(before);
  });

  it('skipInvalid false: every valid item is created with a 201', async () => {
    const response = await asAlice.post('/api/v1/import/customers', { items: [customers[0], customers[2]], options: { returnFailures: true } });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toMatchObject({ created: 2, failed: 0, failures: [] });
    expect(response.body.data.items.map((c: any) => c.name)).toEqual(['Ada', 'Grace']);
  });

  it('skipInvalid true with returnFailures: creates the valid items and reports each invalid one with its zero-based index, item and error', async () => {
    const before = await total(asAlice, 'customers');

    const response = await asAlice.post('/api/v1/import/customers', { items: customers, options: { skipInvalid: true, returnFailures: true } });

    expect(response.status, response.text).toBe(201);
    expect(response.body.data.created).toBe(2);
    expect(response.body.data.failed).toBe(2);
    expect(response.body.data.items.map((c: any) => c.name)).toEqual(['Ada', 'Grace']);
    expect(response.body.data.failures.map((f: any) => f.index)).toEqual([1, 3]);
    expect(response.body.data.failures[0].item).toEqual(customers[1]);
    expect(response.body.data.failures[0].error).toMatch(/name is required/);
    expect(response.body.data.failures[1].error).toMatch(/phone/);
    expect(await total(asAlice, 'customers')).toBe(before + 2);
  });

  it('skipInvalid true without returnFailures: counts the failures but does not list them', async () => {
    const response = await asAlice.post('/api/v1/import/customers', { items: customers, options: { skipInvalid: true } });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toMatchObject({ created: 2, failed: 2 });
    expect(response.body.data).not.toHaveProperty('failures');
  });

  it('imports records of the caller only: another user does not see them, the owner does', async () => {
    const response = await asAlice.post('/api/v1/import/customers', { items: [{ name: 'Private' }] });
    const id = response.body.data.items[0].id;
    expect((await asAlice.get(`/api/v1/customers/${id}`)).status).toBe(200);
    expect((await asBob.get(`/api/v1/customers/${id}`)).status).toBe(404);
  });

  it('needs <entity>:write: a read-only key gets 403, an unknown entity 404, a bad body 422', async () => {
    const denied = await readOnly.post('/api/v1/import/customers', { items: [{ name: 'X' }] });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    const unknown = await asAlice.post('/api/v1/import/widgets', { items: [{ name: 'X' }] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('ENTITY_NOT_FOUND');
    for (const body of [{ items: [] }, { items: Array.from({ length: 101 }, (_, i) => ({ name: `C${i}` })) }, { items: [{ name: 'a' }], options: { skipInvalid: 'yes' } }]) {
      const response = await asAlice.post('/api/v1/import/customers', body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(422);
    }
  });
});

describe('POST /api/v1/import/tasks', () => {
  it('refuses 0 and 101 tasks with 422, and creates nothing', async () => {
    const before = await total(asAlice, 'tasks');
    const none = await asAlice.post('/api/v1/import/tasks', { tasks: [] });
    const tooMany = await asAlice.post('/api/v1/import/tasks', { tasks: Array.from({ length: 101 }, (_, i) => ({ title: `T${i}` })) });
    for (const response of [none, tooMany]) {
      expect(response.status, response.text).toBe(422);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(response.body.details).toHaveProperty('tasks');
    }
    expect(await total(asAlice, 'tasks')).toBe(before);
  });

  it('imports 100 tasks with 201 {imported, failed, tasks, errors}; the counters match the records', async () => {
    const before = await total(asBob, 'tasks');
    const tasks = Array.from({ length: 100 }, (_, i) => ({ title: `Bulk ${i}`, status: ['todo', 'in_progress', 'completed'][i % 3], priority: ['low', 'high'][i % 2] }));

    const response = await asBob.post('/api/v1/import/tasks', { tasks });

    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toMatchObject({ imported: 100, failed: 0, errors: [] });
    expect(response.body.data.tasks.map((t: any) => t.title)).toEqual(tasks.map((t) => t.title));
    expect(response.body.data.tasks[0].id).toMatch(/^tsk_/);
    expect(await total(asBob, 'tasks')).toBe(before + 100);
    const completed = await asBob.get('/api/v1/tasks?status=completed&limit=100');
    expect(completed.body.data.filter((t: any) => t.title.startsWith('Bulk ')).length).toBe(33);
  });

  it('reports invalid tasks in errors with their index and imports the others', async () => {
    const response = await asAlice.post('/api/v1/import/tasks', { tasks: [{ title: 'ok' }, { priority: 'urgent' }, 'nope'] });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data.imported).toBe(1);
    expect(response.body.data.failed).toBe(2);
    expect(response.body.data.errors.map((e: any) => e.index)).toEqual([1, 2]);
    expect(response.body.data.errors[0]).toMatchObject({ task: { priority: 'urgent' } });
    expect(response.body.data.errors[0].error).toMatch(/title is required/);
  });

  it('assignUsers resolves assigneeEmail to a user of the caller’s tenant; an unknown or foreign e-mail fails that task', async () => {
    const response = await asAlice.post('/api/v1/import/tasks', {
      assignUsers: true,
      tasks: [
        { title: 'for bob', assigneeEmail: bob.email.toUpperCase() },
        { title: 'for nobody', assigneeEmail: 'nobody@test.local' },
        { title: 'for an outsider', assigneeEmail: outsider.email },
        { title: 'unassigned' },
      ],
    });

    expect(response.status, response.text).toBe(201);
    expect(response.body.data.imported).toBe(2);
    expect(response.body.data.tasks[0]).toMatchObject({ title: 'for bob', assigneeId: bob.id });
    expect(response.body.data.tasks[0]).not.toHaveProperty('assigneeEmail');
    expect(response.body.data.tasks[1].assigneeId).toBeUndefined();
    expect(response.body.data.errors.map((e: any) => e.index)).toEqual([1, 2]);
    expect(response.body.data.errors[0].error).toMatch(/assigneeEmail/);
  });

  it('without assignUsers an assigneeEmail fails its task', async () => {
    const response = await asAlice.post('/api/v1/import/tasks', { tasks: [{ title: 'x', assigneeEmail: bob.email }] });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ imported: 0, failed: 1 });
    expect(response.body.data.errors[0].error).toMatch(/assignUsers/);
  });

  it('notify true writes one task.created event per imported task; notify false (default) writes none', async () => {
    const notified = await asAlice.post('/api/v1/import/tasks', { notify: true, tasks: [{ title: 'n1' }, { title: 'n2' }] });
    const silent = await asAlice.post('/api/v1/import/tasks', { tasks: [{ title: 's1' }, { title: 's2' }] });
    const notifiedIds = notified.body.data.tasks.map((t: any) => t.id);
    const silentIds = silent.body.data.tasks.map((t: any) => t.id);

    const events = await createdEvents(acme.tenantId, [...notifiedIds, ...silentIds]);

    expect(events.map((e) => e.recordId).sort()).toEqual([...notifiedIds].sort());
    expect(events[0].data).toMatchObject({ id: expect.any(String), title: expect.stringMatching(/^n/) });
  });

  it('an Idempotency-Key retry returns the first response and creates nothing twice', async () => {
    const before = await total(asAlice, 'tasks');
    const body = { tasks: [{ title: 'once 1' }, { title: 'once 2' }] };
    const headers = { 'Idempotency-Key': `import-${Date.now()}` };

    const first = await asAlice.post('/api/v1/import/tasks', body, { headers });
    const retry = await asAlice.post('/api/v1/import/tasks', body, { headers });

    expect(first.status, first.text).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('Idempotent-Replayed')).toBe('true');
    expect(retry.body.data.tasks.map((t: any) => t.id)).toEqual(first.body.data.tasks.map((t: any) => t.id));
    expect(await total(asAlice, 'tasks')).toBe(before + 2);
  });

  it('the static tasks route wins over /import/{entity}', async () => {
    const response = await asAlice.post('/api/v1/import/tasks', { items: [{ title: 'generic?' }] });
    expect(response.status).toBe(422);
    expect(response.body.details).toHaveProperty('items');
  });
});
