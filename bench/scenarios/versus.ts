/**
 * This checkout against another commit (BENCH_VERSUS, default 7baa351: the commit before entity
 * migrations and write shards), same data, alternating rounds (bench/versus.ts): READ of a task by
 * id and LIST of tasks page 1 at 8 concurrent clients, and `npm start` on an existing DATA_DIR
 * until healthy. Targets: READ and LIST at least 0.95× the other commit's requests per second
 * (the median of the rounds' ratios), a start no slower than the other's (medians).
 *
 * BENCH_VERSUS_ROUNDS (default 8) rounds of BENCH_VERSUS_REQUESTS (default 2,000) requests per
 * server and kind; BENCH_VERSUS_RECORDS (default 2,000) tasks and as many products in each.
 * Needs git and the npm registry the first time (the other commit's checkout is installed once).
 */
import { adminKey, call, checkoutOf, destroyAgent, freshDataDir, removeDataDir, round, startAt, stopServer, type RoundResult, type VersusServer } from '../versus.js';
import { round as digits } from '../stats.js';
import type { BenchRow } from '../types.js';
import { fileURLToPath } from 'node:url';

export const order = 290;
export const long = true;
export const usesLocal = false;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONCURRENCY = 8;

interface Side {
  server: VersusServer;
  headers: Record<string, string>;
  taskIds: string[];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `count` tasks and as many products, imported 100 a request; the tasks' ids. */
async function seed(side: Side, count: number): Promise<void> {
  const { url } = side.server;
  for (let i = 0; i < count; i += 100) {
    const n = Math.min(100, count - i);
    const tasks = Array.from({ length: n }, (_, j) => ({
      title: `Task ${i + j}`,
      description: `A task of the comparison, number ${i + j}. `.repeat(6),
      status: ['todo', 'in_progress', 'completed'][(i + j) % 3],
      priority: ['low', 'medium', 'high'][(i + j) % 3],
    }));
    const imported = await call(url, 'POST', '/api/v1/import/tasks', { ...side.headers, 'accept-encoding': 'identity' }, { tasks });
    if (imported.status !== 201) throw new Error(`${side.server.label}: import of tasks answered ${imported.status} ${imported.body.slice(0, 300)}`);
    side.taskIds.push(...(JSON.parse(imported.body) as { data: { tasks: { id: string }[] } }).data.tasks.map((t) => t.id));
    const items = Array.from({ length: n }, (_, j) => ({ name: `Product ${i + j}`, price: (i + j) % 500, status: (i + j) % 4 ? 'active' : 'inactive', category: `c${(i + j) % 7}` }));
    const products = await call(url, 'POST', '/api/v1/import/products', { ...side.headers, 'accept-encoding': 'identity' }, { items });
    if (products.status !== 201) throw new Error(`${side.server.label}: import of products answered ${products.status} ${products.body.slice(0, 300)}`);
  }
}

export async function run(): Promise<BenchRow[]> {
  const commit = process.env.BENCH_VERSUS || '7baa351';
  const rounds = Number(process.env.BENCH_VERSUS_ROUNDS ?? 8) || 8;
  const requests = Number(process.env.BENCH_VERSUS_REQUESTS ?? 2000) || 2000;
  const records = Number(process.env.BENCH_VERSUS_RECORDS ?? 2000) || 2000;
  const log = (line: string) => console.log(`  versus: ${line}`);
  const other = checkoutOf(commit, log);
  const dirs = { here: freshDataDir('here'), other: freshDataDir('other') };
  const sides: Side[] = [];
  try {
    for (const [label, dir, dataDir] of [['this checkout', ROOT, dirs.here], [commit, other, dirs.other]] as const) {
      const server = await startAt(label, dir, dataDir);
      const side: Side = { server, headers: await adminKey(server.url), taskIds: [] };
      log(`${label}: seeding ${records} tasks and ${records} products`);
      await seed(side, records);
      sides.push(side);
    }
    // Restarts on the existing DATA_DIRs, alternating, one server at a time.
    const starts: number[][] = [[], []];
    for (let r = 0; r < 3; r++) {
      for (const [i, side] of sides.entries()) {
        await stopServer(side.server);
        side.server = await startAt(side.server.label, side.server.dir, side.server.dataDir);
        starts[i].push(side.server.startMs);
      }
    }
    log(`restart ms: ${starts.map((s) => s.map((v) => Math.round(v)).join(', ')).join(' | ')}`);
    for (const side of sides) side.headers = await adminKey(side.server.url);

    const kinds = {
      READ: (side: Side) => (i: number) => call(side.server.url, 'GET', `/api/v1/tasks/${side.taskIds[(i * 7919) % side.taskIds.length]}`, side.headers),
      LIST: (side: Side) => () => call(side.server.url, 'GET', '/api/v1/tasks', side.headers),
      'LIST products (anonymous)': (side: Side) => () => call(side.server.url, 'GET', '/api/v1/products', {}),
    };
    const results: Record<string, RoundResult[][]> = {};
    for (const [kind, request] of Object.entries(kinds)) {
      results[kind] = [[], []];
      // Warm-up: the JIT and the engine's caches, on both.
      for (const side of sides) await round(side.server, 300, CONCURRENCY, request(side));
    }
    for (let r = 0; r < rounds; r++) {
      for (const [kind, request] of Object.entries(kinds)) {
        // The order alternates, so that neither side always runs first.
        const order = r % 2 ? [1, 0] : [0, 1];
        for (const i of order) results[kind][i].push(await round(sides[i].server, requests, CONCURRENCY, request(sides[i])));
      }
      log(`round ${r + 1} of ${rounds}: ${Object.entries(results).map(([k, [a, b]]) => `${k} ${digits(a[r].rps / b[r].rps, 2)}×`).join(', ')}`);
    }

    const scenario = `versus: this checkout against ${commit}, same data (${records} tasks, ${records} products), ${rounds} alternating rounds of ${requests} requests at ${CONCURRENCY} clients`;
    const rows: BenchRow[] = [];
    for (const [kind, [here, there]] of Object.entries(results)) {
      const ratios = here.map((h, i) => h.rps / there[i].rps);
      const ratio = median(ratios);
      const target = kind === 'READ' || kind === 'LIST';
      rows.push({
        scenario,
        metric: `${kind}: requests per second, this / ${commit} (median of rounds)`,
        value: digits(ratio, 2),
        unit: '×',
        ...(target ? { target: '≥ 0.95', pass: ratio >= 0.95 } : {}),
        note: `rounds ${digits(Math.min(...ratios), 2)}–${digits(Math.max(...ratios), 2)}×; ${Math.round(median(here.map((h) => h.rps)))} against ${Math.round(median(there.map((h) => h.rps)))} req/s; p50 ${digits(median(here.map((h) => h.p50)), 1)} against ${digits(median(there.map((h) => h.p50)), 1)} ms`,
      });
      rows.push({
        scenario,
        metric: `${kind}: CPU per request, API process / engine`,
        value: `${digits(median(here.map((h) => h.apiCpuMs)), 2)} / ${digits(median(here.map((h) => h.engineCpuMs)), 2)}`,
        unit: 'ms',
        note: `${commit}: ${digits(median(there.map((h) => h.apiCpuMs)), 2)} / ${digits(median(there.map((h) => h.engineCpuMs)), 2)} ms`,
      });
    }
    const [startHere, startThere] = starts.map(median);
    rows.push({
      scenario,
      metric: 'npm start on an existing DATA_DIR until healthy (median of 3)',
      value: Math.round(startHere),
      unit: 'ms',
      target: `≤ ${commit}'s`,
      pass: startHere <= startThere * 1.05,
      note: `${commit}: ${Math.round(startThere)} ms; runs ${starts[0].map(Math.round).join(', ')} against ${starts[1].map(Math.round).join(', ')} ms (within 5 % counts as no slower)`,
    });
    return rows;
  } finally {
    for (const side of sides) await stopServer(side.server);
    destroyAgent();
    removeDataDir(dirs.here);
    removeDataDir(dirs.other);
  }
}
