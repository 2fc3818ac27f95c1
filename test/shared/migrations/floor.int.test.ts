/**
 * A migration's floor under a steady load: 600 records in six tenants, then a restart with a field
 * indexed while four clients create and list without a pause, the pace told to yield at the least
 * slowdown (MIGRATION_LATENCY_TOLERANCE=1). The floor still carries the pass: it ends within the
 * time its units take at MIGRATION_FLOOR_PER_SECOND (records, and the Scan pages of the table),
 * and the status shows the records created meanwhile apart from the total they were not part of.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { createDynamoClient } from '../../../shared/data/client.js';
import { api } from '../../support/http.js';
import { loginAsOperator, newTenant, type TestTenant } from '../../support/identity.js';
import type { TestServer } from '../../support/server.js';
import { definitionsDir, migrationOf, OWN_TABLES, startWith, type DefinitionsDir, type EntityStatus } from './support.js';

const slug = `flr${randomBytes(4).toString('hex')}`;
const RECORDS = 600;
/** Tenants holding the records, a partition each: more than the pass's 4 Scan segments, so some segment reaches one only after the writes began. */
const TENANTS = 6;
const FLOOR = 25;
/** Scan pages small enough that each segment's Scan moves on through the pass, meeting records created ahead of it. */
const PAGE = 50;

type Fields = Record<string, Record<string, unknown>>;
const fields: Fields = { title: { type: 'string', maxLength: 80 }, kind: { type: 'enum', values: ['a', 'b', 'c'] } };

function definition(indexed: boolean): Record<string, unknown> {
  return {
    name: 'ledger',
    slug,
    tableName: slug,
    idFormat: { type: 'prefixed', prefix: 'flr' },
    fields: { ...fields, kind: { ...fields.kind, ...(indexed ? { indexed: true } : {}) } },
    access: { public: false, shared: true },
  };
}

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const engine = DynamoDBDocumentClient.from(createDynamoClient());

/** Items of the server's records table (this file's own, every entity's items): what the pass's Scan pages cover. */
async function tableItems(): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await engine.send(new ScanCommand({ TableName: OWN_TABLES.TABLE_RECORDS, Select: 'COUNT', ...(start ? { ExclusiveStartKey: start } : {}) }));
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

let defs: DefinitionsDir;
let server: TestServer | undefined;
let tenants: TestTenant[];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  defs = definitionsDir();
  tenants = await Promise.all(Array.from({ length: TENANTS }, () => newTenant()));
  defs.write(definition(false));
  server = await startWith(inject('dynamoEndpoint'), defs.dir);
  for (let i = 0; i < RECORDS; i += 20) {
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, k) => {
        const n = i + k;
        return api('POST', `/api/v1/${slug}`, { cookie: tenants[n % TENANTS].admin.cookie, body: { title: `r-${n}`, kind: ['a', 'b', 'c'][n % 3] }, baseUrl: server!.url });
      }),
    );
    for (const response of created) expect(response.status, response.text).toBe(201);
  }
}, 240_000);

afterAll(async () => {
  await server?.stop();
  defs?.remove();
  engine.destroy();
});

describe('the floor of a migration', () => {
  it('migrates at least at the floor while the API never stops serving, and shows records created meanwhile apart', async () => {
    const items = await tableItems();
    await server!.stop();
    defs.write(definition(true));
    server = await startWith(inject('dynamoEndpoint'), defs.dir, {
      MIGRATION_LATENCY_TOLERANCE: '1',
      MIGRATION_FLOOR_PER_SECOND: String(FLOOR),
      MIGRATION_PAGE_SIZE: String(PAGE),
    });
    const operator = await loginAsOperator();
    let status: EntityStatus | undefined;
    let running = true;
    let created = 0;
    // Each client writes in every tenant in turn: a new record sorts first in its partition, so the
    // pass meets those created in a partition its segment has not reached yet (with six partitions
    // in four segments, one segment reaches its second only after the first's records).
    const client = async (first: number) => {
      for (let n = first; running; n++) {
        const cookie = tenants[n % TENANTS].admin.cookie;
        const wrote = await api('POST', `/api/v1/${slug}`, { cookie, body: { title: 'during', kind: 'a' }, baseUrl: server!.url });
        expect(wrote.status, wrote.text).toBe(201);
        created += 1;
        expect((await api('GET', `/api/v1/${slug}?limit=20`, { cookie, baseUrl: server!.url })).status).toBe(200);
      }
    };
    const deadline = Date.now() + 240_000;
    // The load starts once the records are counted (a record created while they are counted may or
    // may not be in the total), and lasts until the pass ends.
    for (status = await migrationOf(server!.url, slug, operator); status.total === null && Date.now() < deadline; status = await migrationOf(server!.url, slug, operator)) await sleep(100);
    const clients = [0, 1, 2, 3].map((first) => client(first));
    const overTotal: EntityStatus[] = [];
    try {
      while (Date.now() < deadline) {
        status = await migrationOf(server!.url, slug, operator);
        if (status.total !== null && status.processed > status.total) overTotal.push(status);
        if (status.state === 'done' || status.state === 'failed') break;
        await sleep(500);
      }
    } finally {
      running = false;
      await Promise.all(clients);
    }
    const done = status!;
    const itemsAfter = await tableItems();

    expect(done.state, JSON.stringify(done)).toBe('done');
    // The units of the pass: its records, its Scan pages (4 segments, each over its quarter of the
    // table as it grew: at most the items at the end, plus a last page each), the pages counting
    // the records. The floor's rate holds while the engine carries it with the units in flight; on
    // a 2-core machine running the suite beside it a unit can take most of a second, hence twice
    // the time plus 10 s. Without the floor, yielding at the least slowdown, the same pass takes
    // minutes (one unit at a time, up to a second apart).
    const units = done.processed + done.added + itemsAfter / PAGE + items / 1000 + 8;
    const seconds = (Date.parse(done.endedAt!) - Date.parse(done.startedAt!)) / 1000;
    expect(seconds, `${Math.round(units)} units at ${FLOOR} a second, ${created} records created meanwhile`).toBeLessThanOrEqual((2 * units) / FLOOR + 10);
    // The pace yielded (it waits between units or keeps one in flight) and the floor started units anyway.
    const paceLines = server!.output().split('\n').filter((l) => l.includes(`[migrations] ${slug}:`) && l.includes('started by the floor'));
    const floorStarts = paceLines.map((l) => Number(/(\d+) started by the floor/.exec(l)![1]));
    expect(Math.max(0, ...floorStarts), paceLines.join('\n')).toBeGreaterThan(0);
    // Processed never passes the total counted at the start, at any moment; records created during
    // the pass are shown apart.
    expect(overTotal).toEqual([]);
    expect(done.total).toBe(RECORDS);
    expect(done.processed).toBe(RECORDS);
    expect(done.added).toBeGreaterThan(0);
    expect(done.added).toBeLessThanOrEqual(created);
  }, 300_000);
});
