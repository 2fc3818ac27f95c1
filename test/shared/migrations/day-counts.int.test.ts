/**
 * Records counted per UTC day of a date field (aggregates.days), against a model of LIST: a date
 * field and a date-time field the entity starts counting per day over records stored before (the
 * migration pass counts them; until it is done the same questions take a scan), with writes
 * racing the pass that move records between days, clear dates, soft-delete and restore. Before,
 * during and after, every count per day, week and month, with and without a range of whole days,
 * equals what a cursor walk of LIST shows, across a month boundary and a time zone edge (a
 * date-time at 23:30 at −02:00 is the next UTC day). Dropped, the day counters are deleted.
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

const slug = `day${randomBytes(4).toString('hex')}`;
const fields = { title: { type: 'string' }, dueOn: { type: 'date' }, startsAt: { type: 'datetime' } };
/** Days on both sides of a month boundary (and of an ISO week's). */
const DUE = ['2026-01-29', '2026-01-31', '2026-02-01', '2026-02-02', '2026-03-01'];
/** Instants whose UTC day differs from the one their offset shows. */
const STARTS = ['2026-01-31T23:30:00-02:00', '2026-02-01T00:30:00+01:00', '2026-02-28T12:00:00Z', '2026-03-01T01:00:00+03:00'];

function definition(counted: boolean): Record<string, unknown> {
  return {
    name: 'booking', slug, tableName: slug, idFormat: { type: 'prefixed', prefix: 'bkg' }, fields, softDelete: true,
    access: { public: false, shared: true },
    aggregates: { days: counted ? ['createdAt', 'dueOn', 'startsAt'] : ['createdAt'] },
  };
}

let defs: DefinitionsDir;
let server: TestServer | undefined;
let tenant: TestTenant;
const ids: string[] = [];
const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)];

async function restart(counted: boolean, env: Record<string, string> = {}): Promise<void> {
  await server?.stop();
  server = undefined;
  defs.write(definition(counted));
  server = await startWith(inject('dynamoEndpoint'), defs.dir, env);
}

const call = (method: string, path: string, body?: unknown) => api(method, path, { cookie: tenant.admin.cookie, body, baseUrl: server!.url });

async function create(i: number): Promise<void> {
  const response = await call('POST', `/api/v1/${slug}`, { title: `b${i}`, ...(i % 5 ? { dueOn: pick(DUE) } : {}), ...(i % 3 ? { startsAt: pick(STARTS) } : {}) });
  expect(response.status, response.text).toBe(201);
  ids.push(response.body.data.id);
}

/** The model's bucket of a date or date-time: its UTC day, the Monday of its ISO week, or the first of its month. */
function bucket(value: unknown, interval: 'day' | 'week' | 'month'): string | null {
  if (typeof value !== 'string') return null;
  const day = value.length === 10 ? value : new Date(value).toISOString().slice(0, 10);
  if (interval === 'month') return `${day.slice(0, 7)}-01`;
  if (interval === 'day') return day;
  const at = new Date(`${day}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() - ((at.getUTCDay() + 6) % 7));
  return at.toISOString().slice(0, 10);
}

/** The model's groups: records per bucket of `field`, sorted (null first), within the days `from`–`to` when given. */
function modelGroups(rows: readonly Record<string, unknown>[], field: string, interval: 'day' | 'week' | 'month', range?: [string, string]) {
  const counts = new Map<string | null, number>();
  for (const row of rows) {
    const day = bucket(row[field], 'day');
    if (range && (day === null || day < range[0] || day > range[1])) continue;
    const key = bucket(row[field], interval);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => (a === null ? -1 : b === null ? 1 : a < b ? -1 : a > b ? 1 : 0)).map(([key, count]) => ({ key: { [field]: key }, count }));
}

/** Every count per day, week and month asked equals the model of a LIST walk; the sources the answers came from. */
async function expectDays(): Promise<Set<string>> {
  const { records } = await walk(server!.url, `/api/v1/${slug}`, tenant.admin.cookie, 100);
  const sources = new Set<string>();
  for (const field of ['dueOn', 'startsAt']) {
    for (const interval of ['day', 'week', 'month'] as const) {
      const response = await call('GET', `/api/v1/${slug}/aggregate?interval=${interval}&dateField=${field}`);
      expect(response.status, response.text).toBe(200);
      expect(response.body.data, `${field} per ${interval}`).toEqual(modelGroups(records, field, interval));
      sources.add(response.body.meta.source);
    }
    const ranged = await call('GET', `/api/v1/${slug}/aggregate?interval=day&dateField=${field}&startDate=2026-01-31&endDate=2026-02-01`);
    expect(ranged.status, ranged.text).toBe(200);
    expect(ranged.body.data, `${field} per day of a range`).toEqual(modelGroups(records, field, 'day', ['2026-01-31', '2026-02-01']));
    sources.add(ranged.body.meta.source);
  }
  return sources;
}

/** Writes that race the pass: a create, a move to another day, a date cleared, a soft delete and a restore. */
async function raceOnce(round: number): Promise<void> {
  await create(100 + round);
  const [a, b, c] = [ids[round % ids.length], ids[(round * 3 + 1) % ids.length], ids[(round * 5 + 2) % ids.length]];
  expect((await call('PATCH', `/api/v1/${slug}/${a}`, { dueOn: pick(DUE), startsAt: pick(STARTS) })).status).toBe(200);
  expect((await call('PATCH', `/api/v1/${slug}/${b}`, { dueOn: null })).status).toBe(200);
  expect((await call('DELETE', `/api/v1/${slug}/${c}`)).status).toBe(200);
  expect((await call('POST', `/api/v1/${slug}/${c}/restore`, { revision: 1 })).status).toBe(200);
}

/** Day counter items of the entity's date fields (read from the table itself). */
async function dayItems(): Promise<string[]> {
  const found: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await engine.send(new ScanCommand({ TableName: OWN_TABLES.TABLE_RECORDS, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }));
    for (const item of page.Items ?? []) if (String(item.pk).includes(`#${slug}#days`) && /^(dueOn|startsAt)/.test(String(item.sk))) found.push(String(item.sk));
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
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

describe('records counted per day of a date field', () => {
  it('answers by a scan while the fields are not counted per day, and counts per day of createdAt from counters', async () => {
    expect([...(await expectDays())]).toEqual(['scan']);
    const { records } = await walk(server!.url, `/api/v1/${slug}`, tenant.admin.cookie, 100);
    const created = await call('GET', `/api/v1/${slug}/aggregate?interval=month`);
    expect(created.body).toMatchObject({ data: modelGroups(records, 'createdAt', 'month'), meta: { source: 'counters' } });
  });

  it('answers by a scan while the pass counts the stored records, with writes racing it, and from counters once it is done', async () => {
    await restart(true, { MIGRATION_PAUSE_MS: '250', MIGRATION_PAGE_SIZE: '4' });
    const during = await checkedWhileMigrating(server!.url, slug, {
      seen: (status) => expect(status.changes).toEqual(expect.arrayContaining(['day counts added: dueOn', 'day counts added: startsAt'])),
      race: raceOnce,
      check: expectDays,
    });
    expect(during, 'checks made while the pass ran').toBeGreaterThan(0);
    const done = await migrated(server!.url, slug);
    expect(done.sums.filter((s) => s.field !== 'createdAt')).toEqual([
      { field: 'dueOn', token: expect.stringMatching(/^dueOn@\d+$/), by: 'day', ready: true },
      { field: 'startsAt', token: expect.stringMatching(/^startsAt@\d+$/), by: 'day', ready: true },
    ]);
    await raceOnce(50);

    expect([...(await expectDays())]).toEqual(['counters']);
  }, 300_000);

  it('deletes the day counters of fields no longer counted per day (its pass rewriting soft-deleted records too), and answers by a scan again', async () => {
    expect((await dayItems()).length).toBeGreaterThan(0);
    expect((await call('DELETE', `/api/v1/${slug}/${ids[0]}`)).status).toBe(200);

    await restart(false);
    expect((await migrated(server!.url, slug)).state).toBe('done');

    expect(await dayItems()).toEqual([]);
    expect((await call('POST', `/api/v1/${slug}/${ids[0]}/restore`, { revision: 1 })).status).toBe(200);
    await raceOnce(60);
    expect([...(await expectDays())]).toEqual(['scan']);
  }, 300_000);
});
