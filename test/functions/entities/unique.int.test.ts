/**
 * `unique: true` through HTTP on DynamoDB Local, on a server that loads the test-only entities of
 * test/support/entities/ (ENTITIES_DIR): members (shared, soft delete, unique email and badge),
 * listings (public: unique across tenants, hard delete), notes (private: unique in the tenant).
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient, tableName } from '../../../shared/data/client.js';
import { definitionLayout } from '../../../shared/data/layout.js';
import { recordKey } from '../../../shared/data/partitions.js';
import { validateDefinition } from '../../../shared/registry/index.js';
import members from '../../support/entities/members.js';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { keyOf } from './support.js';

const ENTITIES_DIR = fileURLToPath(new URL('../../support/entities/', import.meta.url));

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());
const stored = async (pk: string, sk: string) => (await engine.send(new GetCommand({ TableName: tableName('records'), Key: { pk, sk }, ConsistentRead: true }))).Item;

let server: TestServer;
let tenant: TestTenant;
let other: TestTenant;
let key: string;
let otherKey: string;
let userKey: string;

const as = (apiKey: string) => ({
  get: (path: string) => api('GET', path, { apiKey, baseUrl: server.url }),
  post: (path: string, body: unknown) => api('POST', path, { apiKey, baseUrl: server.url, body }),
  patch: (path: string, body: unknown) => api('PATCH', path, { apiKey, baseUrl: server.url, body }),
  del: (path: string, body?: unknown) => api('DELETE', path, { apiKey, baseUrl: server.url, ...(body !== undefined ? { body } : {}) }),
});

/** A value no other test run uses (the engine is shared by every test file). */
const fresh = (label: string) => `${label}-${randomBytes(5).toString('hex')}`;
const email = () => `${fresh('m')}@example.com`;
let nextBadge = Date.now() % 1_000_000_000;
const badge = () => ++nextBadge;

beforeAll(async () => {
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ENTITIES_DIR } });
  [tenant, other] = await Promise.all([newTenant(), newTenant()]);
  const user = await newUser(tenant.admin.cookie);
  [key, otherKey, userKey] = await Promise.all([keyOf(tenant.admin.cookie), keyOf(other.admin.cookie), keyOf(user.cookie)]);
}, 90_000);

afterAll(async () => {
  await server?.stop();
});

describe('unique fields: create and update', () => {
  it('answers 409 UNIQUE_VIOLATION naming the field when a create repeats a value', async () => {
    const me = as(key);
    const value = email();
    const first = await me.post('/api/v1/members', { name: 'First', email: value });
    expect(first.status, first.text).toBe(201);

    const second = await me.post('/api/v1/members', { name: 'Second', email: value });

    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ success: false, code: 'UNIQUE_VIOLATION', details: { email: expect.any(String) } });
    const listed = await me.get(`/api/v1/members?email=${encodeURIComponent(value)}`);
    expect(listed.body.data.map((m: { id: string }) => m.id)).toEqual([first.body.data.id]);
  });

  it('names every field whose value is taken, and accepts records without a value', async () => {
    const me = as(key);
    const values = { email: email(), badge: badge() };
    expect((await me.post('/api/v1/members', { name: 'Holder', ...values })).status).toBe(201);

    const both = await me.post('/api/v1/members', { name: 'Copy', ...values });
    const noValues = await Promise.all([me.post('/api/v1/members', { name: 'No email 1' }), me.post('/api/v1/members', { name: 'No email 2' })]);

    expect(both.status).toBe(409);
    expect(Object.keys(both.body.details).sort()).toEqual(['badge', 'email']);
    expect(noValues.map((r) => r.status)).toEqual([201, 201]);
  });

  it('answers 409 when an update sets a value another record holds, and leaves the record as it was', async () => {
    const me = as(key);
    const taken = email();
    await me.post('/api/v1/members', { name: 'Holder', email: taken });
    const mine = (await me.post('/api/v1/members', { name: 'Mine', email: email() })).body.data;

    const response = await me.patch(`/api/v1/members/${mine.id}`, { email: taken });

    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ code: 'UNIQUE_VIOLATION', details: { email: expect.any(String) } });
    expect((await me.get(`/api/v1/members/${mine.id}`)).body.data.email).toBe(mine.email);
  });

  it('lets an update keep its own value, and releases the old value when the value changes', async () => {
    const me = as(key);
    const [oldValue, newValue] = [email(), email()];
    const member = (await me.post('/api/v1/members', { name: 'Mover', email: oldValue })).body.data;

    const renamed = await me.patch(`/api/v1/members/${member.id}`, { name: 'Renamed', email: oldValue });
    const moved = await me.patch(`/api/v1/members/${member.id}`, { email: newValue });
    const reuse = await me.post('/api/v1/members', { name: 'Reuse', email: oldValue });
    const clash = await me.post('/api/v1/members', { name: 'Clash', email: newValue });

    expect(renamed.status, renamed.text).toBe(200);
    expect(moved.status, moved.text).toBe(200);
    expect(reuse.status, reuse.text).toBe(201);
    expect(clash.status).toBe(409);
  });

  it('releases a value cleared with null', async () => {
    const me = as(key);
    const value = email();
    const member = (await me.post('/api/v1/members', { name: 'Clearer', email: value })).body.data;

    expect((await me.patch(`/api/v1/members/${member.id}`, { email: null })).status).toBe(200);

    expect((await me.post('/api/v1/members', { name: 'Taker', email: value })).status).toBe(201);
  });

  it('lets one of two concurrent creates of a value win, the other 409', async () => {
    const me = as(key);
    const value = email();

    const responses = await Promise.all(Array.from({ length: 4 }, (_, i) => me.post('/api/v1/members', { name: `Racer ${i}`, email: value })));

    expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it('refuses a unique value too long to be held with 422 naming it', async () => {
    // 200 characters, 2,400 bytes once URL-encoded: past DynamoDB's 2,048-byte key.
    const response = await as(key).post('/api/v1/members', { name: 'Long', email: '\u{1F600}'.repeat(200) });

    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { email: expect.any(String) } });
  });
});

describe('unique fields: delete releases the value', () => {
  it('releases the value on soft delete', async () => {
    const me = as(key);
    const value = email();
    const member = (await me.post('/api/v1/members', { name: 'Leaving', email: value })).body.data;

    const deleted = await me.del(`/api/v1/members/${member.id}`);
    const again = await me.post('/api/v1/members', { name: 'Arriving', email: value });

    expect(deleted.status).toBe(200);
    expect(deleted.body.data.deletedAt).toEqual(expect.any(String));
    expect(again.status, again.text).toBe(201);
  });

  it('releases the value on hard delete', async () => {
    const me = as(key);
    const sku = fresh('SKU');
    const listing = (await me.post('/api/v1/listings', { sku })).body.data;

    expect((await me.del(`/api/v1/listings/${listing.id}`)).status).toBe(200);

    expect((await me.post('/api/v1/listings', { sku })).status).toBe(201);
  });
});

describe('unique fields: scope', () => {
  it('keeps a public entity’s values unique across tenants', async () => {
    const sku = fresh('SKU');
    expect((await as(key).post('/api/v1/listings', { sku, title: 'Ours' })).status).toBe(201);

    const theirs = await as(otherKey).post('/api/v1/listings', { sku, title: 'Theirs' });

    expect(theirs.status).toBe(409);
    expect(theirs.body).toMatchObject({ code: 'UNIQUE_VIOLATION', details: { sku: expect.any(String) } });
  });

  it('scopes other entities’ values to the tenant', async () => {
    const value = email();
    expect((await as(key).post('/api/v1/members', { name: 'Here', email: value })).status).toBe(201);

    const elsewhere = await as(otherKey).post('/api/v1/members', { name: 'There', email: value });

    expect(elsewhere.status, elsewhere.text).toBe(201);
  });

  it('makes a private entity’s values unique in the whole tenant, across owners', async () => {
    const ref = fresh('REF');
    expect((await as(key).post('/api/v1/notes', { ref })).status).toBe(201);

    const byUser = await as(userKey).post('/api/v1/notes', { ref });
    const otherTenant = await as(otherKey).post('/api/v1/notes', { ref });

    expect(byUser.status).toBe(409);
    expect(otherTenant.status).toBe(201);
  });
});

describe('unique fields: bulk, import and batch', () => {
  it('fails the bulk update item that takes a held value, and writes the others', async () => {
    const me = as(key);
    const taken = email();
    await me.post('/api/v1/members', { name: 'Holder', email: taken });
    const [a, b] = await Promise.all([me.post('/api/v1/members', { name: 'A' }), me.post('/api/v1/members', { name: 'B' })]);
    const fine = email();

    const response = await me.patch('/api/v1/members', { updates: [{ id: a.body.data.id, email: taken }, { id: b.body.data.id, email: fine }] });

    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toMatchObject({ updated: 1, failed: 1, failures: [{ index: 0, code: 'UNIQUE_VIOLATION', details: { email: expect.any(String) } }] });
    expect((await me.get(`/api/v1/members/${b.body.data.id}`)).body.data.email).toBe(fine);
  });

  it('releases the values of a bulk delete', async () => {
    const me = as(key);
    const values = [email(), email()];
    const ids = await Promise.all(values.map(async (value) => (await me.post('/api/v1/members', { name: 'Bulk', email: value })).body.data.id));

    const response = await me.del('/api/v1/members', { ids });
    const again = await Promise.all(values.map((value) => me.post('/api/v1/members', { name: 'Again', email: value })));

    expect(response.body.data.deleted).toBe(2);
    expect(again.map((r) => r.status)).toEqual([201, 201]);
  });

  it('fails an imported item whose value is held or repeats an earlier item’s, per skipInvalid', async () => {
    const me = as(key);
    const held = email();
    await me.post('/api/v1/members', { name: 'Holder', email: held });
    const repeated = email();
    const items = [
      { name: 'One', email: repeated },
      { name: 'Two', email: repeated },
      { name: 'Three', email: held },
      { name: 'Four', email: email() },
    ];

    const strict = await me.post('/api/v1/import/members', { items });
    const lenient = await me.post('/api/v1/import/members', { items, options: { skipInvalid: true, returnFailures: true } });

    expect(strict.status).toBe(409);
    expect(strict.body).toMatchObject({ code: 'UNIQUE_VIOLATION', details: { 'items[1].email': expect.any(String) } });
    expect(lenient.status, lenient.text).toBe(201);
    expect(lenient.body.data).toMatchObject({ created: 2, failed: 2 });
    expect(lenient.body.data.failures.map((f: { index: number }) => f.index)).toEqual([1, 2]);
    expect(lenient.body.data.items.map((m: { name: string }) => m.name)).toEqual(['One', 'Four']);
    expect((await me.post('/api/v1/members', { name: 'Late', email: repeated })).status).toBe(409);
  });

  it('answers 409 in a batch sub-request, the others running', async () => {
    const value = email();
    const response = await api('POST', '/api/v1/batch', {
      apiKey: key,
      baseUrl: server.url,
      body: {
        requests: [
          { id: 'first', method: 'POST', path: '/members', body: { name: 'First', email: value } },
          { id: 'second', method: 'POST', path: '/members', body: { name: 'Second', email: value } },
          { id: 'third', method: 'POST', path: '/members', body: { name: 'Third', email: email() } },
        ],
      },
    });

    expect(response.status, response.text).toBe(200);
    expect(response.body.responses.map((r: { status: number }) => r.status)).toEqual([201, 409, 201]);
    expect(response.body.responses[1].body).toMatchObject({ code: 'UNIQUE_VIOLATION' });
  });
});

describe('unique fields: storage', () => {
  it('writes the uniqueness item in the agreed layout, and marks what the record holds', async () => {
    const value = `Ada+${fresh('x')}@example.com`;
    const member = (await as(key).post('/api/v1/members', { name: 'Stored', email: value })).body.data;
    const sku = fresh('SKU #1');
    const listing = (await as(key).post('/api/v1/listings', { sku })).body.data;

    const held = await stored(`${tenant.tenantId}#members#unique#email=${encodeURIComponent(value)}`, '#unique');
    const publicItem = await stored(`*#listings#unique#sku=${encodeURIComponent(sku)}`, '#unique');

    expect(held).toEqual({
      pk: `${tenant.tenantId}#members#unique#email=${encodeURIComponent(value)}`,
      sk: '#unique',
      kind: 'unique',
      entity: 'members',
      field: 'email',
      recordId: member.id,
      tenantId: tenant.tenantId,
    });
    expect(publicItem).toMatchObject({ kind: 'unique', entity: 'listings', field: 'sku', recordId: listing.id, tenantId: tenant.tenantId });
    const home = recordKey(definitionLayout(validateDefinition(members, 'test')), member.id, tenant.tenantId);
    expect((await stored(home.pk, home.sk))?.uniques).toEqual(['email']);
    expect(member.uniques).toBeUndefined();
  });
});

describe('unique fields: OPTIONS', () => {
  it('describes a unique field', async () => {
    const response = await api('OPTIONS', '/api/v1/members', { apiKey: key, baseUrl: server.url });

    expect(response.body.data.schema.email).toMatchObject({ type: 'string', unique: true });
    expect(response.body.data.schema.name.unique).toBeUndefined();
  });
});
