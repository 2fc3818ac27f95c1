/**
 * Changing the write shards of private and shared entities with records, whose record items stand
 * in their tenant's listing under a key named by their shard: the local API on one engine, records
 * of two tenants and several owners.
 * - Pinned: a private entity (soft delete) and a shared one (hard delete) restarted from 1 to 4
 *   shards; creates, updates, deletes, soft deletes and restores race the pass.
 * - Auto: a burst of one tenant's creates splits a quiet private entity (two servers run the
 *   controller, tuned for test speed as in auto-shards.int.test.ts), and the quiet that follows
 *   merges it back; reads go through both servers, one of which may not have read the change yet.
 * Before, during and after: every LIST view (admin, owner, an indexed value) walked by cursor, its
 * totals, and READ by id (owner, admin; another tenant gets 404; a soft-deleted record 404) agree
 * with a model of the data, nothing listed twice; nothing is left under the earlier shards; the
 * tenant's stream sends each create made during the pinned change once.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient, tableName } from '../../../shared/data/client.js';
import { changes, openSse } from '../../functions/stream/sse-client.js';
import { api } from '../../support/http.js';
import { loginAsOperator, newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import type { TestServer } from '../../support/server.js';
import { definitionsDir, FAST_CONTROLLER, migrated, migrationOf, OWN_TABLES, startWith, walk, type DefinitionsDir, type EntityStatus } from './support.js';

const hex = () => randomBytes(4).toString('hex');
const privateSlug = `prv${hex()}`;
const sharedSlug = `shr${hex()}`;
const autoSlug = `apr${hex()}`;
const KINDS = ['alpha', 'beta', 'gamma'] as const;

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
// The items under each shard are counted in the table the servers of this file write.
process.env.TABLE_RECORDS = OWN_TABLES.TABLE_RECORDS;
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());

const CONTROLLER = { ...FAST_CONTROLLER, MIGRATION_PAGE_SIZE: '100' };

function definition(name: string, slug: string, access: { public: boolean; shared: boolean }, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    name,
    slug,
    tableName: slug,
    idFormat: slug === sharedSlug ? { type: 'uuid' } : { type: 'prefixed', prefix: slug.slice(0, 3) },
    fields: { title: { type: 'string', required: true }, kind: { type: 'enum', values: [...KINDS], indexed: true }, board: { type: 'string', indexed: true } },
    access,
    ...extra,
  };
}

function writeDefinitions(pinned: number): void {
  defs.write(definition('note', privateSlug, { public: false, shared: false }, { softDelete: true, writeShards: pinned }));
  writeFileSync(join(defs.dir, 'zz-shared-entity.ts'), `export default ${JSON.stringify(definition('memo', sharedSlug, { public: false, shared: true }, { writeShards: pinned }))};\n`);
  writeFileSync(join(defs.dir, 'zz-auto-entity.ts'), `export default ${JSON.stringify(definition('jot', autoSlug, { public: false, shared: false }, {}))};\n`);
}

interface ModelRecord {
  tenant: 'acme' | 'globex';
  owner: string;
  kind: string;
  board: string;
  createdAt: string;
  deleted: boolean;
  updated: boolean;
}

let defs: DefinitionsDir;
let dataDir: string;
const servers: TestServer[] = [];
let acme: TestTenant;
let globex: TestTenant;
let users: Record<'acme' | 'globex', TestUser[]>;
let operator: string;
const models: Record<string, Map<string, ModelRecord>> = { [privateSlug]: new Map(), [sharedSlug]: new Map(), [autoSlug]: new Map() };

const url = (server = 0) => servers[server].url;
const tenantOf = (name: 'acme' | 'globex') => (name === 'acme' ? acme : globex);
const call = (method: string, path: string, user: TestUser, body?: unknown, server = 0) => api(method, path, { cookie: user.cookie, body, baseUrl: url(server) });

async function startServers(count: number, pinned: number): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  writeDefinitions(pinned);
  // The first owns DATA_DIR's webhooks, so its stream consumer counts the load; every one runs the controller.
  for (let i = 0; i < count; i++) servers.push(await startWith(inject('dynamoEndpoint'), defs.dir, { ...CONTROLLER, DATA_DIR: dataDir }));
}

async function create(slug: string, tenant: 'acme' | 'globex', user: TestUser, n: number, server = 0): Promise<string> {
  const data = { title: `Item ${n}`, kind: KINDS[n % 3], board: `b${n % 4}` };
  const response = await call('POST', `/api/v1/${slug}`, user, data, server);
  expect(response.status, response.text).toBe(201);
  models[slug].set(response.body.data.id, { tenant, owner: user.id, kind: data.kind, board: data.board, createdAt: response.body.data.createdAt, deleted: false, updated: false });
  return response.body.data.id;
}

function ordered(slug: string, keep: (r: ModelRecord) => boolean): string[] {
  const model = models[slug];
  return [...model]
    .filter(([, r]) => !r.deleted && keep(r))
    .map(([id]) => id)
    .sort((a, b) => {
      const x = model.get(a)!;
      const y = model.get(b)!;
      return x.createdAt > y.createdAt ? -1 : x.createdAt < y.createdAt ? 1 : a < b ? -1 : 1;
    });
}

/** Every view of `slug` against its model, for each tenant: admin and owner LISTs walked by cursor, an indexed value, totals, READ by id. */
async function expectViews(slug: string, label: string, server = 0): Promise<void> {
  const shared = slug === sharedSlug;
  for (const name of ['acme', 'globex'] as const) {
    const tenant = tenantOf(name);
    const other = tenantOf(name === 'acme' ? 'globex' : 'acme');
    const mine = (r: ModelRecord) => r.tenant === name;
    const all = await walk(url(server), `/api/v1/${slug}`, tenant.admin.cookie, 25);
    const expected = ordered(slug, mine);
    expect(all.ids, `${label}: ${name} admin`).toEqual(expected);
    expect(new Set(all.totals), `${label}: ${name} admin totals`).toEqual(new Set([expected.length]));
    const beta = ordered(slug, (r) => mine(r) && r.kind === 'beta');
    const listed = await walk(url(server), `/api/v1/${slug}?kind=beta`, tenant.admin.cookie, 25);
    expect(listed.ids, `${label}: ${name} kind=beta`).toEqual(beta);
    expect(listed.totals[0], `${label}: ${name} kind=beta total`).toBe(beta.length);
    for (const user of users[name]) {
      const own = ordered(slug, (r) => mine(r) && (shared || r.owner === user.id));
      const seen = await walk(url(server), `/api/v1/${slug}`, user.cookie, 25);
      expect(seen.ids, `${label}: ${name} user ${user.email}`).toEqual(own);
      expect(seen.totals[0]).toBe(own.length);
    }
    const live = expected;
    for (const id of [live[0], live[Math.floor(live.length / 2)], live[live.length - 1]].filter(Boolean)) {
      const record = models[slug].get(id)!;
      const owner = [tenant.admin, ...users[name]].find((u) => u.id === record.owner)!;
      for (const reader of [owner, tenant.admin]) {
        const read = await call('GET', `/api/v1/${slug}/${id}`, reader, undefined, server);
        expect(read.status, `${label}: READ ${id} as ${reader.email}: ${read.text}`).toBe(200);
        expect(read.body.data.kind).toBe(record.kind);
      }
      expect((await call('GET', `/api/v1/${slug}/${id}`, other.admin, undefined, server)).status, `${label}: READ ${id} from another tenant`).toBe(404);
    }
    const gone = [...models[slug]].find(([, r]) => r.deleted && mine(r));
    if (gone) expect((await call('GET', `/api/v1/${slug}/${gone[0]}`, tenant.admin, undefined, server)).status, `${label}: READ of a deleted record`).toBe(404);
  }
}

/** The read units a READ by id of `slug` cost (X-Request-Cost), as the tenant's admin. */
async function readCost(slug: string, id: string): Promise<number> {
  const response = await call('GET', `/api/v1/${slug}/${id}`, tenantOf(models[slug].get(id)!.tenant).admin);
  expect(response.status, response.text).toBe(200);
  const match = /^rcu=(\d+(?:\.\d+)?),/.exec(response.headers.get('x-request-cost') ?? '');
  expect(match, response.headers.get('x-request-cost') ?? 'no X-Request-Cost').not.toBeNull();
  return Number(match![1]);
}

/** Items (record items, copies, counters) under the tenant partition keys of `slug` named for `shards` shards (1: no suffix). */
async function itemsUnder(slug: string, shards: number): Promise<number> {
  let n = 0;
  for (const tenant of [acme, globex]) {
    const base = `${tenant.tenantId}#${slug}`;
    const keys = shards === 1 ? [base] : Array.from({ length: shards }, (_, k) => `${base}#~${k}/${shards}`);
    for (const pk of keys) {
      const out = await engine.send(new QueryCommand({ TableName: tableName('records'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, Select: 'COUNT', ConsistentRead: true }));
      n += out.Count ?? 0;
    }
  }
  return n;
}

/** One round of writes racing the pass on a pinned entity: creates, an update, a delete (soft or hard), and a restore of a soft-deleted record. */
async function race(slug: string, round: number): Promise<void> {
  const model = models[slug];
  await create(slug, 'acme', users.acme[round % 2], 100 + round);
  await create(slug, 'globex', users.globex[0], 200 + round);
  const live = (tenant: 'acme' | 'globex') => [...model].filter(([, r]) => !r.deleted && r.tenant === tenant);
  const [updateId, toUpdate] = live('globex')[round % live('globex').length];
  const updated = await call('PATCH', `/api/v1/${slug}/${updateId}`, globex.admin, { kind: 'gamma' });
  expect(updated.status, updated.text).toBe(200);
  toUpdate.kind = 'gamma';
  toUpdate.updated = true;
  const [deleteId, toDelete] = live('acme').find(([, r]) => !r.updated)!;
  const deleted = await call('DELETE', `/api/v1/${slug}/${deleteId}`, acme.admin);
  expect([200, 204], deleted.text).toContain(deleted.status);
  toDelete.deleted = true;
  if (slug === sharedSlug) model.delete(deleteId);
  const restorable = [...model].find(([id, r]) => r.deleted && id !== deleteId);
  if (restorable) {
    const back = await call('POST', `/api/v1/${slug}/${restorable[0]}/restore`, acme.admin, { revision: 1 });
    expect(back.status, back.text).toBe(200);
    restorable[1].deleted = false;
  }
}

beforeAll(async () => {
  defs = definitionsDir();
  dataDir = mkdtempSync(join(tmpdir(), 'private-shards-'));
  [acme, globex] = await Promise.all([newTenant(), newTenant()]);
  users = {
    acme: [await newUser(acme.admin.cookie), await newUser(acme.admin.cookie)],
    globex: [await newUser(globex.admin.cookie)],
  };
  await startServers(1, 1);
  operator = await loginAsOperator();
  for (let n = 0; n < 36; n++) {
    const tenant = n % 3 === 2 ? 'globex' : 'acme';
    const owners = [tenantOf(tenant).admin, ...users[tenant]];
    const owner = owners[n % owners.length];
    await create(privateSlug, tenant, owner, n);
    await create(sharedSlug, tenant, owner, n);
  }
  for (let n = 0; n < 12; n++) await create(autoSlug, n % 2 ? 'acme' : 'globex', users[n % 2 ? 'acme' : 'globex'][0], n);
}, 240_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  defs?.remove();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('changing the write shards of private and shared entities with records', () => {
  it('moves a private and a shared entity from 1 to 4 pinned shards, exact while writes race the pass, and leaves nothing under 1', async () => {
    await expectViews(privateSlug, 'before');
    await expectViews(sharedSlug, 'before');
    expect(await itemsUnder(privateSlug, 1)).toBeGreaterThan(0);
    const [sample] = ordered(privateSlug, (r) => r.tenant === 'globex');
    const costBefore = await readCost(privateSlug, sample);

    await startServers(1, 4);
    const stream = await openSse(`${url()}/api/v1/stream/${privateSlug}`, { Cookie: acme.admin.cookie });
    await stream.waitFor((m) => m.data?.type === 'connected');
    const stored = new Set(models[privateSlug].keys());
    let during = 0;
    for (let round = 0; round < 8; round++) {
      const [p, s] = await Promise.all([migrationOf(url(), privateSlug, operator), migrationOf(url(), sharedSlug, operator)]);
      if (p.state === 'done' && s.state === 'done') break;
      await race(privateSlug, round);
      await race(sharedSlug, round);
      await expectViews(privateSlug, `during (${p.state}, read ${p.writeShards.read})`);
      await expectViews(sharedSlug, `during (${s.state}, read ${s.writeShards.read})`);
      during += 1;
    }
    const done = await Promise.all([migrated(url(), privateSlug, 240_000), migrated(url(), sharedSlug, 240_000)]);

    expect(during).toBeGreaterThan(0);
    expect(done.map((d) => d.layout.writeShards)).toEqual([4, 4]);
    await expectViews(privateSlug, 'after');
    await expectViews(sharedSlug, 'after');
    expect(await itemsUnder(privateSlug, 1)).toBe(0);
    expect(await itemsUnder(sharedSlug, 1)).toBe(0);
    expect(await itemsUnder(privateSlug, 4)).toBeGreaterThan(models[privateSlug].size);
    // Once the change is complete a READ by id is one GetItem again, as before it.
    expect(await readCost(privateSlug, sample)).toBe(costBefore);
    // The tenant's stream sent each create made during the change once (its events spread over the shards too).
    const createdDuring = [...models[privateSlug]].filter(([id, r]) => !stored.has(id) && r.tenant === 'acme').map(([id]) => id);
    await stream.waitFor((m) => m.data?.record?.id === createdDuring[createdDuring.length - 1], 20_000);
    const sent = changes(stream).filter((m) => String(m.data.type).endsWith('.created')).map((m) => m.data.record.id as string);
    expect(sent.filter((id) => createdDuring.includes(id)).sort()).toEqual([...createdDuring].sort());
    stream.close();
  }, 600_000);

  it('splits a quiet private entity under one tenant\'s burst and merges it back when quiet, exact throughout, read through either server', async () => {
    await startServers(2, 4);
    const statusOf = (): Promise<EntityStatus> => migrationOf(url(), autoSlug, operator);
    expect(await statusOf()).toMatchObject({ state: 'done', writeShards: { auto: true, shards: 1 } });
    await expectViews(autoSlug, 'quiet');

    let n = 1000;
    let burst = true;
    const writers = Array.from({ length: 12 }, async (_, w) => {
      while (burst) await create(autoSlug, 'acme', users.acme[w % 2], n++, w % 2);
    });
    const deadline = Date.now() + 120_000;
    let split: EntityStatus;
    try {
      for (;;) {
        split = await statusOf();
        if (split.trigger?.action === 'split') break;
        if (Date.now() > deadline) throw new Error(`no split recorded: ${JSON.stringify(split)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      burst = false;
      await Promise.all(writers);
    }
    expect(split.trigger).toMatchObject({ action: 'split', from: 1, to: 2 });

    // Until it is split and merged back: writes through both servers, every view read through one then the other.
    let open = 0;
    let merged: EntityStatus | undefined;
    for (let round = 0; Date.now() < deadline + 240_000; round++) {
      const status = await statusOf();
      if (status.state === 'done' && status.trigger?.action === 'merge') {
        merged = status;
        break;
      }
      if (status.state !== 'done') {
        open += 1;
        const tenant = round % 2 ? 'acme' : 'globex';
        await create(autoSlug, tenant, users[tenant][0], 5000 + round, round % 2);
        const [id, record] = [...models[autoSlug]].find(([, r]) => r.tenant === 'globex' && !r.deleted)!;
        const moved = await call('PATCH', `/api/v1/${autoSlug}/${id}`, globex.admin, { kind: KINDS[round % 3] }, (round + 1) % 2);
        // A server that has not read the change yet refuses a write of a record listed under it (503, retry): nothing written.
        expect([200, 503], moved.text).toContain(moved.status);
        if (moved.status === 200) record.kind = KINDS[round % 3];
        await expectViews(autoSlug, `${status.trigger?.action} ${status.state} (read ${status.writeShards.read} of ${status.writeShards.shards})`, round % 2);
      } else await new Promise((r) => setTimeout(r, 300));
    }

    expect(merged, 'merged back').toBeDefined();
    expect(open).toBeGreaterThan(0);
    expect(merged!.writeShards).toMatchObject({ auto: true, shards: 1, read: 1 });
    await expectViews(autoSlug, 'merged', 0);
    await expectViews(autoSlug, 'merged', 1);
    expect(await itemsUnder(autoSlug, 2)).toBe(0);
  }, 600_000);
});
