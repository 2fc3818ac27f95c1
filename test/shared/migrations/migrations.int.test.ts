/**
 * Changing an entity's definition while records exist: the local API restarted with changed
 * definitions on one engine (index on → off with writes meanwhile → on; a new field with a
 * default; a removed field; unique over existing duplicates; a tightened rule). Each time LIST
 * (equality, filter, sort, search, cursor walks), totals and READ agree with a model of the data,
 * at once after the restart and after the migration finished.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import type { TestServer } from '../../support/server.js';
import { loginAsOperator } from '../../support/identity.js';
import { definitionsDir, migrated, migrationOf, sorted, startWith, walk, type DefinitionsDir, type ModelRecord } from './support.js';

const slug = `inv${randomBytes(4).toString('hex')}`;
const CURRENCIES = ['USD', 'EUR', 'GBP'];
const STATUSES = ['draft', 'sent', 'paid'];

type Fields = Record<string, Record<string, unknown>>;

const baseFields: Fields = {
  number: { type: 'string', required: true, maxLength: 40, searchable: true },
  currency: { type: 'enum', values: CURRENCIES },
  status: { type: 'enum', values: STATUSES, default: 'draft', indexed: true },
  amount: { type: 'number', validation: { min: 0 } },
  notes: { type: 'string', maxLength: 200 },
};

function definition(fields: Fields): Record<string, unknown> {
  return { name: 'invoice', slug, tableName: slug, idFormat: { type: 'prefixed', prefix: 'inv' }, fields, access: { public: false, shared: false } };
}

/**
 * A migration slow enough that the checks right after a restart begin while it is under way: a
 * pass scans the file's own records table (support.ts OWN_TABLES), and a pause per page keeps it
 * going that long.
 */
const SLOW = { MIGRATION_PAUSE_MS: '100', MIGRATION_PAGE_SIZE: '500' };

let defs: DefinitionsDir;
let server: TestServer | undefined;
let tenant: TestTenant;
let user: TestUser;
const model = new Map<string, ModelRecord>();
/** Field defaults the model reads records with (a field added with a default). */
let modelDefaults: Record<string, unknown> = {};
let modelFields = Object.keys(baseFields);

async function restart(fields: Fields, env: Record<string, string> = {}): Promise<void> {
  await server?.stop();
  defs.write(definition(fields));
  server = await startWith(inject('dynamoEndpoint'), defs.dir, env);
}

const url = () => server!.url;
const call = (method: string, path: string, cookie: string, body?: unknown) => api(method, path, { cookie, body, baseUrl: url() });

function pick<T>(values: readonly T[]): T {
  return values[Math.floor(Math.random() * values.length)];
}

async function create(as: TestUser, data: Record<string, unknown>): Promise<string> {
  const response = await call('POST', `/api/v1/${slug}`, as.cookie, data);
  expect(response.status, response.text).toBe(201);
  model.set(response.body.data.id, { id: response.body.data.id, owner: as.id, data: { status: 'draft', ...data } });
  return response.body.data.id;
}

async function update(id: string, patch: Record<string, unknown>): Promise<void> {
  const response = await call('PATCH', `/api/v1/${slug}/${id}`, tenant.admin.cookie, patch);
  expect(response.status, response.text).toBe(200);
  const record = model.get(id)!;
  record.data = { ...record.data, ...patch };
}

async function remove(id: string): Promise<void> {
  const response = await call('DELETE', `/api/v1/${slug}/${id}`, tenant.admin.cookie);
  expect(response.status, response.text).toBe(200);
  model.delete(id);
}

/** The model's view of a record: defaults for fields it never had, only the current fields. */
function view(record: ModelRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of modelFields) {
    const v = record.data[f] !== undefined ? record.data[f] : modelDefaults[f];
    if (v !== undefined) out[f] = v;
  }
  return out;
}

function expected(as: 'admin' | 'user', match: (r: Record<string, unknown>) => boolean = () => true): string[] {
  return sorted([...model.values()].filter((r) => (as === 'admin' || r.owner === user.id) && match(view(r))).map((r) => r.id));
}

/** Every record of a GraphQL list (the entity's connection) with `filter`, page by page, with the totalCount each page stated. */
async function graphqlWalk(cookie: string, filter: Record<string, unknown>, fields: string[]): Promise<{ ids: string[]; records: Record<string, unknown>[]; totals: number[] }> {
  const records: Record<string, unknown>[] = [];
  const totals: number[] = [];
  const query = `query($page: Int, $filter: ${typeName}Filter) { ${slug}(page: $page, limit: 20, filter: $filter) { edges { node { id ${fields.join(' ')} } } pageInfo { hasNextPage } totalCount } }`;
  for (let page = 1; page < 100; page++) {
    const response = await call('POST', '/api/v1/graphql', cookie, { query, variables: { page, filter } });
    expect(response.status, response.text).toBe(200);
    expect(response.body.errors, response.text).toBeUndefined();
    const connection = response.body.data[slug];
    records.push(...connection.edges.map((e: { node: Record<string, unknown> }) => e.node));
    totals.push(connection.totalCount);
    if (!connection.pageInfo.hasNextPage) break;
  }
  return { ids: records.map((r) => String(r.id)), records, totals };
}

const typeName = 'Invoice';

/** GraphQL agrees with REST: a list filtered on each value of each field, its totals, and the values it shows. */
async function checkGraphql(fields: string[]): Promise<void> {
  for (const [as, cookie] of [['admin', tenant.admin.cookie], ['user', user.cookie]] as const) {
    for (const field of fields) {
      const values = field === 'currency' ? CURRENCIES : field === 'status' ? STATUSES : [true, false];
      for (const value of values) {
        const want = expected(as, (r) => r[field] === value);
        const found = await graphqlWalk(cookie, { [field]: value }, [field]);
        expect(sorted(found.ids), `${as}: GraphQL filter ${field}: ${value}`).toEqual(want);
        expect(new Set(found.totals), `${as}: GraphQL totalCount of ${field}: ${value}`).toEqual(new Set([want.length]));
        expect(new Set(found.records.map((r) => r[field])), `${as}: GraphQL ${field} shown`).toEqual(new Set(want.length ? [value] : []));
      }
    }
  }
}

/** LIST (equality, filter, sort, search, cursor walks), totals and READ against the model; GraphQL lists too. */
async function checkViews(fields: string[] = ['currency', 'status']): Promise<void> {
  await checkGraphql(fields);
  for (const [as, cookie] of [['admin', tenant.admin.cookie], ['user', user.cookie]] as const) {
    const all = await walk(url(), `/api/v1/${slug}`, cookie);
    expect(sorted(all.ids), `${as}: every record once`).toEqual(expected(as));
    expect(new Set(all.totals), `${as}: totals`).toEqual(new Set([expected(as).length]));
    for (const field of fields) {
      const values = field === 'currency' ? CURRENCIES : field === 'status' ? STATUSES : [true, false];
      for (const value of values) {
        const want = expected(as, (r) => r[field] === value);
        const byParam = await walk(url(), `/api/v1/${slug}?${field}=${value}`, cookie);
        expect(sorted(byParam.ids), `${as}: ?${field}=${value}`).toEqual(want);
        expect(new Set(byParam.totals), `${as}: total of ?${field}=${value}`).toEqual(new Set([want.length]));
        const filter = encodeURIComponent(JSON.stringify({ [field]: { $eq: value } }));
        const byFilter = await walk(url(), `/api/v1/${slug}?filter=${filter}`, cookie, 5);
        expect(sorted(byFilter.ids), `${as}: filter ${field} $eq ${value}`).toEqual(want);
        expect(new Set(byFilter.totals)).toEqual(new Set([want.length]));
      }
    }
    const bySort = await walk(url(), `/api/v1/${slug}?sort=amount`, cookie, 6);
    const amounts = bySort.records.map((r) => Number(r.amount));
    expect(amounts, `${as}: sort=amount`).toEqual([...amounts].sort((a, b) => a - b));
    expect(sorted(bySort.ids)).toEqual(expected(as));
    const searched = await walk(url(), `/api/v1/${slug}?search=n-1`, cookie);
    expect(sorted(searched.ids), `${as}: search`).toEqual(expected(as, (r) => String(r.number).includes('n-1')));
  }
  // READ of a sample agrees with the model.
  for (const record of [...model.values()].slice(0, 8)) {
    const read = await call('GET', `/api/v1/${slug}/${record.id}`, tenant.admin.cookie);
    expect(read.status).toBe(200);
    const { id: _id, createdAt: _c, updatedAt: _u, ...shown } = read.body.data;
    expect(shown, `READ ${record.id}`).toEqual(view(record));
  }
}

beforeAll(async () => {
  defs = definitionsDir();
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
  await restart(baseFields);
  for (let i = 0; i < 36; i++) {
    await create(i % 3 === 0 ? tenant.admin : user, { number: `n-${i}`, currency: pick(CURRENCIES), status: pick(STATUSES), amount: (i * 37) % 101, notes: `note ${i}` });
  }
}, 180_000);

afterAll(async () => {
  await server?.stop();
  defs?.remove();
});

describe('changing an entity while records exist', () => {
  it('indexes a field of existing records: right at once, while the index is built, and after', async () => {
    await restart({ ...baseFields, currency: { ...baseFields.currency, indexed: true } }, SLOW);
    await checkViews();
    // Writes while the index is built: an unrelated update, a move USD→EUR, a delete, a create.
    const ids = [...model.keys()];
    await update(ids[0], { amount: 5 });
    const usd = [...model.values()].find((r) => r.data.currency === 'USD')!;
    await update(usd.id, { currency: 'EUR' });
    await remove(ids[1]);
    await create(user, { number: 'n-new-1', currency: 'USD', status: 'sent', amount: 11 });

    const status = await migrated(url(), slug);

    expect(status.state).toBe('done');
    expect(status.changes).toContain('index added: currency');
    expect(status.indexes.find((i) => i.field === 'currency')).toMatchObject({ ready: true });
    expect(status.processed).toBeGreaterThanOrEqual(35);
    await checkViews();
  }, 300_000);

  it('drops an index, keeps answering right while records change, then rebuilds it from the records', async () => {
    const withCurrency = { ...baseFields, currency: { ...baseFields.currency, indexed: true } };
    await restart({ ...withCurrency, status: { ...baseFields.status, indexed: false } });
    await checkViews();
    const paid = [...model.values()].filter((r) => r.data.status === 'paid');
    const unpaid = [...model.values()].find((r) => r.data.status !== 'paid')!;
    await remove(paid[0].id);
    await update(paid[1].id, { status: 'sent' });
    await create(tenant.admin, { number: 'n-new-2', currency: 'GBP', status: 'paid', amount: 3 });
    await update(unpaid.id, { status: 'paid' });
    expect((await migrated(url(), slug)).state).toBe('done');
    await checkViews();

    await restart(withCurrency, SLOW);
    await checkViews();
    const status = await migrated(url(), slug);

    expect(status.changes).toContain('index added: status');
    const token = status.indexes.find((i) => i.field === 'status')!.token;
    expect(token).toMatch(/^status@\d+$/);
    await checkViews();
  }, 300_000);

  it('reads, filters, sorts and counts records stored before a field with a default existed', async () => {
    const fields = { ...baseFields, currency: { ...baseFields.currency, indexed: true }, archived: { type: 'boolean', default: false, indexed: true } };
    await restart(fields, SLOW);
    modelDefaults = { archived: false };
    modelFields = [...modelFields, 'archived'];
    await checkViews(['archived']);
    const some = [...model.keys()][3];
    await update(some, { archived: true });
    await checkViews(['archived']);

    expect((await migrated(url(), slug)).state).toBe('done');
    await checkViews(['archived', 'status']);
    // The default written is a revision of its own, by the system, and a new version.
    const untouched = [...model.keys()][5];
    const revisions = await call('GET', `/api/v1/${slug}/${untouched}/revisions`, tenant.admin.cookie);
    expect(revisions.status, revisions.text).toBe(200);
    expect(revisions.body.data[0]).toMatchObject({ operation: 'migration', actor: { type: 'system', id: 'migration' }, changes: { archived: { from: null, to: false } } });
    expect(revisions.body.data[0].revision).toBe(revisions.body.data[1].revision + 1);
  }, 300_000);

  it('purges a removed field: it is not shown, and does not come back when the field is added again', async () => {
    const fields: Fields = { ...baseFields, currency: { ...baseFields.currency, indexed: true }, archived: { type: 'boolean', default: false, indexed: true } };
    const { notes: _notes, ...withoutNotes } = fields;
    await restart(withoutNotes);
    modelFields = modelFields.filter((f) => f !== 'notes');
    const id = [...model.keys()][4];
    const read = await call('GET', `/api/v1/${slug}/${id}`, tenant.admin.cookie);
    expect(read.body.data).not.toHaveProperty('notes');
    expect((await migrated(url(), slug)).state).toBe('done');
    await checkViews(['archived']);

    await restart(fields);
    modelFields = [...modelFields, 'notes'];
    for (const record of model.values()) delete record.data.notes;
    expect((await migrated(url(), slug)).state).toBe('done');
    const again = await call('GET', `/api/v1/${slug}/${id}`, tenant.admin.cookie);
    expect(again.body.data).not.toHaveProperty('notes');
    await checkViews(['archived']);
  }, 300_000);

  it('reports duplicates of a value made unique and records a tightened rule refuses; an update must make such a record valid', async () => {
    const records = [...model.values()];
    await update(records[5].id, { number: records[6].data.number });
    await update(records[7].id, { number: 'a-number-that-is-far-too-long' });
    const fields: Fields = {
      ...baseFields,
      number: { ...baseFields.number, maxLength: 20, unique: true },
      currency: { ...baseFields.currency, indexed: true },
      archived: { type: 'boolean', default: false, indexed: true },
    };
    await restart(fields);

    const status = await migrated(url(), slug);

    expect(status.state).toBe('done');
    const duplicates = status.report.entries.filter((e) => e.kind === 'duplicate');
    // The older record (created first) keeps the value's uniqueness item; the younger one is listed.
    expect(duplicates).toEqual([expect.objectContaining({ field: 'number', detail: String(records[6].data.number), recordId: records[6].id, keptId: records[5].id })]);
    expect(status.report.entries.filter((e) => e.kind === 'violation')).toEqual([expect.objectContaining({ recordId: records[7].id, field: 'number' })]);
    // Still readable; an update that leaves it invalid is refused naming the field; one that mends it passes.
    expect((await call('GET', `/api/v1/${slug}/${records[7].id}`, tenant.admin.cookie)).status).toBe(200);
    const refused = await call('PATCH', `/api/v1/${slug}/${records[7].id}`, tenant.admin.cookie, { amount: 1 });
    expect(refused.status).toBe(422);
    expect(refused.body.details).toHaveProperty('number');
    await update(records[7].id, { number: 'short' });
    await checkViews(['archived']);
  }, 300_000);

  const latest: Fields = {
    ...baseFields,
    number: { ...baseFields.number, maxLength: 20, unique: true },
    currency: { ...baseFields.currency, indexed: true },
    archived: { type: 'boolean', default: false, indexed: true },
  };

  it('resumes a migration cut off by kill -9 where it stopped, and ends correct', async () => {
    for (let i = 0; i < 90; i++) await create(i % 2 ? user : tenant.admin, { number: `k-${i}`, currency: pick(CURRENCIES), status: pick(STATUSES), amount: i });
    const fields: Fields = { ...latest, number: { ...latest.number, indexed: true } };
    await restart(fields, { MIGRATION_PAUSE_MS: '400', MIGRATION_PAGE_SIZE: '5' });
    const operator = await loginAsOperator();
    let before = await migrationOf(url(), slug, operator);
    // Cut off once it has migrated some records, or after a few seconds of scanning at most.
    const cutOffBy = Date.now() + 5_000;
    while (before.state !== 'done' && (before.state !== 'running' || (before.processed < 10 && Date.now() < cutOffBy))) {
      await new Promise((r) => setTimeout(r, 100));
      before = await migrationOf(url(), slug, operator);
    }
    expect(before.state).toBe('running');
    await server!.kill();
    server = await startWith(inject('dynamoEndpoint'), defs.dir);

    const status = await migrated(url(), slug);

    expect(status.state).toBe('done');
    // The same run, continued: not started over with a new one.
    expect(status.run).toBe(before.run);
    expect(status.processed).toBeGreaterThanOrEqual(model.size);
    await checkViews(['archived']);
    for (const record of [...model.values()].slice(-5)) {
      const found = await walk(url(), `/api/v1/${slug}?number=${encodeURIComponent(String(record.data.number))}`, tenant.admin.cookie);
      expect(found.ids).toEqual(expected('admin', (r) => r.number === record.data.number));
      expect(found.totals[0]).toBe(found.ids.length);
    }
  }, 300_000);

  it('keeps every acknowledged write made during a migration visible in every view afterwards', async () => {
    const fields: Fields = { ...latest, number: { ...latest.number, indexed: true }, amount: { ...baseFields.amount, indexed: true } };
    await restart(fields, SLOW);
    const ids = [...model.keys()];
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 12; i++) {
      writes.push(create(i % 2 ? user : tenant.admin, { number: `c-${i}`, currency: pick(CURRENCIES), status: pick(STATUSES), amount: 1000 + i }).then(() => undefined));
      writes.push(update(ids[i * 3], { amount: 2000 + i, status: pick(STATUSES), currency: pick(CURRENCIES) }));
      if (i % 3 === 0) writes.push(remove(ids[i * 3 + 1]));
    }
    await Promise.all(writes);
    await checkViews();

    const status = await migrated(url(), slug);

    expect(status.state).toBe('done');
    await checkViews(['currency', 'status', 'archived']);
    for (const record of [...model.values()].slice(0, 10)) {
      const found = await walk(url(), `/api/v1/${slug}?amount=${record.data.amount}`, tenant.admin.cookie);
      expect(sorted(found.ids)).toEqual(expected('admin', (r) => r.amount === record.data.amount));
      expect(found.totals[0]).toBe(found.ids.length);
    }
  }, 300_000);
});
