/**
 * Tenancy, ownership, sharing and public access (CONTRACT.md) through HTTP: two users and an admin
 * of one tenant, and a second tenant. Row-level security lives in the data layer, so keys and
 * sessions see the same.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

let acme: TestTenant;
let globex: TestTenant;
let alice: TestUser;
let bob: TestUser;
let asAlice: Caller;
let asBob: Caller;
let asAdmin: Caller;
let asOutsider: Caller;
const anonymous = as(undefined);

beforeAll(async () => {
  [acme, globex] = await Promise.all([newTenant(), newTenant()]);
  [alice, bob] = await Promise.all([newUser(acme.admin.cookie), newUser(acme.admin.cookie)]);
  [asAlice, asBob, asAdmin, asOutsider] = (
    await Promise.all([keyOf(alice.cookie), keyOf(bob.cookie), keyOf(acme.admin.cookie, ['*']), keyOf(globex.admin.cookie, ['*'])])
  ).map(as);
});

const ids = (response: { body: { data: { id: string }[] } }) => response.body.data.map((r) => r.id);

describe('a private entity (tasks: shared false)', () => {
  let task: Record<string, any>;
  beforeAll(async () => {
    task = await created(asAlice, 'tasks', { title: 'Alice’s task' });
  });

  it('lists only the caller’s own records', async () => {
    const bobsTask = await created(asBob, 'tasks', { title: 'Bob’s task' });

    const alices = ids(await asAlice.get('/api/v1/tasks'));
    const bobs = ids(await asBob.get('/api/v1/tasks'));

    expect(alices).toContain(task.id);
    expect(alices).not.toContain(bobsTask.id);
    expect(bobs).toEqual([bobsTask.id]);
  });

  it('answers 404 NOT_FOUND to another user of the tenant for READ, UPDATE and DELETE, and leaves the record', async () => {
    for (const response of [
      await asBob.get(`/api/v1/tasks/${task.id}`),
      await asBob.patch(`/api/v1/tasks/${task.id}`, { title: 'Taken' }),
      await asBob.del(`/api/v1/tasks/${task.id}`),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
    expect((await asAlice.get(`/api/v1/tasks/${task.id}`)).body.data.title).toBe('Alice’s task');
  });

  it('answers the same through a session as through a key', async () => {
    const response = await api('GET', `/api/v1/tasks/${task.id}`, { cookie: bob.cookie });
    const own = await api('GET', `/api/v1/tasks/${task.id}`, { cookie: alice.cookie });

    expect(response.status).toBe(404);
    expect(own.status).toBe(200);
  });

  it('lets the tenant’s admin list, read, update and delete every record of the tenant', async () => {
    const mine = await created(asAlice, 'tasks', { title: 'For the admin' });

    const list = ids(await asAdmin.get('/api/v1/tasks?limit=100'));
    const read = await asAdmin.get(`/api/v1/tasks/${mine.id}`);
    const update = await asAdmin.patch(`/api/v1/tasks/${mine.id}`, { status: 'completed' });
    const remove = await asAdmin.del(`/api/v1/tasks/${mine.id}`);

    expect(list).toEqual(expect.arrayContaining([task.id, mine.id]));
    expect(read.status).toBe(200);
    expect(update.body.data.status).toBe('completed');
    expect(remove.status).toBe(200);
    expect((await asAlice.get(`/api/v1/tasks/${mine.id}`)).status).toBe(404);
  });

  it('keeps the record of an admin’s write owned by its creator', async () => {
    const mine = await created(asAlice, 'tasks', { title: 'Still mine' });
    await asAdmin.patch(`/api/v1/tasks/${mine.id}`, { priority: 'high' });

    expect(ids(await asAlice.get('/api/v1/tasks?limit=100'))).toContain(mine.id);
  });

  it('hides every record from another tenant, its admin included', async () => {
    expect((await asOutsider.get(`/api/v1/tasks/${task.id}`)).status).toBe(404);
    expect((await asOutsider.patch(`/api/v1/tasks/${task.id}`, { title: 'x' })).status).toBe(404);
    expect((await asOutsider.del(`/api/v1/tasks/${task.id}`)).status).toBe(404);
    expect(ids(await asOutsider.get('/api/v1/tasks?limit=100'))).not.toContain(task.id);
  });

  it('answers 401 to anonymous callers', async () => {
    expect((await anonymous.get('/api/v1/tasks')).status).toBe(401);
    expect((await anonymous.get(`/api/v1/tasks/${task.id}`)).status).toBe(401);
    expect((await anonymous.options('/api/v1/tasks')).status).toBe(401);
  });
});

describe('a shared entity (tags: shared true)', () => {
  it('shows every user of the tenant every record, and lets them change it', async () => {
    const tag = await created(asAlice, 'tags', { name: 'shared' });

    const listed = ids(await asBob.get('/api/v1/tags?limit=100'));
    const update = await asBob.patch(`/api/v1/tags/${tag.id}`, { color: '#123456' });

    expect(listed).toContain(tag.id);
    expect(update.status).toBe(200);
    expect((await asAlice.get(`/api/v1/tags/${tag.id}`)).body.data.color).toBe('#123456');
  });

  it('still hides it from another tenant', async () => {
    const tag = await created(asAlice, 'tags', { name: 'acme only' });

    expect((await asOutsider.get(`/api/v1/tags/${tag.id}`)).status).toBe(404);
    expect(ids(await asOutsider.get('/api/v1/tags?limit=100'))).not.toContain(tag.id);
  });
});

describe('a public entity (products: public true)', () => {
  let acmeProduct: Record<string, any>;
  let globexProduct: Record<string, any>;
  beforeAll(async () => {
    acmeProduct = await created(asAlice, 'products', { name: 'Acme anvil', price: 10 });
    globexProduct = await created(asOutsider, 'products', { name: 'Globex globe', price: 20 });
  });

  it('lets anyone, without credentials, list and read every tenant’s records, and see the description', async () => {
    const list = await anonymous.get('/api/v1/products?limit=100');
    const read = await anonymous.get(`/api/v1/products/${globexProduct.id}`);
    const description = await anonymous.options('/api/v1/products');

    expect(list.status).toBe(200);
    expect(ids(list)).toEqual(expect.arrayContaining([acmeProduct.id, globexProduct.id]));
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(globexProduct);
    expect(description.status).toBe(200);
    expect(description.body.data.permissions).toEqual({ read: true, write: false, delete: false });
  });

  it('lets a key without products scopes read it, as anyone may', async () => {
    const tasksOnly = as(await keyOf(alice.cookie, ['tasks:read']));

    expect((await tasksOnly.get(`/api/v1/products/${acmeProduct.id}`)).status).toBe(200);
    expect((await tasksOnly.post('/api/v1/products', { name: 'x', price: 1 })).status).toBe(403);
  });

  it('still needs credentials to write', async () => {
    expect((await anonymous.post('/api/v1/products', { name: 'Free', price: 0 })).status).toBe(401);
    expect((await anonymous.patch(`/api/v1/products/${acmeProduct.id}`, { price: 0 })).status).toBe(401);
    expect((await anonymous.del(`/api/v1/products/${acmeProduct.id}`)).status).toBe(401);
  });

  it('keeps writes inside the record’s tenant: another tenant gets 403 FORBIDDEN, the owner’s colleagues may write', async () => {
    const foreign = await asOutsider.patch(`/api/v1/products/${acmeProduct.id}`, { price: 0 });
    const foreignDelete = await asOutsider.del(`/api/v1/products/${acmeProduct.id}`);
    const colleague = await asBob.patch(`/api/v1/products/${acmeProduct.id}`, { price: 11 });

    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('FORBIDDEN');
    expect(foreignDelete.status).toBe(403);
    expect(colleague.status).toBe(200);
    expect((await anonymous.get(`/api/v1/products/${acmeProduct.id}`)).body.data.price).toBe(11);
  });

  it('hides a soft-deleted record from everyone', async () => {
    const product = await created(asAlice, 'products', { name: 'Discontinued', price: 1 });
    await asAlice.del(`/api/v1/products/${product.id}`);

    expect((await anonymous.get(`/api/v1/products/${product.id}`)).status).toBe(404);
    expect(ids(await anonymous.get('/api/v1/products?limit=100'))).not.toContain(product.id);
  });
});

describe('references stay inside what the caller can see', () => {
  it('accepts an assignee of the caller’s tenant and refuses one of another tenant with 422 naming assigneeId', async () => {
    const ok = await asAlice.post('/api/v1/tasks', { title: 'Assigned', assigneeId: bob.id });
    const foreign = await asAlice.post('/api/v1/tasks', { title: 'Assigned', assigneeId: globex.admin.id });
    const unknown = await asAlice.post('/api/v1/tasks', { title: 'Assigned', assigneeId: 'usr_nobody' });

    expect(ok.status).toBe(201);
    expect(foreign.status).toBe(422);
    expect(foreign.body.details).toEqual({ assigneeId: expect.stringContaining('user of your tenant') });
    expect(unknown.status).toBe(422);
  });

  it('refuses a comment on a task the caller cannot see', async () => {
    const bobsTask = await created(asBob, 'tasks', { title: 'Private' });

    const response = await asAlice.post('/api/v1/comments', { taskId: bobsTask.id, body: 'Sneaky' });

    expect(response.status).toBe(422);
    expect(response.body.details).toEqual({ taskId: expect.stringContaining(bobsTask.id) });
  });

  it('refuses tags of another tenant and unknown tags with 422 naming tagIds', async () => {
    const own = await created(asAlice, 'tags', { name: 'mine' });
    const foreign = await created(asOutsider, 'tags', { name: 'theirs' });

    const ok = await asBob.post('/api/v1/tasks', { title: 'Tagged', tagIds: [own.id] });
    const refused = await asAlice.post('/api/v1/tasks', { title: 'Tagged', tagIds: [own.id, foreign.id, 'tag_unknown'] });
    const update = await asBob.patch(`/api/v1/tasks/${ok.body.data.id}`, { tagIds: [own.id, foreign.id] });

    expect(ok.status).toBe(201);
    expect(refused.status).toBe(422);
    expect(refused.body.details).toEqual({ tagIds: `must be ids of tags records you can see (unknown: ${foreign.id}, tag_unknown)` });
    expect(update.status).toBe(422);
  });

  it('reports unknown references together with every other failing field', async () => {
    const response = await asAlice.post('/api/v1/tasks', { status: 'nope', assigneeId: 'usr_nobody', tagIds: ['tag_nope'] });

    expect(response.status).toBe(422);
    expect(Object.keys(response.body.details).sort()).toEqual(['assigneeId', 'status', 'tagIds', 'title']);
  });
});

describe('definition permissions and scopes', () => {
  it('checks the scopes of each operation per entity', async () => {
    const writer = as(await keyOf(alice.cookie, ['customers:read', 'customers:write']));
    const customer = await created(writer, 'customers', { name: 'Scoped' });

    expect((await writer.patch(`/api/v1/customers/${customer.id}`, { name: 'Renamed' })).status).toBe(200);
    const remove = await writer.del(`/api/v1/customers/${customer.id}`);
    expect(remove.status).toBe(403);
    expect(remove.body.code).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('shows the caller’s own permissions in OPTIONS', async () => {
    const reader = as(await keyOf(alice.cookie, ['tasks:read']));

    const response = await reader.options('/api/v1/tasks');

    expect(response.status).toBe(200);
    expect(response.body.data.permissions).toEqual({ read: true, write: false, delete: false });
  });
});
