/**
 * A bounded soak of `npm start` with faults (bench/soak.ts): 16 workers, an SSE client, an HMAC-
 * checking webhook receiver, a kill -9 of DynamoDB Local and a 60 s receiver outage, then a
 * ledger check. SOAK_MINUTES (or `--minutes N` after `npm run bench --`) sets the length, default
 * 10. Runs only when named: `BENCH_ONLY=soak npm run bench`.
 */
import { soak } from '../soak.js';
import type { BenchContext, BenchRow } from '../types.js';

export const order = 310;
export const long = true;
export const usesLocal = false;

export function soakMinutes(argv: readonly string[] = process.argv, env = process.env): number {
  const flag = argv.findIndex((a) => a === '--minutes' || a.startsWith('--minutes='));
  const given = flag < 0 ? env.SOAK_MINUTES : argv[flag].includes('=') ? argv[flag].split('=')[1] : argv[flag + 1];
  const minutes = Number(given ?? 10);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 120) throw new Error(`soak: minutes must be between 0 and 120 (got ${given})`);
  return minutes;
}

export async function run(_context: BenchContext): Promise<BenchRow[]> {
  const minutes = soakMinutes();
  const r = await soak({ minutes, log: (line) => console.log(`  ${line}`) });
  const scenario = `soak: ${minutes} min of npm start, 16 workers, SSE client, webhook receiver, engine kill -9, receiver down`;
  const ops = Object.entries(r.byOperation).map(([k, v]) => `${k} ${v}`).join(', ');
  const a = r.acknowledged;
  const lag = r.webhooks.lagMs;
  return [
    { scenario, metric: 'requests', value: r.requests, note: ops },
    { scenario, metric: 'acknowledged', value: a.creates + a.updates + a.deletes, note: `${a.creates} creates, ${a.updates} If-Match updates, ${a.deletes} deletes, ${a.imports} imports of 100, ${a.uploads} uploads` },
    { scenario, metric: 'lost', value: r.lost, target: '0', pass: r.lost === 0, note: r.examples.join('; ') },
    { scenario, metric: 'resurrected', value: r.resurrected, target: '0', pass: r.resurrected === 0 },
    { scenario, metric: 'stream: live / replayed / missing', value: `${r.stream.live} / ${r.stream.replayed} / ${r.stream.missing}`, target: 'missing 0', pass: r.stream.missing === 0, note: `${r.stream.reconnects} reconnects (Last-Event-ID)` },
    { scenario, metric: 'webhooks: delivered / expected', value: `${r.webhooks.delivered} / ${r.webhooks.expected}`, target: 'all', pass: r.webhooks.missing === 0, note: `${r.webhooks.duplicates} duplicates, ${r.webhooks.badSignatures} bad signatures` },
    { scenario, metric: 'delivery lag p50 / p95 / p99 / max', value: `${lag.p50} / ${lag.p95} / ${lag.p99} / ${lag.max}`, unit: 'ms', note: 'acknowledged create → delivery received, outage included' },
    { scenario, metric: '5xx outside faults', value: r.errors.fiveXxOutsideFaults, target: '0', pass: r.errors.fiveXxOutsideFaults === 0, note: `${r.errors.fiveXxDuringFaults} during faults (503 while the engine restarts), ${r.errors.transportErrors} without an answer; ${r.errors.examples.join('; ')}` },
    { scenario, metric: 'engine back after kill -9', value: r.engine.recoveredAfterMs ?? 'never', unit: 'ms', target: '≤ 30000', pass: (r.engine.recoveredAfterMs ?? Infinity) <= 30_000, note: `killed at ${r.engine.killedAt} s; ${r.engine.lines.join(' / ')}` },
    { scenario, metric: 'RSS node first / max / last', value: `${r.rssMiB.node.first} / ${r.rssMiB.node.max} / ${r.rssMiB.node.last}`, unit: 'MiB' },
    { scenario, metric: 'RSS engine first / max / last', value: `${r.rssMiB.engine.first} / ${r.rssMiB.engine.max} / ${r.rssMiB.engine.last}`, unit: 'MiB' },
  ];
}
