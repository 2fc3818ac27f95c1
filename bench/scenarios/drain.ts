/**
 * Read-and-delete drains through HTTP (bench/drain.ts): for every order of bench/drain.ts's
 * DRAIN_ORDERS and each delete style (single DELETEs, 8 at a time, or one bulk DELETE per page),
 * a fresh user's partition is seeded with 1,000 tasks by import and drained by cursor with pages
 * of 50, deleting each page after reading it while a producer inserts records. Target: no record
 * lost, none returned twice.
 * DRAIN_COUNT (default 1,000 × BENCH_SCALE), DRAIN_MODES (`single,bulk`), DRAIN_LIMIT (50).
 */
import { randomBytes } from 'node:crypto';
import { drain, DRAIN_ORDERS, type DeleteMode, type DrainResult } from '../drain.js';
import { apiKeyOf, ok, sessionOf } from '../http.js';
import { round } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';

export const order = 60;
export const long = true;

/** A new user of the admin's tenant (so an empty partition of its own) and an API key of theirs. */
async function freshKey(runtime: LocalRuntime, admin: Record<string, string>): Promise<string> {
  const user = { email: `drain-${randomBytes(6).toString('hex')}@bench.local`, password: `pw-${randomBytes(10).toString('hex')}` };
  await ok(runtime, 'POST', '/api/v1/users', admin, { ...user, name: 'Drain worker', role: 'user' });
  return (await apiKeyOf(runtime, user, 'drain worker', ['read', 'write', 'delete'])).secret;
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const count = Number(process.env.DRAIN_COUNT ?? Math.max(100, Math.round(1000 * context.scale)));
  const limit = Number(process.env.DRAIN_LIMIT ?? 50);
  const modes = (process.env.DRAIN_MODES ?? 'single,bulk').split(',').map((m) => m.trim()).filter((m): m is DeleteMode => m === 'single' || m === 'bulk');
  const admin = await sessionOf(runtime, runtime.admin);

  const results: DrainResult[] = [];
  const rows: BenchRow[] = [];
  for (const mode of modes) {
    for (const order of DRAIN_ORDERS) {
      const apiKey = await freshKey(runtime, admin);
      const result = await drain({ baseUrl: runtime.url, apiKey, order, count, mode, limit });
      results.push(result);
      rows.push({
        scenario: `drain: ${count.toLocaleString('en-US')} tasks, ${mode === 'bulk' ? 'bulk DELETE' : 'single DELETEs'} per page of ${limit}, ${order.name}`,
        metric: 'lost',
        value: result.lost,
        target: '0',
        pass: result.lost === 0,
        note: `${result.expected} matching; ${result.duplicates} duplicates, ${result.unexpected} not matching; ${result.pages} pages in ${round(result.drainMs / 1000, 1)} s (${round(result.drainMs / result.pages, 0)} ms per page with its deletes and the producer's inserts); ${result.inserted} inserted meanwhile; seeded in ${round(result.seedMs / 1000, 1)} s${result.lost ? `; lost e.g. ${result.lostExamples.join(', ')}` : ''}`,
      });
      console.log(`  ${mode} · ${order.name}: lost ${result.lost}, duplicates ${result.duplicates}, unexpected ${result.unexpected}, ${result.pages} pages, ${round(result.drainMs / 1000, 1)} s`);
    }
  }
  const sum = (pick: (r: DrainResult) => number) => results.reduce((s, r) => s + pick(r), 0);
  const scenario = `drain: all ${results.length} drains (${DRAIN_ORDERS.length} orders × ${modes.join(' and ')} deletes, ${count.toLocaleString('en-US')} tasks each)`;
  rows.push(
    { scenario, metric: 'records lost', value: sum((r) => r.lost), target: '0', pass: sum((r) => r.lost) === 0, note: `of ${sum((r) => r.expected).toLocaleString('en-US')} matching records` },
    { scenario, metric: 'duplicates', value: sum((r) => r.duplicates), target: '0', pass: sum((r) => r.duplicates) === 0 },
    { scenario, metric: 'records returned that do not match', value: sum((r) => r.unexpected), target: '0', pass: sum((r) => r.unexpected) === 0 },
    { scenario, metric: 'pages', value: sum((r) => r.pages), note: `drain time ${round(sum((r) => r.drainMs) / 1000, 1)} s in all, seeding ${round(sum((r) => r.seedMs) / 1000, 1)} s` },
  );
  return rows;
}
