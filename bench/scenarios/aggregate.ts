/**
 * Aggregates (GET /api/v1/{entity}/aggregate) over HTTP on the run's local runtime. N orders of
 * one tenant (status one of four, a total), created over 30 days, read by the tenant's admin: a
 * count, a count by status and a count of one status, a count and a sum of the total by status,
 * and a count per day over the 30 days (from counters, `meta.source: "counters"`), and the first
 * and last createdAt, in all and by status (from the listing order, `meta.source: "index"`). Each shape: the read units
 * of X-Request-Cost and the p50 of the request's time, at 10,000 orders
 * (BENCH_AGGREGATE_SIZES=10000,100000 adds the 100,000 case: minutes of seeding and of scans).
 * Orders, not tasks: tasks have no number field to sum.
 */
import { randomBytes } from 'node:crypto';
import { apiKeyOf, ok, send, sessionOf, type BenchTarget } from '../http.js';
import { seedRecords } from '../list-costs.js';
import { round, summarize } from '../stats.js';
import type { BenchContext, BenchRow } from '../types.js';

export const order = 45;

const STATUSES = ['pending', 'paid', 'shipped', 'cancelled'];
const DAYS = 30;
const DAY_MS = 86_400_000;

const SHAPES: { name: string; query: string }[] = [
  { name: 'count', query: 'count' },
  { name: 'count by status', query: 'count&groupBy=status' },
  { name: 'count of one status', query: 'count&status=paid' },
  { name: 'count and sum by status', query: 'count&sum=total&groupBy=status' },
  { name: `count per day over ${DAYS} days`, query: `count&interval=day&startDate=2025-01-01&endDate=2025-01-${DAYS}` },
  { name: 'first and last createdAt', query: 'min=createdAt&max=createdAt' },
  { name: 'count, first and last createdAt by status', query: 'count&min=createdAt&max=createdAt&groupBy=status' },
];

/** The read units an answer's X-Request-Cost reports (`rcu=12.5, wcu=0.0`). */
function readUnits(headers: Headers): number {
  const match = /rcu=([\d.]+)/.exec(headers.get('X-Request-Cost') ?? '');
  return match ? Number(match[1]) : Number.NaN;
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const local = await context.local();
  const sizes = (process.env.BENCH_AGGREGATE_SIZES ?? '10000')
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
  const operator = await sessionOf(local, local.admin);
  const rows: BenchRow[] = [];
  for (const size of sizes) {
    const admin = { email: `aggregate-${size}-${randomBytes(4).toString('hex')}@bench.local`, name: 'Aggregate bench', password: `pw-${randomBytes(8).toString('hex')}` };
    const tenant = (await ok(local, 'POST', '/api/v1/tenants', operator, { name: `Aggregates ${size}`, admin })).body.data as { id: string; admin: { id: string } };
    // Spread evenly over the 30 days from 2025-01-01, so that each day holds size / 30 orders.
    const seeded = await seedRecords('orders', size, (i) => ({ status: STATUSES[i % STATUSES.length], total: (i % 100) + 0.5 }), {
      owner: { tenantId: tenant.id, userId: tenant.admin.id },
      spacingMs: (DAYS * DAY_MS) / size,
    });
    console.log(`  seeded ${size} orders in ${seeded.seconds.toFixed(1)} s`);
    const { key } = await apiKeyOf(local, admin, `aggregate-${size}`);
    const rounds = Math.max(3, Math.round((size >= 100_000 ? 5 : 15) * context.scale));
    for (const shape of SHAPES) rows.push(...(await measure(local, key, size, shape, rounds)));
  }
  return rows;
}

async function measure(target: BenchTarget, key: Record<string, string>, size: number, shape: { name: string; query: string }, rounds: number): Promise<BenchRow[]> {
  const path = `/api/v1/orders/aggregate?${shape.query}`;
  const first = await send(target, 'GET', path, key);
  const scenario = `aggregate (${first.body?.meta?.source ?? 'refused'}): ${shape.name} @ ${size.toLocaleString('en-US')}`;
  if (first.status !== 200) {
    return [{ scenario, metric: 'status', value: first.status, note: `${first.body?.code ?? ''} ${first.body?.error ?? ''}`.trim() }];
  }
  const ms: number[] = [];
  const units: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const reply = await send(target, 'GET', path, key);
    ms.push(performance.now() - started);
    units.push(readUnits(reply.headers));
  }
  const groups = first.body.data as { count?: number }[];
  // A shape that asks no count (min and max alone) has none to report.
  const counted = groups.every((g) => typeof g.count === 'number') ? `, ${groups.reduce((n, g) => n + g.count!, 0).toLocaleString('en-US')} records counted` : '';
  const note = `${groups.length} groups${counted}, meta.source ${first.body.meta.source}; ${rounds} rounds after one warm-up`;
  return [
    { scenario, metric: 'read units (X-Request-Cost)', value: round(summarize(units).p50, 1), unit: 'RCU', note },
    { scenario, metric: 'p50', value: round(summarize(ms).p50, 0), unit: 'ms', note: `p99 ${round(summarize(ms).p99, 0)} ms` },
  ];
}
