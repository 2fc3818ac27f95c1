/**
 * An entity declared with write shards (test/support/sharded-entities/ledger.ts: private, 4
 * shards) through HTTP on DynamoDB Local: records created by several users and tenants and
 * imported, some updated and deleted, then every view of LIST agrees with a model of the data
 * (default order, each indexed value, owner views, cursor walks to the end, page N, totals, the
 * first and last createdAt read from the ends of the shards), the
 * copies really are spread over the shards, and the stream resumes across shards without loss
 * or repeat.
 */
import { fileURLToPath } from 'node:url';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient, tableName } from '../../../shared/data/client.js';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { changes, openSse, type SseConnection } from '../stream/sse-client.js';
import { keyOf } from './support.js';

const ENTITIES_DIR = fileURLToPath(new URL('../../support/sharded-entities/', import.meta.url));
const SHARDS = 4;
const KINDS = ['debit', 'credit', 'memo'] as const;
const ACCOUNTS = ['cash', 'bank', 'card#1', 'a=b'];

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());

interface Entry {
  id: string;
  title: string;
  createdAt: string;
  ownerId: string;
  kind: string;
  account?: string;
}

let server: TestServer;
let acme: TestTenant;
let globex: TestTenant;
const keys: { admin: string; alice: string; bob: string; other: string } = { admin: '', alice: '', bob: '', other: '' };
const owners: Record<string, string> = {};
/** What acme's ledger holds, as the API should show it. */
const model = new Map<string, Entry>();
const open: SseConnection[] = [];

const call = (key: string) => ({
  get: (path: string) => api('GET', path, { apiKey: key, baseUrl: server.url }),
  post: (path: string, body: unknown) => api('POST', path, { apiKey: key, baseUrl: server.url, body }),
  patch: (path: string, body: unknown) => api('PATCH', path, { apiKey: key, baseUrl: server.url, body }),
  del: (path: string) => api('DELETE', path, { apiKey: key, baseUrl: server.url }),
});

/** Records responses show no owner: it is the user who created the record (the admin, for an import). */
function remember(body: { id: string; title: string; createdAt: string; kind: string; account?: string }, ownerId = model.get(body.id)?.ownerId ?? owners.admin): void {
  model.set(body.id, { id: body.id, title: body.title, createdAt: body.createdAt, ownerId, kind: body.kind, ...(body.account ? { account: body.account } : {}) });
}

/** The default order: newest first, then id. */
function ordered(entries: Iterable<Entry>): string[] {
  return [...entries].sort((a, b) => (a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : a.id < b.id ? -1 : 1)).map((e) => e.id);
}

/** Every page of a LIST, following nextCursor; checks each page's total on the way. */
async function walk(key: string, query: string, total: number): Promise<string[]> {
  const ids: string[] = [];
  let path = `/api/v1/ledger?limit=7${query}`;
  for (let page = 1; page < 100; page++) {
    const response = await call(key).get(path);
    expect(response.status, response.text).toBe(200);
    expect(response.body.pagination.total).toBe(total);
    ids.push(...response.body.data.map((r: { id: string }) => r.id));
    const next = response.body.pagination.nextCursor;
    if (!next) return ids;
    path = `/api/v1/ledger?limit=7${query}&cursor=${encodeURIComponent(next)}`;
  }
  throw new Error('the walk did not end');
}

beforeAll(async () => {
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ENTITIES_DIR, STREAM_POLL_MS: '100', STREAM_MAX_DURATION_MS: '120000' } });
  [acme, globex] = await Promise.all([newTenant(), newTenant()]);
  const [alice, bob] = await Promise.all([newUser(acme.admin.cookie), newUser(acme.admin.cookie)]);
  [keys.admin, keys.alice, keys.bob, keys.other] = await Promise.all([keyOf(acme.admin.cookie), keyOf(alice.cookie), keyOf(bob.cookie), keyOf(globex.admin.cookie)]);
  Object.assign(owners, { admin: acme.admin.id, alice: alice.id, bob: bob.id });

  // Creates from three users of acme (and noise from another tenant), a few at a time.
  const writers = [keys.admin, keys.alice, keys.bob];
  const writerIds = [owners.admin, owners.alice, owners.bob];
  for (let round = 0; round < 8; round++) {
    const made = await Promise.all(
      Array.from({ length: 9 }, (_, i) => {
        const n = round * 9 + i;
        const body = { title: `Entry ${n}`, kind: KINDS[n % 3], ...(n % 5 ? { account: ACCOUNTS[n % 4] } : {}), amount: n };
        return call(writers[n % 3]).post('/api/v1/ledger', body);
      }),
    );
    made.forEach((response, i) => {
      expect(response.status, response.text).toBe(201);
      remember(response.body.data, writerIds[(round * 9 + i) % 3]);
    });
    expect((await call(keys.other).post('/api/v1/ledger', { title: 'Elsewhere', kind: 'debit' })).status).toBe(201);
  }
  // An import of 40 by the admin.
  const imported = await call(keys.admin).post('/api/v1/import/ledger', { items: Array.from({ length: 40 }, (_, n) => ({ title: `Imported ${n}`, kind: KINDS[(n + 1) % 3], account: ACCOUNTS[n % 4] })) });
  expect(imported.status, imported.text).toBe(201);
  const listed = await walk(keys.admin, '', model.size + 40);
  const fetched = await Promise.all(listed.filter((id) => !model.has(id)).map((id) => call(keys.admin).get(`/api/v1/ledger/${id}`)));
  for (const response of fetched) remember(response.body.data);
  expect(model.size).toBe(72 + 40);

  // Updates that move records between indexed values, and deletes.
  const ids = [...model.keys()];
  for (const id of ids.slice(0, 12)) {
    const response = await call(keys.admin).patch(`/api/v1/ledger/${id}`, { kind: 'credit', account: 'bank' });
    expect(response.status, response.text).toBe(200);
    remember(response.body.data);
  }
  for (const id of ids.slice(12, 20)) {
    expect((await call(keys.admin).del(`/api/v1/ledger/${id}`)).status).toBe(200);
    model.delete(id);
  }
}, 180_000);

afterAll(async () => {
  for (const connection of open) connection.close();
  await server?.stop();
});

describe('an entity with write shards', () => {
  it('spreads its copies over its shards: each holds some, none holds them all', async () => {
    const perShard = await Promise.all(
      Array.from({ length: SHARDS }, async (_, k) => {
        const out = await engine.send(
          new QueryCommand({
            TableName: tableName('records'),
            KeyConditionExpression: 'pk = :pk AND sk > :copies',
            ExpressionAttributeValues: { ':pk': `${acme.tenantId}#ledger#~${k}/${SHARDS}`, ':copies': '#count#~' },
            Select: 'COUNT',
          }),
        );
        return out.Count ?? 0;
      }),
    );

    expect(perShard.reduce((a, b) => a + b, 0)).toBe(model.size);
    for (const count of perShard) expect(count).toBeGreaterThan(model.size / SHARDS / 3);
  });

  it('lists every record once, in the default order, walking the cursors to the end', async () => {
    expect(await walk(keys.admin, '', model.size)).toEqual(ordered(model.values()));
  });

  it('answers page N as the same slice of the default order', async () => {
    const expected = ordered(model.values());
    for (const page of [1, 2, 5, 16, 17]) {
      const response = await call(keys.admin).get(`/api/v1/ledger?limit=7&page=${page}`);

      expect(response.body.data.map((r: { id: string }) => r.id)).toEqual(expected.slice((page - 1) * 7, page * 7));
      expect(response.body.pagination).toMatchObject({ total: model.size, page, hasNext: page * 7 < model.size });
    }
  });

  it('lists each indexed value exactly, with its total', async () => {
    for (const kind of KINDS) {
      const expected = ordered([...model.values()].filter((e) => e.kind === kind));
      expect(await walk(keys.admin, `&kind=${kind}`, expected.length)).toEqual(expected);
    }
    for (const account of ACCOUNTS) {
      const expected = ordered([...model.values()].filter((e) => e.account === account));
      expect(await walk(keys.admin, `&filter=${encodeURIComponent(JSON.stringify({ account }))}`, expected.length)).toEqual(expected);
    }
  });

  it("shows each user their own records only, and another tenant none of acme's", async () => {
    for (const who of ['alice', 'bob'] as const) {
      const expected = ordered([...model.values()].filter((e) => e.ownerId === owners[who]));
      expect(await walk(keys[who], '', expected.length)).toEqual(expected);
      const debits = ordered([...model.values()].filter((e) => e.ownerId === owners[who] && e.kind === 'debit'));
      expect(await walk(keys[who], '&kind=debit', debits.length)).toEqual(debits);
    }
    const theirs = await call(keys.other).get('/api/v1/ledger?limit=100');
    expect(theirs.body.pagination.total).toBe(8);
    expect(theirs.body.data.some((r: { id: string }) => model.has(r.id))).toBe(false);
  });

  it('answers the first and last createdAt from the ends of every shard: in all, per kind, of one value, of an owner', async () => {
    const ends = (entries: Entry[]) => {
      const times = entries.map((e) => e.createdAt).sort();
      return { min: { createdAt: times[0] ?? null }, max: { createdAt: times.at(-1) ?? null } };
    };
    const ask = async (key: string, query: string) => {
      const response = await call(key).get(`/api/v1/ledger/aggregate?min=createdAt&max=createdAt${query}`);
      expect(response.status, response.text).toBe(200);
      expect(response.body.meta.source, query).toBe('index');
      return response.body.data;
    };
    const all = [...model.values()];

    expect(await ask(keys.admin, '&count')).toEqual([{ key: {}, count: all.length, ...ends(all) }]);
    expect(await ask(keys.admin, '&groupBy=kind')).toEqual(KINDS.filter((k) => all.some((e) => e.kind === k)).sort().map((kind) => ({ key: { kind }, ...ends(all.filter((e) => e.kind === kind)) })));
    for (const account of ACCOUNTS) expect(await ask(keys.admin, `&account=${encodeURIComponent(account)}`)).toEqual([{ key: {}, ...ends(all.filter((e) => e.account === account)) }]);
    const alices = all.filter((e) => e.ownerId === owners.alice);
    expect(await ask(keys.alice, '')).toEqual([{ key: {}, ...ends(alices) }]);
    expect(await ask(keys.alice, '&kind=debit')).toEqual([{ key: {}, ...ends(alices.filter((e) => e.kind === 'debit')) }]);
  });

  it('sorts and searches over every shard', async () => {
    const sorted = await walk(keys.admin, '&sort=title', model.size);
    expect(new Set(sorted)).toEqual(new Set(model.keys()));
    expect(sorted.length).toBe(model.size);

    const found = await walk(keys.admin, '&search=Imported', [...model.values()].filter((e) => e.title.startsWith('Imported')).length);
    expect(new Set(found)).toEqual(new Set([...model.values()].filter((e) => e.title.startsWith('Imported')).map((e) => e.id)));
  });
});

describe('the stream of an entity with write shards', () => {
  it('sends every change of every shard once, and resumes across shards without loss or repeat', async () => {
    const first = await openSse(`${server.url}/api/v1/stream/ledger`, { Authorization: `Bearer ${keys.admin}` });
    open.push(first);
    await first.waitFor((m) => m.data?.type === 'connected');
    const before: string[] = [];
    for (let i = 0; i < 12; i++) before.push((await call(keys.admin).post('/api/v1/ledger', { title: `Streamed ${i}` })).body.data.id);
    await first.waitFor((m) => m.data?.record?.id === before[before.length - 1], 15_000);
    const lastId = changes(first).filter((m) => m.id).at(-1)!.id!;
    first.close();

    const after: string[] = [];
    for (let i = 0; i < 12; i++) after.push((await call(keys.admin).post('/api/v1/ledger', { title: `While away ${i}` })).body.data.id);
    const second = await openSse(`${server.url}/api/v1/stream/ledger`, { Authorization: `Bearer ${keys.admin}`, 'Last-Event-ID': lastId });
    open.push(second);
    await second.waitFor((m) => m.data?.record?.id === after[after.length - 1], 15_000);
    await new Promise((r) => setTimeout(r, 1500));

    const got = [...changes(first), ...changes(second)].map((m) => m.data.record.id as string);
    expect(got.filter((id) => before.includes(id) || after.includes(id)).sort()).toEqual([...before, ...after].sort());
    expect(new Set(got).size).toBe(got.length);
  });
});
