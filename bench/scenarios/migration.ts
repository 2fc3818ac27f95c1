/**
 * A migration under `npm start` (docs/changing-entities.md): BENCH_MIGRATION_RECORDS records
 * (default 100,000 × BENCH_SCALE) of a shared entity are stored, then the server is restarted with
 * one of their fields made `indexed`. BENCH_MIGRATION_CLIENTS clients (default 1) each send CREATE
 * then LIST without a pause, before, during and after the migration: a steady load the pace
 * yields to, down to its floor (MIGRATION_FLOOR_PER_SECOND, passed on to the server). Measured:
 * records per second of the background migration and its duration against the floor's bound (its
 * units, records and Scan pages, at the floor's rate), WRU per record (its transaction, billed as
 * DynamoDB bills transactional writes), the p99 of CREATE and LIST on the same entity while it
 * runs against the idle figure (target: within 2×), and a full cursor walk of the new index
 * afterwards (every matching record once, exact totals).
 *
 * Runs its own DynamoDB Local (in memory) and `npm start` children with ENTITIES_DIR; the records
 * are stored with BatchWriteItem as the first layout stores them (seeding over HTTP would take
 * longer than the migration measured).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchWriteCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { startDynamoLocal } from '../../infra/local/dynamodb-local.js';
import { resetConfig } from '../../shared/config.js';
import { db, tableName } from '../../shared/data/client.js';
import { itemSize, recordItem } from '../../shared/data/items.js';
import { definitionLayout } from '../../shared/data/layout.js';
import { tenantPartition } from '../../shared/data/partitions.js';
import type { StoredRecord } from '../../shared/data/record-item.js';
import { newRecordId } from '../../shared/ids.js';
import { layoutOfState } from '../../shared/migrations/live-layouts.js';
import { migrateTransaction } from '../../shared/migrations/migrate-record.js';
import { PACE_FLOOR_PER_SECOND } from '../../shared/migrations/pace.js';
import { readState } from '../../shared/migrations/state.js';
import { validateDefinition } from '../../shared/registry/index.js';
import { ok, send, sessionOf, type BenchTarget } from '../http.js';
import { pool, round, summarize } from '../stats.js';
import type { BenchContext, BenchRow } from '../types.js';

export const order = 320;
export const long = true;
export const usesLocal = false;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CURRENCIES = ['USD', 'EUR', 'GBP'];
const OPERATOR = { email: 'bench-operator@bench.local', password: `pw-${randomBytes(8).toString('hex')}` };

function definition(slug: string, indexed: boolean): Record<string, unknown> {
  return {
    name: 'invoice',
    slug,
    tableName: slug,
    idFormat: { type: 'prefixed', prefix: 'inv' },
    fields: { title: { type: 'string', maxLength: 200 }, currency: { type: 'enum', values: CURRENCIES, ...(indexed ? { indexed: true } : {}) }, amount: { type: 'number' } },
    access: { public: false, shared: true },
  };
}

async function startServer(dynamoEndpoint: string, dir: string): Promise<{ target: BenchTarget; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DYNAMODB_ENDPOINT: dynamoEndpoint, ENTITIES_DIR: dir, ADMIN_EMAIL: OPERATOR.email, ADMIN_PASSWORD: OPERATOR.password, LOG_LEVEL: 'ERROR' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return {
    target: { url },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** Items of the records table (the pass's Scan pages cover all of them, not only the entity's). */
async function tableItems(): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(new ScanCommand({ TableName: tableName('records'), Select: 'COUNT', ...(start ? { ExclusiveStartKey: start } : {}) }));
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/** Billed like DynamoDB bills a transaction: 2 WRU per started KB of each item (an Update of a small counter: 2). */
function transactionWru(items: ReturnType<typeof migrateTransaction>): number {
  return (items ?? []).reduce((n, item) => n + 2 * Math.max(1, Math.ceil(itemSize((item.Put?.Item ?? {}) as Record<string, unknown>) / 1024)), 0);
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const count = Math.max(100, Number(process.env.BENCH_MIGRATION_RECORDS ?? Math.round(100_000 * context.scale)));
  const clients = Math.max(1, Number(process.env.BENCH_MIGRATION_CLIENTS ?? 1) || 1);
  const floor = process.env.MIGRATION_FLOOR_PER_SECOND ? Number(process.env.MIGRATION_FLOOR_PER_SECOND) : PACE_FLOOR_PER_SECOND;
  const pageSize = Number(process.env.MIGRATION_PAGE_SIZE ?? 100) || 100;
  const slug = `inv${randomBytes(3).toString('hex')}`;
  const engine = await startDynamoLocal();
  const dir = mkdtempSync(join(tmpdir(), 'bench-entities-'));
  const write = (indexed: boolean) => writeFileSync(join(dir, 'zz-bench.ts'), `export default ${JSON.stringify(definition(slug, indexed))};\n`);
  const scenario = `migration: a new indexed field over ${count.toLocaleString('en')} records (npm start)`;
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  resetConfig();
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    write(false);
    server = await startServer(engine.endpoint, dir);
    const operator = await sessionOf(server.target, OPERATOR);
    const admin = { email: `bench-${randomBytes(4).toString('hex')}@bench.local`, name: 'Bench', password: `pw-${randomBytes(8).toString('hex')}` };
    const tenant = (await ok(server.target, 'POST', '/api/v1/tenants', operator, { name: 'Migration bench', admin })).body.data;
    const entity = validateDefinition(definition(slug, false), 'bench');
    const perCurrency = new Map(CURRENCIES.map((c) => [c, 0]));

    // Seed: the records as the first layout stores them (a shared entity: the record is its own listing copy).
    console.log(`  seeding ${count} records`);
    const base = Date.now() - count * 10;
    const batches: StoredRecord[][] = [];
    for (let i = 0; i < count; i += 25) {
      batches.push(
        Array.from({ length: Math.min(25, count - i) }, (_, j) => {
          const n = i + j;
          const at = base + n * 10;
          const currency = CURRENCIES[n % 3];
          perCurrency.set(currency, perCurrency.get(currency)! + 1);
          const iso = new Date(at).toISOString();
          return { entity: slug, id: newRecordId(entity.idFormat, at), tenantId: tenant.id, ownerId: tenant.admin.id, createdAt: iso, updatedAt: iso, version: 1, data: { title: `Invoice ${n}`, currency, amount: n % 1000 } };
        }),
      );
    }
    const seeded = definitionLayout(entity);
    await pool(batches, 16, async (batch) => {
      let requests = batch.map((r) => ({ PutRequest: { Item: recordItem(seeded, r) } }));
      while (requests.length) {
        const out = await db().send(new BatchWriteCommand({ RequestItems: { [tableName('records')]: requests } }));
        requests = (out.UnprocessedItems?.[tableName('records')] ?? []) as typeof requests;
      }
    });
    await db().send(new PutCommand({ TableName: tableName('records'), Item: { pk: tenantPartition(entity, tenant.id), sk: '#count#0', kind: 'counter', count } }));

    const session = await sessionOf(server.target, admin);
    const create = async (target: BenchTarget) => {
      const currency = CURRENCIES[Math.floor(Math.random() * 3)];
      await ok(target, 'POST', `/api/v1/${slug}`, session, { title: 'During', currency, amount: 1 });
      perCurrency.set(currency, perCurrency.get(currency)! + 1);
    };
    const list = (target: BenchTarget) => ok(target, 'GET', `/api/v1/${slug}?limit=20`, session);
    const samples = Math.max(50, Math.round(200 * context.scale));
    /** `clients` clients, each a CREATE then a LIST without a pause, until `more()` says stop. */
    const load = async (more: (round: number) => boolean, creates: number[], lists: number[]) => {
      await Promise.all(
        Array.from({ length: clients }, async () => {
          for (let round = 0; more(round); round++) {
            creates.push(await timed(() => create(server!.target)));
            lists.push(await timed(() => list(server!.target)));
          }
        }),
      );
    };
    const idleCreate: number[] = [];
    const idleList: number[] = [];
    await load((round) => round < samples, idleCreate, idleList);
    await server.stop();
    const itemsBefore = await tableItems();

    // The change: currency indexed. The migration runs in the background of this start.
    write(true);
    server = await startServer(engine.endpoint, dir);
    const operator2 = await sessionOf(server.target, OPERATOR);
    const busyCreate: number[] = [];
    const busyList: number[] = [];
    let status: { state: string; processed: number; total: number | null; added: number; startedAt: string | null; endedAt: string | null } | undefined;
    let running = true;
    const during = load(() => running, busyCreate, busyList);
    during.catch(() => undefined); // awaited below, once the migration ended
    try {
      for (;;) {
        const polled = await send(server.target, 'GET', '/api/v1/migrations', operator2);
        // (the status is not a measured request: one that times out is asked again a second later)
        if (polled.status !== 200) console.log(`  status: ${polled.status}`);
        else status = (polled.body.data as { entity: string }[]).find((s) => s.entity === slug) as typeof status;
        if (status && (status.state === 'done' || status.state === 'failed')) break;
        console.log(`  ${status?.processed ?? 0} of ${status?.total ?? '?'} records migrated (+${status?.added ?? 0} created during the pass)`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    } finally {
      running = false;
      await during;
    }
    const seconds = (Date.parse(status!.endedAt!) - Date.parse(status!.startedAt!)) / 1000;
    // The floor's bound: the pass's units (its records, the Scan pages over the whole table as it
    // ended, the counting pages) at the floor's rate.
    const met = status!.processed + status!.added;
    const units = met + Math.ceil((await tableItems()) / pageSize) + Math.ceil(itemsBefore / 1000);
    const bound = units / floor;

    // WRU of one record's migration transaction, as the runner builds it for this target.
    const state = (await readState(slug))!;
    const target = validateDefinition(definition(slug, true), 'bench');
    const sample: StoredRecord = { entity: slug, id: newRecordId(target.idFormat, base), tenantId: tenant.id, ownerId: tenant.admin.id, createdAt: new Date(base).toISOString(), updatedAt: new Date(base).toISOString(), version: 1, data: { title: 'Invoice 0', currency: 'USD', amount: 0 }, ix: [] };
    const wru = transactionWru(migrateTransaction(layoutOfState(state, target), { ...state, target: { ...state.target, legacy: [] } }, sample));

    // A full walk of the new index by cursor: every USD record once, totals exact.
    const seen = new Set<string>();
    let duplicates = 0;
    const totals = new Set<number>();
    let cursor: string | null = null;
    do {
      const page: { body: any } = await ok(server.target, 'GET', `/api/v1/${slug}?currency=USD&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, session);
      for (const r of page.body.data) {
        if (seen.has(r.id)) duplicates += 1;
        seen.add(r.id);
      }
      totals.add(page.body.pagination.total);
      cursor = page.body.pagination.nextCursor;
    } while (cursor);
    const want = perCurrency.get('USD')!;
    const walkOk = seen.size === want && duplicates === 0 && totals.size === 1 && totals.has(want);

    // Idle again, after the migration: on a machine shared with other work, how far the idle
    // figure itself drifted while the migration ran (shown beside the targets, not judged).
    const afterCreate: number[] = [];
    const afterList: number[] = [];
    await load((round) => round < samples, afterCreate, afterList);
    const ac = summarize(afterCreate);
    const al = summarize(afterList);
    const ic = summarize(idleCreate);
    const bc = summarize(busyCreate);
    const il = summarize(idleList);
    const bl = summarize(busyList);
    return [
      { scenario, metric: 'state', value: status!.state, note: `${status!.processed} records processed of ${status!.total}, ${status!.added} created during the pass` },
      { scenario, metric: 'records per second', value: round(met / Math.max(seconds, 0.001), 0), unit: 'records/s', note: `${round(seconds, 1)} s; ${clients} client${clients === 1 ? '' : 's'} without a pause; 4 Scan segments, the adaptive pace (at most 32 records at once; MIGRATION_LATENCY_TOLERANCE ${process.env.MIGRATION_LATENCY_TOLERANCE ?? 'default'}), DynamoDB Local` },
      floor > 0
        ? { scenario, metric: 'duration / floor\'s bound', value: `${round(seconds, 1)} / ${round(bound, 1)}`, unit: 's', target: 'within the bound', pass: seconds <= bound, note: `${units} units (records, Scan pages) at MIGRATION_FLOOR_PER_SECOND ${floor}` }
        : { scenario, metric: 'duration / floor\'s bound', value: `${round(seconds, 1)} / none`, unit: 's', note: `MIGRATION_FLOOR_PER_SECOND 0: no floor, no bound (${units} units)` },
      { scenario, metric: 'WRU per record', value: wru, unit: 'WRU', note: 'record item + copy in the new partition + its counter, transactional (2 WRU per KB per item)' },
      { scenario, metric: 'CREATE p99 during / idle', value: `${round(bc.p99, 1)} / ${round(ic.p99, 1)}`, unit: 'ms', target: '≤ 2×', pass: bc.p99 <= 2 * ic.p99, note: `${bc.n} / ${ic.n} samples; idle after the migration ${round(ac.p99, 1)} ms` },
      { scenario, metric: 'LIST p99 during / idle', value: `${round(bl.p99, 1)} / ${round(il.p99, 1)}`, unit: 'ms', target: '≤ 2×', pass: bl.p99 <= 2 * il.p99, note: `${bl.n} / ${il.n} samples; idle after the migration ${round(al.p99, 1)} ms` },
      { scenario, metric: 'full walk of ?currency=USD after', value: `${seen.size} of ${want}`, target: 'each once, exact totals', pass: walkOk, note: `${duplicates} duplicates; totals seen ${[...totals].join(', ')}` },
    ];
  } finally {
    await server?.stop();
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
