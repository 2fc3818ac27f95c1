/**
 * GraphQL through HTTP: the schema generated from the registry (Task as SPEC.md gives it, enums
 * as GraphQL enums and foreign keys beside their relations), queries
 * and mutations going through the entity service (scopes, row-level security, validation),
 * errors with extensions.code, GET for queries only, depth and complexity refusals.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { keyOf } from '../entities/support.js';

let acme: TestTenant;
let alice: TestUser;
let bob: TestUser;
let aliceKey: string;
let bobKey: string;
let readOnlyKey: string;

beforeAll(async () => {
  acme = await newTenant();
  [alice, bob] = await Promise.all([newUser(acme.admin.cookie), newUser(acme.admin.cookie)]);
  [aliceKey, bobKey, readOnlyKey] = await Promise.all([keyOf(alice.cookie), keyOf(bob.cookie), keyOf(alice.cookie, ['tasks:read'])]);
});

function gql(apiKey: string | undefined, query: string, variables?: Record<string, unknown>) {
  return api('POST', '/api/v1/graphql', { ...(apiKey ? { apiKey } : {}), body: { query, ...(variables ? { variables } : {}) } });
}

const CREATE = `mutation($input: CreateTaskInput!) { createTask(input: $input) { id title description status priority assignee { id name email } createdAt updatedAt } }`;

describe('POST /api/v1/graphql', () => {
  it('exposes Task as SPEC.md gives it, its enums as GraphQL enums and the stored assigneeId beside assignee', async () => {
    const response = await gql(aliceKey, `{ __type(name: "Task") { fields { name type { kind name ofType { name } } } } }`);
    expect(response.status, response.text).toBe(200);
    const fields = Object.fromEntries(response.body.data.__type.fields.map((f: any) => [f.name, f.type.kind === 'NON_NULL' ? `${f.type.ofType.name}!` : f.type.name]));
    expect(fields).toEqual({
      id: 'ID!',
      title: 'String!',
      description: 'String',
      status: 'TaskStatus!',
      priority: 'TaskPriority!',
      assigneeId: 'ID',
      assignee: 'User',
      createdAt: 'String!',
      updatedAt: 'String!',
    });
  });

  it('creates, reads, updates and deletes a task; the assignee resolves to {id, name, email}', async () => {
    const created = await gql(aliceKey, CREATE, { input: { title: 'From GraphQL', assigneeId: bob.id } });
    expect(created.status, created.text).toBe(200);
    expect(created.body.errors).toBeUndefined();
    const task = created.body.data.createTask;
    expect(task).toMatchObject({ title: 'From GraphQL', status: 'todo', priority: 'medium', description: null, assignee: { id: bob.id, email: bob.email } });

    const rest = await api('GET', `/api/v1/tasks/${task.id}`, { apiKey: aliceKey });
    expect(rest.body.data).toMatchObject({ id: task.id, title: 'From GraphQL', assigneeId: bob.id });

    const updated = await gql(aliceKey, `mutation { updateTask(id: "${task.id}", input: {status: "completed"}) { id status updatedAt } }`);
    expect(updated.body.data.updateTask).toMatchObject({ id: task.id, status: 'completed' });

    const read = await gql(aliceKey, `query($id: ID!) { task(id: $id) { id status } }`, { id: task.id });
    expect(read.body.data.task).toEqual({ id: task.id, status: 'completed' });

    const deleted = await gql(aliceKey, `mutation { deleteTask(id: "${task.id}") }`);
    expect(deleted.body.data).toEqual({ deleteTask: true });
    expect((await api('GET', `/api/v1/tasks/${task.id}`, { apiKey: aliceKey })).status).toBe(404);
  });

  it('lists tasks as a connection with edges, pageInfo and totalCount, the caller’s own only', async () => {
    for (let i = 0; i < 3; i++) await gql(aliceKey, CREATE, { input: { title: `Mine ${i}`, priority: 'high' } });
    await gql(bobKey, CREATE, { input: { title: 'Bob’s' } });

    const response = await gql(aliceKey, `{ tasks(page: 1, limit: 2) { edges { node { id title } } pageInfo { hasNextPage hasPreviousPage } totalCount } }`);

    expect(response.status, response.text).toBe(200);
    const connection = response.body.data.tasks;
    expect(connection.edges).toHaveLength(2);
    expect(connection.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false });
    expect(connection.totalCount).toBeGreaterThanOrEqual(3);
    const all = await gql(aliceKey, `{ tasks(limit: 100) { edges { node { title } } } }`);
    expect(all.body.data.tasks.edges.map((e: any) => e.node.title)).not.toContain('Bob’s');
    const second = await gql(aliceKey, `{ tasks(page: 2, limit: 2) { pageInfo { hasPreviousPage } } }`);
    expect(second.body.data.tasks.pageInfo.hasPreviousPage).toBe(true);
  });

  it('filters tasks with TaskFilter, an enum field by its enum value', async () => {
    await gql(aliceKey, CREATE, { input: { title: 'Filtered low', priority: 'low' } });
    const response = await gql(aliceKey, `{ tasks(limit: 100, filter: {priority: low}) { edges { node { title priority } } totalCount } }`);
    expect(response.status, response.text).toBe(200);
    const nodes = response.body.data.tasks.edges.map((e: any) => e.node);
    expect(nodes.length).toBeGreaterThan(0);
    expect(nodes.every((n: any) => n.priority === 'low')).toBe(true);
    expect(nodes.map((n: any) => n.title)).toContain('Filtered low');
  });

  it('filters on status: todo and on several enum fields at once, as REST does', async () => {
    const done = (await gql(aliceKey, CREATE, { input: { title: 'Enum filter done', priority: 'high' } })).body.data.createTask;
    await gql(aliceKey, `mutation { updateTask(id: "${done.id}", input: {status: "completed"}) { id } }`);
    await gql(aliceKey, CREATE, { input: { title: 'Enum filter open', priority: 'high' } });

    const open = await gql(aliceKey, `{ tasks(limit: 100, filter: {status: todo, priority: high}) { edges { node { title status priority } } totalCount } }`);
    const completed = await gql(aliceKey, `query($f: TaskFilter) { tasks(limit: 100, filter: $f) { edges { node { title status } } } }`, { f: { status: 'completed', priority: 'high' } });
    const rest = await api('GET', '/api/v1/tasks?status=todo&priority=high&limit=100', { apiKey: aliceKey });

    expect(open.status, open.text).toBe(200);
    const openNodes = open.body.data.tasks.edges.map((e: any) => e.node);
    expect(openNodes.every((n: any) => n.status === 'todo' && n.priority === 'high')).toBe(true);
    expect(openNodes.map((n: any) => n.title)).toContain('Enum filter open');
    expect(openNodes.map((n: any) => n.title).sort()).toEqual(rest.body.data.map((t: any) => t.title).sort());
    expect(open.body.data.tasks.totalCount).toBe(openNodes.length);
    expect(completed.status, completed.text).toBe(200);
    expect(completed.body.data.tasks.edges.map((e: any) => e.node)).toEqual([{ title: 'Enum filter done', status: 'completed' }]);
  });

  it('refuses a filter value outside the enum with 400 GRAPHQL_VALIDATION_FAILED', async () => {
    const response = await gql(aliceKey, `{ tasks(filter: {status: done}) { totalCount } }`);

    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatchObject({ message: expect.stringContaining('TaskStatus'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('applies row-level security: another user’s task is null, and cannot be updated or deleted', async () => {
    const bobs = (await gql(bobKey, CREATE, { input: { title: 'Bob only' } })).body.data.createTask;

    const read = await gql(aliceKey, `{ task(id: "${bobs.id}") { id } }`);
    const update = await gql(aliceKey, `mutation { updateTask(id: "${bobs.id}", input: {title: "stolen"}) { id } }`);
    const remove = await gql(aliceKey, `mutation { deleteTask(id: "${bobs.id}") }`);

    expect(read.body.data.task).toBeNull();
    for (const response of [update, remove]) {
      expect(response.status).toBe(200);
      expect(response.body.data).toBeNull();
      expect(response.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    }
    expect((await api('GET', `/api/v1/tasks/${bobs.id}`, { apiKey: bobKey })).body.data.title).toBe('Bob only');
  });

  it('maps validation failures to errors with extensions.code VALIDATION_FAILED and details', async () => {
    const response = await gql(aliceKey, CREATE, { input: { title: 'x'.repeat(201), priority: 'urgent' } });
    expect(response.status).toBe(200);
    expect(response.body.data).toBeNull();
    expect(response.body.errors[0].path).toEqual(['createTask']);
    expect(response.body.errors[0].extensions.code).toBe('VALIDATION_FAILED');
    expect(Object.keys(response.body.errors[0].extensions.details).sort()).toEqual(['priority', 'title']);
  });

  it('checks each operation’s own scope: a tasks:read key reads but cannot create', async () => {
    const read = await gql(readOnlyKey, `{ tasks { totalCount } }`);
    expect(read.body.data.tasks.totalCount).toBeGreaterThan(0);
    const write = await gql(readOnlyKey, CREATE, { input: { title: 'nope' } });
    expect(write.body.errors[0].extensions).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS', status: 403 });
    const publicRead = await gql(readOnlyKey, `{ products { totalCount } }`);
    expect(publicRead.body.data.products.totalCount).toBeGreaterThanOrEqual(0);
    // TaskConnection! is non-null (SPEC.md), so a refused connection nulls the whole data.
    const other = await gql(readOnlyKey, `{ tasks { totalCount } customers { totalCount } }`);
    expect(other.body.data).toBeNull();
    expect(other.body.errors.map((e: any) => [e.path[0], e.extensions.code])).toEqual([['customers', 'INSUFFICIENT_PERMISSIONS']]);
  });

  it('generates generic names for the other entities (products, createProduct, ...)', async () => {
    const created = await gql(aliceKey, `mutation { createProduct(input: {name: "Widget", price: 3.5}) { id name price status } }`);
    expect(created.body.data.createProduct).toMatchObject({ name: 'Widget', price: 3.5, status: 'active' });
    const id = created.body.data.createProduct.id;
    expect((await gql(aliceKey, `{ product(id: "${id}") { name } }`)).body.data.product).toEqual({ name: 'Widget' });
    expect((await gql(aliceKey, `mutation { deleteProduct(id: "${id}") }`)).body.data.deleteProduct).toBe(true);
    const orders = await gql(aliceKey, `mutation { deleteOrder(id: "x") }`);
    expect(orders.status).toBe(400);
    expect(orders.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('shows an order’s stored customerId beside its customer, and its status as the OrderStatus enum', async () => {
    const customer = await gql(aliceKey, `mutation { createCustomer(input: {name: "Ada"}) { id } }`);
    const customerId = customer.body.data.createCustomer.id;

    const order = await gql(aliceKey, `mutation($input: CreateOrderInput!) { createOrder(input: $input) { customerId customer { id name } status } }`, { input: { customerId, status: 'paid' } });
    const type = await gql(aliceKey, `{ __type(name: "OrderStatus") { kind enumValues { name } } }`);

    expect(order.body.data.createOrder).toEqual({ customerId, customer: { id: customerId, name: 'Ada' }, status: 'paid' });
    expect(type.body.data.__type).toEqual({ kind: 'ENUM', enumValues: [{ name: 'pending' }, { name: 'paid' }, { name: 'shipped' }, { name: 'cancelled' }] });
  });

  it('refuses a query nested deeper than 8 levels with 400 QUERY_TOO_DEEP, before validating it', async () => {
    const fits = `{ comments { edges { node { task { assignee { id } } } } } }`;
    expect((await gql(aliceKey, fits)).status).toBe(200);
    const nested = (depth: number) => `{ ${'a { '.repeat(depth - 1)}b${' }'.repeat(depth - 1)} }`;
    const response = await gql(aliceKey, nested(9));
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_DEEP', depth: 9, maxDepth: 8 });
    const viaFragments = `query { ...A } fragment A on Query { a { ...B } } fragment B on X { b { c { d { e { f { g { h { i } } } } } } } }`;
    expect((await gql(aliceKey, viaFragments)).body.errors[0].extensions.code).toBe('QUERY_TOO_DEEP');
  });

  it('refuses a too complex query with 400 QUERY_TOO_COMPLEX, and says why', async () => {
    const aliases = Array.from({ length: 6 }, (_, i) => `t${i}: tasks(limit: 100) { edges { node { id title status assignee { id name } } } }`).join(' ');
    const response = await gql(aliceKey, `{ ${aliases} }`);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', maxComplexity: 2500 });
    expect(response.body.errors[0].message).toMatch(/complexity/);
  });

  it('answers request errors with 400 and GraphQL errors: syntax, unknown field, no query', async () => {
    const syntax = await gql(aliceKey, '{ tasks { ');
    expect(syntax.status).toBe(400);
    expect(syntax.body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    const unknown = await gql(aliceKey, '{ tasks { edges { node { password } } } }');
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const none = await api('POST', '/api/v1/graphql', { apiKey: aliceKey, body: {} });
    expect(none.status).toBe(400);
  });

  it('needs authentication (401 in the error envelope)', async () => {
    const response = await gql(undefined, '{ tasks { totalCount } }');
    expect(response.status).toBe(401);
    expect(response.body.success).toBe(false);
  });
});

describe('GET /api/v1/graphql', () => {
  it('runs queries and refuses mutations with 405', async () => {
    const query = await api('GET', `/api/v1/graphql?query=${encodeURIComponent('{ tasks(limit: 1) { totalCount } }')}`, { apiKey: aliceKey });
    expect(query.status, query.text).toBe(200);
    expect(query.body.data.tasks.totalCount).toBeGreaterThan(0);
    const mutation = await api('GET', `/api/v1/graphql?query=${encodeURIComponent('mutation { deleteTask(id: "x") }')}`, { apiKey: aliceKey });
    expect(mutation.status).toBe(405);
    expect(mutation.body.errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED');
  });
});
