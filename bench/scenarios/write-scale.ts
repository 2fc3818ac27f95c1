/**
 * Write scale: which partition key takes the writes of an entity's creates, and so how many
 * creates per second one entity takes before DynamoDB throttles that key (1,000 WCU/s per
 * partition key). Over HTTP on the local runtime (DynamoDB Local), every write of the records
 * and events tables is billed as DynamoDB bills it (bench/billing.ts) and attributed to its
 * table and partition key (bench/partition-load.ts).
 *
 * Cases, each on fresh tenants: 300 single creates (BENCH_WRITE_SCALE_RECORDS), then as many
 * records imported 100 at a time, of
 * products (public, spread over 3 tenants), tasks (private, one tenant), sharded-products
 * (bench/entities/: products with `writeShards: 16`, 3 tenants) and page-cost-32 (products
 * pinned at 32, the most the controller splits to, 3 tenants). After the creates, the RCU of
 * LIST page 1 (default limit) of each entity; then the WCU of each write of a task with a
 * 300-character description (create, title update, status update, delete). Last, the read units
 * of LIST page 1 and of a cursor page (limit 20) by write shards, 1 to 32: the page-cost entities
 * (bench/entities/page-cost-<N>.ts, products pinned at N shards, 100 records each; 16 and 32:
 * the cases' entities, with the cases' records).
 *
 * The sharded entity is loaded through ENTITIES_DIR, which must be set before the run starts the
 * local runtime (the registry is loaded once per process): this module sets it when it is
 * imported, only when BENCH_ONLY selects this file (so other scenarios run on the shipped
 * registry) and only when the registry accepts the definition; otherwise that entity's cases are
 * skipped with a printed reason. The table is printed and written to bench/results/write-scale.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tableName } from '../../shared/data/client.js';
import { ENTITIES_DIR_ENV, validateDefinition } from '../../shared/registry/index.js';
import { whileRecording, storedItemLookup, type ItemWrite, type StoredItemLookup } from '../billing.js';
import pageCost32 from '../entities/page-cost-32.js';
import shardedProducts from '../entities/sharded-products.js';
import { ok, sessionOf, tenantKey } from '../http.js';
import { ceiling, KeyLoad, summarizeLoad, type LoadSummary } from '../partition-load.js';
import { pool, round } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';

export const order = 91;

const V1 = '/api/v1';
/** Records per case (BENCH_WRITE_SCALE_RECORDS, default 300; a multiple of IMPORT_SIZE): the sample the busiest key is found in. */
const RECORDS = Math.max(100, Math.round(Number(process.env.BENCH_WRITE_SCALE_RECORDS ?? 300) / 100) * 100 || 300);
const IMPORT_SIZE = 100;
/** Concurrent creates: enough to keep the run short, few enough for the 2-core machine. */
const WIDTH = 4;
/** A task description of 300 characters. */
const DESCRIPTION_300 = 'A task description of the write-scale benchmark, of ordinary words. '.repeat(5).slice(0, 300);
const SCENARIO = 'write-scale (HTTP, DynamoDB Local, WCU per partition key)';

/** Write shards whose LIST page costs are measured (bench/entities/page-cost-<N>.ts; 16: sharded-products). */
const PAGE_COST_SHARDS = [1, 2, 4, 8, 16, 32];
const PAGE_COST_RECORDS = 100;

// ---------- the sharded entity (decided at import, before the run starts the local runtime) ----------

const benchEntitiesDir = fileURLToPath(new URL('../entities/', import.meta.url));

/** Why the sharded entity is not loaded, or undefined when it is. */
const shardedSkipped = ((): string | undefined => {
  const only = process.env.BENCH_ONLY;
  if (!only || !'write-scale.ts'.includes(only)) return 'only with BENCH_ONLY=write-scale (its entity would join the registry of every other scenario)';
  const dir = process.env[ENTITIES_DIR_ENV];
  if (dir && dir !== benchEntitiesDir) return `${ENTITIES_DIR_ENV} is already set (${dir}); the bench's entity directory cannot be added`;
  try {
    validateDefinition(structuredClone(shardedProducts), join(benchEntitiesDir, 'sharded-products.ts'));
    for (const n of PAGE_COST_SHARDS) if (n !== shardedProducts.writeShards) validateDefinition({ ...structuredClone(shardedProducts), slug: `page-cost-${n}`, tableName: `page_cost_${n}`, writeShards: n }, `page-cost-${n}.ts`);
  } catch (error) {
    return `the registry refuses its definition (${(error as Error).message})`;
  }
  process.env[ENTITIES_DIR_ENV] = benchEntitiesDir;
  return undefined;
})();

// ---------- the entities and what they are sent ----------

interface Subject {
  slug: string;
  tableName: string;
  /** Tenants the records are spread over (round robin). */
  tenants: number;
  /** Keys a listing partition is spread over. */
  shards: number;
  note: string;
  create(i: number): Record<string, unknown>;
  importBody(items: Record<string, unknown>[]): Record<string, unknown>;
  /** Records an import reply says were written. */
  imported(data: any): number;
}

const product = (i: number) => ({ name: `Write-scale product ${i}`, price: i % 100, category: `category-${i % 10}`, description: 'A product of the write-scale benchmark' });

const SUBJECTS: Subject[] = [
  {
    slug: 'products',
    tableName: 'products',
    tenants: 3,
    shards: 1,
    note: 'public, 3 tenants',
    create: product,
    importBody: (items) => ({ items }),
    imported: (data) => data.created,
  },
  {
    slug: 'tasks',
    tableName: 'tasks',
    tenants: 1,
    shards: 1,
    note: 'private, 1 tenant',
    create: (i) => ({ title: `Write-scale task ${i}`, description: 'A task of the write-scale benchmark' }),
    // notify off, the tasks import's default: no change events.
    importBody: (tasks) => ({ tasks }),
    imported: (data) => data.imported,
  },
  {
    slug: shardedProducts.slug,
    tableName: shardedProducts.tableName,
    tenants: 3,
    shards: shardedProducts.writeShards,
    note: `public, writeShards ${shardedProducts.writeShards}, 3 tenants`,
    create: product,
    importBody: (items) => ({ items }),
    imported: (data) => data.created,
  },
  {
    // The most the controller splits an entity into.
    slug: pageCost32.slug,
    tableName: pageCost32.tableName,
    tenants: 3,
    shards: pageCost32.writeShards,
    note: `public, writeShards ${pageCost32.writeShards}, 3 tenants`,
    create: product,
    importBody: (items) => ({ items }),
    imported: (data) => data.created,
  },
];

// ---------- recording ----------

let stored: StoredItemLookup | undefined;

interface Recorded {
  load: KeyLoad;
  rcu: number;
  /** WRU on the records and events tables. */
  wcu: number;
}

/** Runs `work`, adding every write of the records and events tables to a KeyLoad (and every read's RCU). */
async function recorded(work: () => Promise<void>): Promise<Recorded> {
  const tables = { records: tableName('records'), events: tableName('events'), history: tableName('history') };
  const result: Recorded = { load: new KeyLoad(), rcu: 0, wcu: 0 };
  const counted = (writes: ItemWrite[]) => writes.filter((w) => w.table === tables.records || w.table === tables.events);
  await whileRecording(
    stored!,
    (call) => {
      result.rcu += call.rcu;
      result.load.add(call.writes, tables);
      result.wcu += counted(call.writes).reduce((n, w) => n + w.wru, 0);
    },
    work,
  );
  return result;
}

// ---------- the cases ----------

interface CaseResult {
  name: string;
  summary?: LoadSummary;
  listRcu?: number;
  skipped?: string;
}

async function tenantsFor(runtime: LocalRuntime, operator: Record<string, string>, count: number, label: string): Promise<Record<string, string>[]> {
  const keys: Record<string, string>[] = [];
  for (let t = 0; t < count; t++) keys.push((await tenantKey(runtime, operator, 'WriteScale', `${label}-${t}`)).key);
  return keys;
}

async function singleCreates(runtime: LocalRuntime, operator: Record<string, string>, subject: Subject): Promise<CaseResult> {
  const keys = await tenantsFor(runtime, operator, subject.tenants, `${subject.slug}-creates`);
  // Warm: the keys' caches and the entities family.
  for (const key of keys) await ok(runtime, 'GET', `${V1}/${subject.slug}?limit=1`, key);
  const indexes = Array.from({ length: RECORDS }, (_, i) => i);
  const { load } = await recorded(() =>
    pool(indexes, WIDTH, async (i) => {
      await ok(runtime, 'POST', `${V1}/${subject.slug}`, keys[i % keys.length], subject.create(i));
    }),
  );
  const list = `${V1}/${subject.slug}`;
  await ok(runtime, 'GET', list, keys[0]);
  const repeat = 3;
  const reads = await recorded(async () => {
    for (let i = 0; i < repeat; i++) await ok(runtime, 'GET', list, keys[0]);
  });
  return { name: `${subject.slug}: ${RECORDS} single creates (${subject.note})`, summary: summarizeLoad(load, RECORDS, subject.tableName, subject.shards), listRcu: reads.rcu / repeat };
}

async function imports(runtime: LocalRuntime, operator: Record<string, string>, subject: Subject): Promise<CaseResult> {
  const keys = await tenantsFor(runtime, operator, subject.tenants, `${subject.slug}-imports`);
  for (const key of keys) await ok(runtime, 'GET', `${V1}/${subject.slug}?limit=1`, key);
  const path = `${V1}/import/${subject.slug}`;
  let written = 0;
  const { load } = await recorded(async () => {
    for (let n = 0; n < RECORDS / IMPORT_SIZE; n++) {
      const items = Array.from({ length: IMPORT_SIZE }, (_, i) => subject.create(n * IMPORT_SIZE + i));
      const reply = await ok(runtime, 'POST', path, keys[n % keys.length], subject.importBody(items));
      written += subject.imported(reply.body.data);
    }
  });
  if (written !== RECORDS) throw new Error(`${subject.slug}: imports wrote ${written} records, not ${RECORDS}`);
  const tasksNote = subject.slug === 'tasks' ? ', notify off' : '';
  return { name: `${subject.slug}: ${RECORDS} imported, ${IMPORT_SIZE} per import (${subject.note}${tasksNote})`, summary: summarizeLoad(load, RECORDS, subject.tableName, subject.shards) };
}

interface TaskWrite {
  name: string;
  wcu: number;
}

/** WCU (records and events tables) of each write of a task with a 300-character description, averaged over 5 tasks. */
async function taskWrites(runtime: LocalRuntime, operator: Record<string, string>): Promise<TaskWrite[]> {
  const [key] = await tenantsFor(runtime, operator, 1, 'task-writes');
  await ok(runtime, 'GET', `${V1}/tasks?limit=1`, key);
  const count = 5;
  const ids: string[] = [];
  const operations: { name: string; run: (i: number) => Promise<unknown> }[] = [
    {
      name: 'CREATE',
      run: async (i) => ids.push((await ok(runtime, 'POST', `${V1}/tasks`, key, { title: `Write-scale task ${i}`, description: DESCRIPTION_300 })).body.data.id),
    },
    { name: 'UPDATE title (PATCH)', run: (i) => ok(runtime, 'PATCH', `${V1}/tasks/${ids[i]}`, key, { title: `Retitled task ${i}` }) },
    { name: 'UPDATE status (PATCH)', run: (i) => ok(runtime, 'PATCH', `${V1}/tasks/${ids[i]}`, key, { status: 'in_progress' }) },
    { name: 'DELETE', run: (i) => ok(runtime, 'DELETE', `${V1}/tasks/${ids[i]}`, key) },
  ];
  const out: TaskWrite[] = [];
  for (const operation of operations) {
    const { wcu } = await recorded(async () => {
      for (let i = 0; i < count; i++) await operation.run(i);
    });
    out.push({ name: operation.name, wcu: wcu / count });
  }
  return out;
}

interface PageCost {
  shards: number;
  page1: number;
  cursor: number;
}

/** RCU of LIST page 1 and of the page after its cursor (limit 20), per write-shard count, averaged over 3 each. */
async function pageCosts(runtime: LocalRuntime, operator: Record<string, string>): Promise<PageCost[]> {
  const [key] = await tenantsFor(runtime, operator, 1, 'page-costs');
  const out: PageCost[] = [];
  for (const shards of PAGE_COST_SHARDS) {
    const slug = shards === shardedProducts.writeShards ? shardedProducts.slug : `page-cost-${shards}`;
    // The cases' entities hold their records already.
    if (!SUBJECTS.some((s) => s.slug === slug)) await pool(Array.from({ length: PAGE_COST_RECORDS }, (_, i) => i), WIDTH, async (i) => {
        await ok(runtime, 'POST', `${V1}/${slug}`, key, product(i));
      });
    const list = `${V1}/${slug}?limit=20`;
    const first = await ok(runtime, 'GET', list, key);
    const cursor = first.body.pagination.nextCursor as string;
    const repeat = 3;
    const page1 = await recorded(async () => {
      for (let i = 0; i < repeat; i++) await ok(runtime, 'GET', list, key);
    });
    const next = await recorded(async () => {
      for (let i = 0; i < repeat; i++) await ok(runtime, 'GET', `${list}&cursor=${encodeURIComponent(cursor)}`, key);
    });
    out.push({ shards, page1: page1.rcu / repeat, cursor: next.rcu / repeat });
  }
  return out;
}

// ---------- output ----------

function fmt(n: number | undefined, digits = 2): string {
  if (n === undefined) return '—';
  if (!Number.isFinite(n)) return '∞';
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : String(round(n, digits));
}

const CASE_COLUMNS = [
  'Case',
  'WCU / record (all keys)',
  'Hottest key',
  'its WCU / record',
  'Ceiling at 1,000 WCU/s: records/s',
  'Hottest listing key',
  'its WCU / record',
  'Keys of its partition',
  'Mean WCU / record per other key',
  'Ceiling at the mean: records/s',
  'LIST page 1 RCU',
];

function caseCells(c: CaseResult): string[] {
  if (!c.summary) return [c.name, `skipped: ${c.skipped}`, ...CASE_COLUMNS.slice(2).map(() => '')];
  const s = c.summary;
  const l = s.hottestListing;
  return [
    c.name,
    fmt(s.wcuPerRecord),
    `\`${s.hottest.key}\``,
    fmt(s.hottest.wcuPerRecord),
    fmt(ceiling(s.hottest.wcuPerRecord)),
    l ? `\`${l.key}\`` : '—',
    fmt(l?.wcuPerRecord),
    l ? String(l.keys) : '—',
    fmt(l?.meanWcuPerRecord),
    l ? fmt(ceiling(l.meanWcuPerRecord)) : '—',
    fmt(c.listRcu),
  ];
}

function markdownRow(cells: readonly string[]): string {
  return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
}

function tables(cases: CaseResult[], writes: TaskWrite[], pages: PageCost[]): string {
  return [
    markdownRow(CASE_COLUMNS),
    markdownRow(CASE_COLUMNS.map(() => '---')),
    ...cases.map((c) => markdownRow(caseCells(c))),
    '',
    markdownRow(['Write of a task with a 300-character description', 'WCU (records and events tables)']),
    markdownRow(['---', '---']),
    ...writes.map((w) => markdownRow([w.name, fmt(w.wcu)])),
    ...(pages.length
      ? ['', markdownRow(['Write shards', ...pages.map((p) => String(p.shards))]), markdownRow(['---', ...pages.map(() => '---')]), markdownRow(['LIST page 1 RCU (limit 20)', ...pages.map((p) => fmt(p.page1))]), markdownRow(['cursor page RCU', ...pages.map((p) => fmt(p.cursor))])]
      : []),
  ].join('\n');
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  stored = storedItemLookup(runtime.dynamoEndpoint);
  const operator = await sessionOf(runtime, runtime.admin);
  if (shardedSkipped) console.log(`  write-scale: ${shardedProducts.slug} (writeShards ${shardedProducts.writeShards}) skipped: ${shardedSkipped}`);

  const cases: CaseResult[] = [];
  for (const kind of ['creates', 'imports'] as const) {
    for (const subject of SUBJECTS) {
      if (subject.shards > 1 && shardedSkipped) {
        cases.push({ name: `${subject.slug}: ${RECORDS} ${kind === 'creates' ? 'single creates' : 'imported'} (${subject.note})`, skipped: shardedSkipped });
        continue;
      }
      cases.push(kind === 'creates' ? await singleCreates(runtime, operator, subject) : await imports(runtime, operator, subject));
    }
  }
  const writes = await taskWrites(runtime, operator);
  const pages = shardedSkipped ? [] : await pageCosts(runtime, operator);

  const table = tables(cases, writes, pages);
  console.log(`\n${table}\n`);
  const outDir = join(fileURLToPath(new URL('..', import.meta.url)), 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, 'write-scale.md'),
    `# Write capacity per partition key (npm run bench, BENCH_ONLY=write-scale)\n\n${new Date().toISOString()}; ceilings at ${fmt(1000)} WCU/s per partition key.\n\n${table}\n`,
  );

  const rows: BenchRow[] = [];
  for (const c of cases) {
    if (!c.summary) {
      rows.push({ scenario: SCENARIO, metric: c.name, value: 'skipped', note: c.skipped });
      continue;
    }
    const s = c.summary;
    const l = s.hottestListing;
    rows.push({ scenario: SCENARIO, metric: `${c.name}: WCU per record`, value: fmt(s.wcuPerRecord), unit: 'WCU' });
    rows.push({ scenario: SCENARIO, metric: `${c.name}: hottest key ceiling`, value: fmt(ceiling(s.hottest.wcuPerRecord)), unit: 'records/s', note: `${s.hottest.key}: ${fmt(s.hottest.wcuPerRecord)} WCU per record` });
    if (l) {
      rows.push({
        scenario: SCENARIO,
        metric: `${c.name}: mean listing key ceiling`,
        value: fmt(ceiling(l.meanWcuPerRecord)),
        unit: 'records/s',
        note: `${l.keys} key(s) of ${l.key}'s partition: ${fmt(l.meanWcuPerRecord)} WCU per record each (hottest ${fmt(l.wcuPerRecord)})`,
      });
    }
    if (c.listRcu !== undefined) rows.push({ scenario: SCENARIO, metric: `${c.name}: LIST page 1`, value: fmt(c.listRcu), unit: 'RCU' });
  }
  for (const w of writes) rows.push({ scenario: SCENARIO, metric: `task with a 300-character description: ${w.name}`, value: fmt(w.wcu), unit: 'WCU' });
  for (const p of pages) {
    rows.push({ scenario: SCENARIO, metric: `LIST page 1 at ${p.shards} write shard${p.shards === 1 ? '' : 's'}`, value: fmt(p.page1), unit: 'RCU' });
    rows.push({ scenario: SCENARIO, metric: `cursor page at ${p.shards} write shard${p.shards === 1 ? '' : 's'}`, value: fmt(p.cursor), unit: 'RCU' });
  }
  return rows;
}
