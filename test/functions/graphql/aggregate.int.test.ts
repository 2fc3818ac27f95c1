/**
 * GraphQL aggregates through HTTP: `<many>Aggregate` answers what GET /api/v1/{entity}/aggregate
 * answers (the same parser and service), to an admin (the tenant), a plain user of a private
 * entity (their own records), any caller of a public entity (every tenant's records, no scope
 * needed; GraphQL itself needs credentials); a bad argument is a GraphQL error carrying the REST
 * error's code.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser } from '../../support/identity.js';
import { as, created, keyOf } from '../entities/support.js';

function gql(apiKey: string | undefined, query: string, variables?: Record<string, unknown>) {
  return api('POST', '/api/v1/graphql', { ...(apiKey ? { apiKey } : {}), body: { query, ...(variables ? { variables } : {}) } });
}

const BY_STATUS = `query($filter: OrderFilter) {
  ordersAggregate(sum: ["total"], avg: ["total"], max: ["total"], groupBy: ["status"], filter: $filter) {
    groups { key { status } count sum { total } avg { total } max { total } }
    source
  }
}`;

let aliceKey: string;
let adminKey: string;
let outsiderKey: string;
let taskReaderKey: string;

beforeAll(async () => {
  const [acme, globex] = await Promise.all([newTenant(), newTenant()]);
  const alice = await newUser(acme.admin.cookie);
  [aliceKey, adminKey, outsiderKey, taskReaderKey] = await Promise.all([
    keyOf(alice.cookie),
    keyOf(acme.admin.cookie, ['*']),
    keyOf(globex.admin.cookie, ['*']),
    keyOf(alice.cookie, ['tasks:read']),
  ]);
  for (const [key, status, total] of [
    [aliceKey, 'paid', 30],
    [aliceKey, 'paid', 40],
    [aliceKey, 'pending', 12.5],
    [adminKey, 'paid', 100],
    [outsiderKey, 'shipped', 999],
  ] as const) {
    await created(as(key), 'orders', { status, total });
  }
}, 90_000);

describe('POST /api/v1/graphql <many>Aggregate', () => {
  it('answers a plain user of a private entity their own orders, as REST does', async () => {
    const response = await gql(aliceKey, BY_STATUS);
    const rest = await as(aliceKey).get('/api/v1/orders/aggregate?count&sum=total&avg=total&max=total&groupBy=status');

    expect(response.status, response.text).toBe(200);
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.ordersAggregate).toEqual({
      groups: [
        { key: { status: 'paid' }, count: 2, sum: { total: 70 }, avg: { total: 35 }, max: { total: 40 } },
        { key: { status: 'pending' }, count: 1, sum: { total: 12.5 }, avg: { total: 12.5 }, max: { total: 12.5 } },
      ],
      source: 'scan',
    });
    expect(response.body.data.ordersAggregate.groups).toEqual(rest.body.data);
  });

  it('answers an admin the whole tenant, filtered as LIST’s GraphQL filter filters', async () => {
    const all = await gql(adminKey, BY_STATUS);
    const paid = await gql(adminKey, BY_STATUS, { filter: { status: 'paid' } });

    expect(all.body.data.ordersAggregate.groups.map((g: { key: unknown; count: number }) => [g.key, g.count])).toEqual([
      [{ status: 'paid' }, 3],
      [{ status: 'pending' }, 1],
    ]);
    expect(paid.body.data.ordersAggregate.groups).toEqual([{ key: { status: 'paid' }, count: 3, sum: { total: 170 }, avg: { total: 170 / 3 }, max: { total: 100 } }]);
  });

  it('buckets by day over a date range, the key named after the date field', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const response = await gql(adminKey, `{ ordersAggregate(interval: day, startDate: "${today}", endDate: "${today}") { groups { key { createdAt } count } } }`);

    expect(response.body.errors, response.text).toBeUndefined();
    expect(response.body.data.ordersAggregate.groups).toEqual([{ key: { createdAt: today }, count: 4 }]);
  });

  it('answers a public entity’s aggregate across tenants without its scope, as REST answers anonymous callers', async () => {
    const category = `gql-${randomBytes(4).toString('hex')}`;
    await created(as(adminKey), 'products', { name: 'Anvil', price: 10, category });
    await created(as(outsiderKey), 'products', { name: 'Glue', price: 4, category, status: 'inactive' });

    const products = await gql(taskReaderKey, `{ productsAggregate(sum: ["price"], groupBy: ["status"], filter: {category: "${category}"}) { groups { key { status } count sum { price } } } }`);
    const anonymousRest = await as(undefined).get(`/api/v1/products/aggregate?category=${category}&groupBy=status&count&sum=price`);
    const orders = await gql(taskReaderKey, `{ ordersAggregate { groups { count } } }`);

    expect(products.status, products.text).toBe(200);
    expect(products.body.data.productsAggregate.groups).toEqual([
      { key: { status: 'active' }, count: 1, sum: { price: 10 } },
      { key: { status: 'inactive' }, count: 1, sum: { price: 4 } },
    ]);
    expect(products.body.data.productsAggregate.groups).toEqual(anonymousRest.body.data);
    expect(orders.body.errors[0].extensions).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS', status: 403 });
  });

  it('needs credentials, as every GraphQL request does (401 in the error envelope)', async () => {
    const response = await gql(undefined, `{ productsAggregate { groups { count } } }`);

    expect(response.status).toBe(401);
    expect(response.body.code).toBe('AUTHENTICATION_FAILED');
  });

  it('answers a field that cannot be aggregated that way with the REST error’s code and details', async () => {
    const response = await gql(adminKey, `{ ordersAggregate(groupBy: ["total"]) { groups { count } } }`);
    const rest = await as(adminKey).get('/api/v1/orders/aggregate?groupBy=total');

    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toBeNull();
    expect(response.body.errors[0]).toMatchObject({ path: ['ordersAggregate'], extensions: { code: 'INVALID_REQUEST', status: 400, details: rest.body.details } });
  });

  it('refuses an unknown interval before running anything (GraphQL validation)', async () => {
    const response = await gql(adminKey, `{ ordersAggregate(interval: hour) { source } }`);

    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});
