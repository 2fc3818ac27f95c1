/**
 * A field an entity starts summing (aggregates.sum) over records stored before: the migration
 * pass adds each record's value to the counters of its listings, and until it is done sums and
 * averages are answered by a scan. Before, during (writes racing the pass) and after, every
 * answer equals a model of LIST; after, from counters. Dropped and declared again, the sum is
 * built afresh (a new generation): never counted twice.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient } from '../../../shared/data/client.js';
import { api } from '../../support/http.js';
import { newTenant, type TestTenant } from '../../support/identity.js';
import type { TestServer } from '../../support/server.js';
import { checkedWhileMigrating, definitionsDir, migrated, OWN_TABLES, startWith, walk, type DefinitionsDir } from './support.js';

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());

/** The names of the sum attributes the entity's counter items hold (read from the table itself). */
async function sumAttributes(): Promise<Set<string>> {
  const names = new Set<string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await engine.send(new ScanCommand({ TableName: OWN_TABLES.TABLE_RECORDS, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }));
    for (const item of page.Items ?? []) {
      if (item.kind !== 'counter' || !String(item.pk).includes(`#${slug}`)) continue;
      for (const name of Object.keys(item)) if (/(^|\|)[sn]:amount/.test(name)) names.add(name);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return names;
}

const slug = `sum${randomBytes(4).toString('hex')}`;
/** The day counts of createdAt every entity keeps by default (complete since the entity's first start). */
const CREATED_DAYS = { field: 'createdAt', token: 'createdAt', by: 'day', ready: true };
const STATUSES = ['draft', 'paid'] as const;
const fields = { status: { type: 'enum', values: [...STATUSES], indexed: true }, amount: { type: 'number' } };

function definition(summed: boolean): Record<string, unknown> {
  return { name: 'invoice', slug, tableName: slug, idFormat: { type: 'prefixed', prefix: 'inv' }, fields, access: { public: false, shared: true }, ...(summed ? { aggregates: { sum: ['amount'] } } : {}) };
}

let defs: DefinitionsDir;
let server: TestServer | undefined;
let tenant: TestTenant;
const ids: string[] = [];
/** Values with at most one decimal .5: sums are exact in floating point, whatever the order. */
const amount = () => Math.floor(Math.random() * 100) / 2;

async function restart(summed: boolean, env: Record<string, string> = {}): Promise<void> {
  await server?.stop();
  server = undefined;
  defs.write(definition(summed));
  server = await startWith(inject('dynamoEndpoint'), defs.dir, env);
}

const call = (method: string, path: string, body?: unknown) => api(method, path, { cookie: tenant.admin.cookie, body, baseUrl: server!.url });

async function create(i: number): Promise<void> {
  const response = await call('POST', `/api/v1/${slug}`, { status: STATUSES[i % 2], ...(i % 7 ? { amount: amount() } : {}) });
  expect(response.status, response.text).toBe(201);
  ids.push(response.body.data.id);
}

function model(rows: readonly Record<string, unknown>[]): { sum: number; avg: number | null } {
  const values = rows.map((r) => r.amount).filter((v): v is number => typeof v === 'number');
  const sum = values.reduce((n, v) => n + v, 0);
  return { sum, avg: values.length ? sum / values.length : null };
}

/** Every sum and average asked equals the model of a LIST walk; the sources the answers came from. */
async function expectSums(): Promise<Set<string>> {
  const { records } = await walk(server!.url, `/api/v1/${slug}`, tenant.admin.cookie, 100);
  const sources = new Set<string>();
  const ask = async (query: string) => {
    const response = await call('GET', `/api/v1/${slug}/aggregate?${query}`);
    expect(response.status, response.text).toBe(200);
    sources.add(response.body.meta.source);
    return response.body.data;
  };
  const all = model(records);
  expect(await ask('sum=amount&avg=amount')).toEqual([{ key: {}, sum: { amount: all.sum }, avg: { amount: all.avg } }]);
  const perStatus = STATUSES.filter((s) => records.some((r) => r.status === s)).map((status) => {
    const m = model(records.filter((r) => r.status === status));
    return { key: { status }, sum: { amount: m.sum }, avg: { amount: m.avg } };
  });
  expect(await ask('groupBy=status&sum=amount&avg=amount')).toEqual(perStatus);
  expect(await ask('status=paid&sum=amount')).toEqual([{ key: {}, sum: { amount: model(records.filter((r) => r.status === 'paid')).sum } }]);
  return sources;
}

/** Writes that race the pass: a create, a change of amount, a move to the other status, a value removed. */
async function raceOnce(round: number): Promise<void> {
  await create(100 + round);
  const [a, b, c] = [ids[round % ids.length], ids[(round * 3 + 1) % ids.length], ids[(round * 5 + 2) % ids.length]];
  expect((await call('PATCH', `/api/v1/${slug}/${a}`, { amount: amount() })).status).toBe(200);
  expect((await call('PATCH', `/api/v1/${slug}/${b}`, { status: STATUSES[round % 2], amount: amount() })).status).toBe(200);
  expect((await call('PATCH', `/api/v1/${slug}/${c}`, { status: STATUSES[(round + 1) % 2] })).status).toBe(200);
}

beforeAll(async () => {
  defs = definitionsDir();
  tenant = await newTenant();
  await restart(false);
  for (let i = 0; i < 30; i++) await create(i);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  defs?.remove();
});

describe('a field summed over stored records', () => {
  it('answers by a scan before the field is summed', async () => {
    expect([...(await expectSums())]).toEqual(['scan']);
  });

  it('answers by a scan while the pass adds the stored values, with writes racing it, and from counters once it is done', async () => {
    await restart(true, { MIGRATION_PAUSE_MS: '250', MIGRATION_PAGE_SIZE: '4' });
    const during = await checkedWhileMigrating(server!.url, slug, {
      seen: (status) => {
        expect(status.changes).toContain('sum added: amount');
        expect(status.sums).toEqual([{ field: 'amount', token: expect.stringMatching(/^amount@\d+$/), ready: false }, CREATED_DAYS]);
      },
      race: raceOnce,
      check: expectSums,
    });
    expect(during, 'checks made while the pass ran').toBeGreaterThan(0);
    const done = await migrated(server!.url, slug);
    expect(done.state).toBe('done');
    expect(done.sums).toEqual([{ field: 'amount', token: expect.stringMatching(/^amount@\d+$/), ready: true }, CREATED_DAYS]);
    await raceOnce(50);

    expect([...(await expectSums())]).toEqual(['counters']);
  }, 300_000);

  it('stops reading a dropped sum (its pass clears its attributes from the counters), and builds it afresh (never counted twice) when it is declared again', async () => {
    expect((await sumAttributes()).size).toBeGreaterThan(0);
    await restart(false);
    expect((await migrated(server!.url, slug)).state).toBe('done');
    expect([...(await sumAttributes())]).toEqual([]);
    await raceOnce(60);
    expect([...(await expectSums())]).toEqual(['scan']);

    await restart(true);
    expect((await migrated(server!.url, slug)).state).toBe('done');
    await raceOnce(61);

    expect([...(await expectSums())]).toEqual(['counters']);
  }, 300_000);
});
