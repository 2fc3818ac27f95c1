/**
 * Consumed capacity per operation, over HTTP on the local runtime (DynamoDB Local), recorded
 * through the SDK: the DynamoDB client's capacity listener (shared/data/client.ts, the same
 * recording behind X-Request-Cost) sees ReturnConsumedCapacity of every call, and transactions
 * are billed as DynamoDB bills them (bench/billing.ts: 2 WRU per KB of each item). Priced at
 * on-demand rates: $0.625 per million WRU, $0.125 per million RRU.
 *
 * Each operation is measured twice, on fresh tenants, keys and users: "before" with one
 * rate-limit write per request and no session cache (RATE_LIMIT_LEASE_BLOCK=1,
 * SESSION_CACHE_SECONDS=0), "after" with the defaults. Limits are the deployment defaults
 * (1,000 per hour per key, 100 per session user), so the lease blocks are those a real caller
 * gets. Reads and single writes are averaged over several requests (a lease is taken every k).
 * The table is printed and written to bench/results/capacity.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resetConfig } from '../../shared/config.js';
import { whileRecording, storedItemLookup, type StoredItemLookup } from '../billing.js';
import { ok, sessionOf, tenantKey } from '../http.js';
import { round } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';

export const order = 90;

const WRU_PRICE = 0.625;
const RRU_PRICE = 0.125;
const V1 = '/api/v1';
/** 2,000 characters of ordinary text. */
const LONG_DESCRIPTION = 'A long task description of the capacity benchmark, written out in full. '.repeat(28).slice(0, 2000);

// ---------- recording ----------

interface Tally {
  calls: Map<string, number>;
  rru: number;
  wru: number;
}

let stored: StoredItemLookup | undefined;

/** Runs `work`, recording every DynamoDB call's capacity (transactions billed as DynamoDB bills them). */
async function recorded(work: () => Promise<void>): Promise<Tally> {
  const tally: Tally = { calls: new Map(), rru: 0, wru: 0 };
  await whileRecording(
    stored!,
    (call) => {
      tally.calls.set(call.operation, (tally.calls.get(call.operation) ?? 0) + 1);
      tally.rru += call.rcu;
      tally.wru += call.wcu;
    },
    work,
  );
  return tally;
}

interface Fixture {
  key: Record<string, string>;
  session: Record<string, string>;
  userId: string;
  tagIds: string[];
  taskIds: string[];
  /** Tasks with a 2,000-character description, priority low (the only ones): listed, 0–9 retitled, 10–19 edited. */
  longIds: string[];
  /** Orders of a customer with a total (a summed field): 0–9 get a new total, 10–19 the same one. */
  orderIds: string[];
}

/**
 * A fresh tenant, its admin's session and API key, 2 tags, 40 tasks (0–19 read, and 0–9 of them
 * also get a status update; 20–29 retitled; 30–39 deleted), and before them 20 tasks with a
 * 2,000-character description and priority low; then 25 products and 20 orders of one customer.
 */
async function fixture(runtime: LocalRuntime, label: string): Promise<Fixture> {
  const operator = await sessionOf(runtime, runtime.admin);
  const { key, session, adminId } = await tenantKey(runtime, operator, 'Capacity', label);
  const tagIds: string[] = [];
  for (const name of ['red', 'blue']) tagIds.push((await ok(runtime, 'POST', `${V1}/tags`, key, { name })).body.data.id);
  // Created first: the page 1 of every task is short tasks only.
  const longIds: string[] = [];
  for (let i = 0; i < 20; i++) longIds.push((await ok(runtime, 'POST', `${V1}/tasks`, key, { title: `Long task ${i}`, description: LONG_DESCRIPTION, priority: 'low' })).body.data.id);
  const taskIds: string[] = [];
  for (let i = 0; i < 40; i++) taskIds.push((await ok(runtime, 'POST', `${V1}/tasks`, key, { title: `Capacity task ${i}`, description: 'A task of the capacity benchmark' })).body.data.id);
  // A public entity's page 1 (products: writeShards 'auto', on 1 shard while its writes are light).
  for (let i = 0; i < 25; i++) await ok(runtime, 'POST', `${V1}/products`, key, { name: `Capacity product ${i}`, price: i, category: `category-${i % 5}`, description: 'A product of the capacity benchmark' });
  const orderIds: string[] = [];
  for (let i = 0; i < 20; i++) orderIds.push((await ok(runtime, 'POST', `${V1}/orders`, key, { customerId: 'cus_capacity', status: 'paid', total: 10 })).body.data.id);
  return { key, session, userId: adminId, tagIds, taskIds, longIds, orderIds };
}

interface Operation {
  name: string;
  /** Requests averaged over. */
  repeat: number;
  run: (f: Fixture, i: number) => Promise<unknown>;
}

function operations(runtime: LocalRuntime): Operation[] {
  const go = (method: string, path: string, headers: Record<string, string>, body?: unknown) => ok(runtime, method, path, headers, body);
  return [
    { name: 'GET a task', repeat: 20, run: (f, i) => go('GET', `${V1}/tasks/${f.taskIds[i % 20]}`, f.key) },
    { name: 'LIST tasks page 1', repeat: 20, run: (f) => go('GET', `${V1}/tasks?limit=20`, f.key) },
    { name: 'LIST products page 1 (public, 1 write shard)', repeat: 20, run: (f) => go('GET', `${V1}/products?limit=20`, f.key) },
    { name: 'LIST page 1 of long-description tasks (priority=low, 20)', repeat: 10, run: (f) => go('GET', `${V1}/tasks?priority=low&limit=20`, f.key) },
    { name: 'CREATE a task', repeat: 10, run: (f, i) => go('POST', `${V1}/tasks`, f.key, { title: `Created ${i}`, description: 'A task of the capacity benchmark' }) },
    { name: 'CREATE a task with assignee and 2 tags', repeat: 10, run: (f, i) => go('POST', `${V1}/tasks`, f.key, { title: `Assigned ${i}`, assigneeId: f.userId, tagIds: f.tagIds }) },
    {
      name: 'CREATE a task with a 2,000-character description',
      repeat: 10,
      run: (f, i) => go('POST', `${V1}/tasks`, f.key, { title: `Long ${i}`, description: LONG_DESCRIPTION }),
    },
    { name: "UPDATE a task's title", repeat: 10, run: (f, i) => go('PATCH', `${V1}/tasks/${f.taskIds[20 + i]}`, f.key, { title: `Retitled ${i}` }) },
    { name: "UPDATE a long-description task's title", repeat: 10, run: (f, i) => go('PATCH', `${V1}/tasks/${f.longIds[i]}`, f.key, { title: `Retitled long ${i}` }) },
    {
      name: "UPDATE a long-description task's description",
      repeat: 10,
      run: (f, i) => go('PATCH', `${V1}/tasks/${f.longIds[10 + i]}`, f.key, { description: `${LONG_DESCRIPTION.slice(0, 1990)} edited ${i}` }),
    },
    { name: "UPDATE an order's total (a summed field)", repeat: 10, run: (f, i) => go('PATCH', `${V1}/orders/${f.orderIds[i]}`, f.key, { total: 20 + i }) },
    { name: "UPDATE an order's total to the value it has", repeat: 10, run: (f, i) => go('PATCH', `${V1}/orders/${f.orderIds[10 + i]}`, f.key, { total: 10 }) },
    { name: "UPDATE a task's status", repeat: 10, run: (f, i) => go('PATCH', `${V1}/tasks/${f.taskIds[i]}`, f.key, { status: 'completed' }) },
    { name: 'DELETE a task', repeat: 10, run: (f, i) => go('DELETE', `${V1}/tasks/${f.taskIds[30 + i]}`, f.key) },
    {
      name: 'IMPORT 100 tasks',
      repeat: 1,
      run: (f) => go('POST', `${V1}/import/tasks`, f.key, { tasks: Array.from({ length: 100 }, (_, i) => ({ title: `Imported ${i}`, status: ['todo', 'in_progress', 'completed'][i % 3] })) }),
    },
    {
      name: 'BATCH of 20 GETs',
      repeat: 2,
      run: (f) => go('POST', `${V1}/batch`, f.key, { requests: f.taskIds.slice(0, 20).map((id, n) => ({ id: `get-${n}`, method: 'GET', path: `/tasks/${id}` })) }),
    },
    // A task retitled and its status changed above: 3 revisions (2,000-character ones: 2).
    { name: "GET a task's revisions (a page)", repeat: 10, run: (f, i) => go('GET', `${V1}/tasks/${f.taskIds[i]}/revisions`, f.key) },
    { name: "GET a long-description task's revisions (a page)", repeat: 10, run: (f, i) => go('GET', `${V1}/tasks/${f.longIds[i]}/revisions`, f.key) },
    { name: 'GET the deleted tasks (a page of 10)', repeat: 10, run: (f) => go('GET', `${V1}/tasks/deleted?limit=10`, f.key) },
    { name: 'a warm session request (GET a task)', repeat: 20, run: (f, i) => go('GET', `${V1}/tasks/${f.taskIds[i % 20]}`, f.session) },
  ];
}

interface Measured {
  name: string;
  requests: string;
  rru: number;
  wru: number;
  dollars: number;
}

function describeCalls(calls: Map<string, number>, per: number): string {
  return [...calls].map(([name, n]) => `${name} ×${round(n / per, 2)}`).join(' + ') || 'none';
}

async function measureAll(runtime: LocalRuntime, label: string, env: Record<string, string>): Promise<Measured[]> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  resetConfig();
  try {
    const f = await fixture(runtime, label);
    // Warm: the key's cache, the session's cache, every family's module.
    await ok(runtime, 'GET', `${V1}/tasks/${f.taskIds[0]}`, f.key);
    await ok(runtime, 'GET', `${V1}/tasks/${f.taskIds[0]}`, f.session);
    await ok(runtime, 'POST', `${V1}/batch`, f.key, { requests: [{ id: 'warm', method: 'GET', path: `/tasks/${f.taskIds[0]}` }] });
    const out: Measured[] = [];
    for (const op of operations(runtime)) {
      const tally = await recorded(async () => {
        for (let i = 0; i < op.repeat; i++) await op.run(f, i);
      });
      const rru = tally.rru / op.repeat;
      const wru = tally.wru / op.repeat;
      out.push({ name: op.name, requests: describeCalls(tally.calls, op.repeat), rru, wru, dollars: rru * RRU_PRICE + wru * WRU_PRICE });
    }
    return out;
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    resetConfig();
  }
}

function fmt(n: number): string {
  return n >= 100 ? n.toLocaleString('en-US', { maximumFractionDigits: 0 }) : String(round(n, 2));
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  stored = storedItemLookup(runtime.dynamoEndpoint);
  const limits = { RATE_LIMIT_API_KEY_PER_HOUR: '1000', RATE_LIMIT_SESSION_PER_HOUR: '100' };
  const before = await measureAll(runtime, 'before', { ...limits, RATE_LIMIT_LEASE_BLOCK: '1', SESSION_CACHE_SECONDS: '0' });
  const after = await measureAll(runtime, 'after', limits);

  const lines = [
    '| Operation | Requests (after) | RRU | WRU | $/million | Before: RRU | WRU | $/million |',
    '|---|---|---|---|---|---|---|---|',
    ...after.map((a, i) => {
      const b = before[i];
      return `| ${a.name} | ${a.requests} | ${fmt(a.rru)} | ${fmt(a.wru)} | ${fmt(a.dollars)} | ${fmt(b.rru)} | ${fmt(b.wru)} | ${fmt(b.dollars)} |`;
    }),
  ];
  const table = lines.join('\n');
  console.log(`\n${table}\n`);
  const outDir = join(fileURLToPath(new URL('..', import.meta.url)), 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'capacity.md'), `# Capacity per operation (npm run bench, BENCH_ONLY=capacity)\n\n${table}\n`);

  const scenario = 'capacity per request (HTTP, DynamoDB Local, transactions billed 2 WRU/KB/item)';
  return after.flatMap((a, i) => [
    { scenario, metric: `${a.name}: RRU / WRU`, value: `${fmt(a.rru)} / ${fmt(a.wru)}`, note: `${a.requests}; before: ${fmt(before[i].rru)} / ${fmt(before[i].wru)}` },
    { scenario, metric: `${a.name}: $ per million`, value: fmt(a.dollars), unit: '$', note: `before: ${fmt(before[i].dollars)}` },
  ]);
}
