/**
 * Relations through HTTP: include on READ (and LIST) with includeFields, and the child
 * collections /api/v1/{entity}/{id}/{child} (comments of a task: hasMany; tags of a task:
 * manyToMany per CONTRACT.md; orders of a customer).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { as, created, keyOf, PROTECTED, type Caller } from './support.js';

let tenant: TestTenant;
let owner: TestUser;
let other: TestUser;
let asOwner: Caller;
let asOther: Caller;
let asAdmin: Caller;

beforeAll(async () => {
  tenant = await newTenant();
  [owner, other] = await Promise.all([newUser(tenant.admin.cookie), newUser(tenant.admin.cookie)]);
  [asOwner, asOther, asAdmin] = (await Promise.all([keyOf(owner.cookie), keyOf(other.cookie), keyOf(tenant.admin.cookie, ['*'])])).map(as);
});

describe('include on READ', () => {
  let task: Record<string, any>;
  let tags: Record<string, any>[];
  let comments: Record<string, any>[];

  beforeAll(async () => {
    tags = [await created(asOwner, 'tags', { name: 'red', color: '#ff0000' }), await created(asOwner, 'tags', { name: 'blue', color: '#0000ff' })];
    task = await created(asOwner, 'tasks', { title: 'Related', assigneeId: other.id, tagIds: tags.map((t) => t.id) });
    comments = [await created(asOwner, 'comments', { taskId: task.id, body: 'first' }), await created(asOwner, 'comments', { taskId: task.id, body: 'second' })];
  });

  it('embeds the assignee as {id, name, email}, the comments and the tags', async () => {
    const response = await asOwner.get(`/api/v1/tasks/${task.id}?include=assignee,comments,tags`);

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      ...task,
      assignee: { id: other.id, name: 'Test user', email: other.email },
      comments: [comments[1], comments[0]],
      tags,
    });
    expect(response.text).not.toMatch(PROTECTED);
  });

  it('keeps only the fields named in includeFields[<relation>] (and the id)', async () => {
    const response = await asOwner.get(`/api/v1/tasks/${task.id}?include=assignee,tags,comments&includeFields[assignee]=name&includeFields[tags]=name&includeFields[comments]=body`);

    expect(response.body.data.assignee).toEqual({ id: other.id, name: 'Test user' });
    expect(response.body.data.tags).toEqual([{ id: tags[0].id, name: 'red' }, { id: tags[1].id, name: 'blue' }]);
    expect(response.body.data.comments).toEqual([{ id: comments[1].id, body: 'second' }, { id: comments[0].id, body: 'first' }]);
  });

  it('gives null for a missing belongsTo and [] for empty lists', async () => {
    const bare = await created(asOwner, 'tasks', { title: 'Bare' });

    const response = await asOwner.get(`/api/v1/tasks/${bare.id}?include=assignee,comments,tags`);

    expect(response.body.data).toMatchObject({ assignee: null, comments: [], tags: [] });
  });

  it('leaves out related records that are gone', async () => {
    const doomed = await created(asOwner, 'tags', { name: 'doomed' });
    const tagged = await created(asOwner, 'tasks', { title: 'Tagged', tagIds: [doomed.id, tags[0].id] });
    await asOwner.del(`/api/v1/tags/${doomed.id}`);

    const response = await asOwner.get(`/api/v1/tasks/${tagged.id}?include=tags`);

    expect(response.body.data.tags.map((t: { id: string }) => t.id)).toEqual([tags[0].id]);
  });

  it('works on LIST too', async () => {
    const response = await asOwner.get('/api/v1/comments?include=task&includeFields[task]=title');

    expect(response.status).toBe(200);
    expect(response.body.data[0].task).toEqual({ id: task.id, title: 'Related' });
  });

  it('answers 400 INVALID_REQUEST naming an unknown relation', async () => {
    const response = await asOwner.get(`/api/v1/tasks/${task.id}?include=owner`);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_REQUEST', details: { include: expect.stringContaining('owner') } });
  });
});

describe('GET and POST /api/v1/tasks/{id}/comments', () => {
  it('creates a comment of the task (taskId from the path, author the caller) and lists them newest first', async () => {
    const task = await created(asOwner, 'tasks', { title: 'Discussed' });

    const first = await asOwner.post(`/api/v1/tasks/${task.id}/comments`, { body: 'one', taskId: 'tsk_ignored' });
    const second = await asOwner.post(`/api/v1/tasks/${task.id}/comments`, { body: 'two' });
    const list = await asOwner.get(`/api/v1/tasks/${task.id}/comments`);

    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ taskId: task.id, body: 'one', authorId: owner.id });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([second.body.data, first.body.data]);
    expect(list.body.pagination).toMatchObject({ page: 1, total: 2, hasNext: false, hasPrev: false });
    expect((await asOwner.get(`/api/v1/comments/${first.body.data.id}`)).body.data).toEqual(first.body.data);
  });

  it('pages the children like LIST', async () => {
    const task = await created(asOwner, 'tasks', { title: 'Busy' });
    for (const body of ['a', 'b', 'c']) await asOwner.post(`/api/v1/tasks/${task.id}/comments`, { body });

    const page = await asOwner.get(`/api/v1/tasks/${task.id}/comments?limit=2&page=2`);

    expect(page.body.data.map((c: { body: string }) => c.body)).toEqual(['a']);
    expect(page.body.pagination).toMatchObject({ page: 2, limit: 2, total: 3, totalPages: 2, hasNext: false, hasPrev: true });
  });

  it('answers 404 when the parent is not visible to the caller, for GET and POST', async () => {
    const task = await created(asOwner, 'tasks', { title: 'Private' });

    const list = await asOther.get(`/api/v1/tasks/${task.id}/comments`);
    const post = await asOther.post(`/api/v1/tasks/${task.id}/comments`, { body: 'hi' });
    const missing = await asOwner.get('/api/v1/tasks/tsk_missing/comments');

    expect(list.status).toBe(404);
    expect(post.status).toBe(404);
    expect(missing.status).toBe(404);
  });

  it('validates the child like CREATE', async () => {
    const task = await created(asOwner, 'tasks', { title: 'Strict' });

    const response = await asOwner.post(`/api/v1/tasks/${task.id}/comments`, { body: '', extra: 1 });

    expect(response.status).toBe(422);
    expect(response.body.details).toEqual({ body: 'must not be empty', extra: 'is not a field of comments' });
  });

  it('shows the tenant’s admin every comment of a task', async () => {
    const task = await created(asOwner, 'tasks', { title: 'Reviewed' });
    const mine = (await asOwner.post(`/api/v1/tasks/${task.id}/comments`, { body: 'mine' })).body.data;
    const admins = (await asAdmin.post(`/api/v1/tasks/${task.id}/comments`, { body: 'admin' })).body.data;

    const asSeenByAdmin = await asAdmin.get(`/api/v1/tasks/${task.id}/comments`);
    const asSeenByOwner = await asOwner.get(`/api/v1/tasks/${task.id}/comments`);

    expect(asSeenByAdmin.body.data.map((c: { id: string }) => c.id)).toEqual([admins.id, mine.id]);
    // comments are private (shared false): the owner sees their own.
    expect(asSeenByOwner.body.data.map((c: { id: string }) => c.id)).toEqual([mine.id]);
  });

  it('answers 404 for a child collection the entity does not have', async () => {
    const task = await created(asOwner, 'tasks', { title: 'Childless' });

    const response = await asOwner.get(`/api/v1/tasks/${task.id}/orders`);

    expect(response.status).toBe(404);
    expect(response.body.code).toBe('NOT_FOUND');
  });
});

describe('GET and POST /api/v1/tasks/{id}/tags', () => {
  it('creates a tag already linked to the task, and lists the task’s tags', async () => {
    const existing = await created(asOwner, 'tags', { name: 'existing' });
    const task = await created(asOwner, 'tasks', { title: 'Labelled', tagIds: [existing.id] });

    const post = await asOwner.post(`/api/v1/tasks/${task.id}/tags`, { name: 'fresh', color: '#abcdef' });
    const list = await asOwner.get(`/api/v1/tasks/${task.id}/tags`);
    const reread = await asOwner.get(`/api/v1/tasks/${task.id}`);

    expect(post.status).toBe(201);
    expect(post.body.data).toMatchObject({ id: expect.stringMatching(/^tag_/), name: 'fresh', color: '#abcdef' });
    expect(list.body.data).toEqual([existing, post.body.data]);
    expect(list.body.pagination).toMatchObject({ total: 2, hasNext: false, hasPrev: false });
    expect(reread.body.data.tagIds).toEqual([existing.id, post.body.data.id]);
    expect(Date.parse(reread.body.data.updatedAt)).toBeGreaterThan(Date.parse(task.updatedAt));
    expect((await asOther.get(`/api/v1/tags/${post.body.data.id}`)).status).toBe(200);
  });

  it('answers 404 when the task is not the caller’s, and creates nothing', async () => {
    const task = await created(asOwner, 'tasks', { title: 'Not yours' });
    const before = (await asOther.get('/api/v1/tags?limit=100')).body.pagination.total;

    const post = await asOther.post(`/api/v1/tasks/${task.id}/tags`, { name: 'intruder' });
    const list = await asOther.get(`/api/v1/tasks/${task.id}/tags`);

    expect(post.status).toBe(404);
    expect(list.status).toBe(404);
    expect((await asOther.get('/api/v1/tags?limit=100')).body.pagination.total).toBe(before);
  });

  it('validates the new tag', async () => {
    const task = await created(asOwner, 'tasks', { title: 'Checked' });

    const response = await asOwner.post(`/api/v1/tasks/${task.id}/tags`, { color: 'blue' });

    expect(response.status).toBe(422);
    expect(response.body.details).toEqual({ name: 'is required', color: 'must match the pattern ^#[0-9a-fA-F]{6}$' });
    expect((await asOwner.get(`/api/v1/tasks/${task.id}`)).body.data.tagIds).toEqual([]);
  });
});

describe('GET /api/v1/customers/{id}/orders', () => {
  it('lists the orders whose customerId is the customer', async () => {
    const customer = await created(asOwner, 'customers', { name: 'Buyer' });
    const order = await created(asOwner, 'orders', { customerId: customer.id, total: 5 });
    await created(asOwner, 'orders', { customerId: 'cus_someone_else', total: 7 });

    const response = await asOwner.get(`/api/v1/customers/${customer.id}/orders`);

    expect(response.body.data).toEqual([order]);
    expect((await asOwner.get(`/api/v1/orders/${order.id}?include=customer&includeFields[customer]=name`)).body.data.customer).toEqual({ id: customer.id, name: 'Buyer' });
  });
});
