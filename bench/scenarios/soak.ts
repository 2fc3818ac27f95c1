/**
 * A bounded soak of `npm start` with faults (bench/soak.ts): 16 workers, an SSE client, an HMAC-
 * checking webhook receiver, a kill -9 of DynamoDB Local and a 60 s receiver outage, then a
 * ledger check. SOAK_MINUTES (or `--minutes N` after `npm run bench --`) sets the length, default
 * 10; SOAK_RECEIVER_OUTAGE=0 (or `--no-receiver-outage`) keeps the receiver up throughout,
 * SOAK_ENGINE_KILL=0 (or `--no-engine-kill`) leaves the engine running. Runs
 * only when named: `BENCH_ONLY=soak npm run bench`.
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

/** False with SOAK_RECEIVER_OUTAGE=0 or `--no-receiver-outage`: the receiver stays up. */
export function soakReceiverOutage(argv: readonly string[] = process.argv, env = process.env): boolean {
  return !argv.includes('--no-receiver-outage') && !['0', 'false', 'off', 'no'].includes((env.SOAK_RECEIVER_OUTAGE ?? '').toLowerCase());
}

/** False with SOAK_ENGINE_KILL=0 or `--no-engine-kill`: the engine is not killed. */
export function soakEngineKill(argv: readonly string[] = process.argv, env = process.env): boolean {
  return !argv.includes('--no-engine-kill') && !['0', 'false', 'off', 'no'].includes((env.SOAK_ENGINE_KILL ?? '').toLowerCase());
}

export async function run(_context: BenchContext): Promise<BenchRow[]> {
  const minutes = soakMinutes();
  const receiverOutage = soakReceiverOutage();
  const engineKill = soakEngineKill();
  const r = await soak({ minutes, receiverOutage, engineKill, log: (line) => console.log(`  ${line}`) });
  const scenario = `soak: ${minutes} min of npm start, 16 workers, SSE client, webhook receiver, slowloris, ${engineKill ? 'engine kill -9, ' : ''}${receiverOutage ? 'receiver down, ' : ''}bad bodies`;
  const ops = Object.entries(r.byOperation).map(([k, v]) => `${k} ${v}`).join(', ');
  const a = r.acknowledged;
  const lag = r.webhooks.lagMs;
  const steady = r.webhooks.steadyLagMs;
  return [
    { scenario, metric: 'requests', value: r.requests, note: ops },
    { scenario, metric: 'acknowledged', value: a.creates + a.updates + a.deletes, note: `${a.creates} creates, ${a.updates} If-Match updates, ${a.deletes} deletes, ${a.imports} imports of 100, ${a.uploads} uploads` },
    { scenario, metric: 'lost', value: r.lost, target: '0', pass: r.lost === 0, note: r.examples.join('; ') },
    { scenario, metric: 'resurrected', value: r.resurrected, target: '0', pass: r.resurrected === 0 },
    { scenario, metric: 'stream: live / replayed / missing (of them in the replay)', value: `${r.stream.live} / ${r.stream.replayed} / ${r.stream.missing} (${r.stream.skipped})`, target: 'missing 0', pass: r.stream.missing === 0, note: `${r.stream.reconnects} reconnects (Last-Event-ID), ${r.stream.late} late commits sent by the look-back; ${r.stream.missingExamples.join('; ')}` },
    { scenario, metric: 'stream: replay from the first id carries', value: `${r.stream.replay.carried} / ${r.webhooks.expected}`, target: 'all', pass: r.stream.replay.missingFromReplay === 0 },
    { scenario, metric: 'webhooks: delivered / expected', value: `${r.webhooks.delivered} / ${r.webhooks.expected}`, target: 'all', pass: r.webhooks.missing === 0, note: `${r.webhooks.duplicates} duplicates, ${r.webhooks.badSignatures} bad signatures; the log at the end: ${Object.entries(r.webhooks.log).map(([status, n]) => `${n} ${status}`).join(', ')}, ${r.webhooks.unlogged} received but not in it; ${r.webhooks.deadLettered} messages in the dead-letter queue` },
    {
      scenario,
      metric: 'webhooks: repeats (of them after a logged success)',
      value: `${r.webhooks.repeats.deliveries} (${r.webhooks.repeats.afterLoggedSuccess})`,
      target: 'after a logged success 0',
      pass: r.webhooks.repeats.afterLoggedSuccess === 0,
      note: `deliveries whose webhook-id arrived more than once; the log read before answering a repeat (${r.webhooks.repeats.unknown} unreadable within 4 s); ${r.webhooks.repeats.examples.join('; ')}`,
    },
    { scenario, metric: 'delivery lag p50 / p95 / p99 / max', value: `${lag.p50} / ${lag.p95} / ${lag.p99} / ${lag.max}`, unit: 'ms', note: 'acknowledged create → delivery received, all creates (the faults included)' },
    {
      scenario,
      metric: 'delivery lag outside faults p50 / p95 / p99 / max',
      value: `${steady.p50} / ${steady.p95} / ${steady.p99} / ${steady.max}`,
      unit: 'ms',
      target: 'p95 ≤ 5000, max ≤ 30000',
      pass: steady.p95 <= 5_000 && steady.max <= 30_000,
      note: `${steady.n} creates acknowledged outside the engine's and the receiver's outages (from 10 s before each to 5 s after)`,
    },
    {
      scenario,
      metric: 'slowloris: answered 408 / connections',
      value: `${r.slowloris.answered408} / ${r.slowloris.connections}`,
      target: 'all, none left open',
      pass: r.slowloris.answered408 === r.slowloris.connections && r.slowloris.stillOpen === 0,
      note: `all closed within ${r.slowloris.closedWithinMs} ms, ${r.slowloris.stillOpen} still open after 20 s, ${r.slowloris.otherAnswers} other answers; ${r.slowloris.servedMeanwhile} requests served meanwhile`,
    },
    {
      scenario,
      metric: 'bad bodies: answered 400/413 as expected',
      value: `${r.badBodies.expected} / ${r.badBodies.sent}`,
      target: 'all',
      pass: r.badBodies.expected === r.badBodies.sent,
      note: `20 malformed, 20 nested 100 levels (400), 10 of 6.5 MB, 10 declaring 12 MB with Expect: 100-continue (413); ${r.badBodies.servedMeanwhile} requests served meanwhile; ${r.badBodies.unexpected.join('; ')}`,
    },
    { scenario, metric: '5xx outside faults', value: r.errors.fiveXxOutsideFaults, target: '0', pass: r.errors.fiveXxOutsideFaults === 0, note: `${r.errors.fiveXxDuringFaults} during faults (503 while the engine restarts), ${r.errors.transportErrors} without an answer; ${r.errors.examples.join('; ')}` },
    // killedAt stays 0 when the run skips the kill (SOAK_ENGINE_KILL=0): nothing to recover from.
    r.engine.killedAt
      ? { scenario, metric: 'engine back after kill -9', value: r.engine.recoveredAfterMs ?? 'never', unit: 'ms', target: '≤ 30000', pass: (r.engine.recoveredAfterMs ?? Infinity) <= 30_000, note: `killed at ${r.engine.killedAt} s; ${r.engine.lines.join(' / ')}` }
      : { scenario, metric: 'engine back after kill -9', value: 'not killed in this run', note: 'SOAK_ENGINE_KILL=0' },
    { scenario, metric: 'delivery lag by time of the create', value: r.webhooks.timeline.length, note: r.webhooks.timeline.join('; ') },
    { scenario, metric: 'delivery lag split: create → fan-out / fan-out → attempt (p50, p95)', value: `${r.webhooks.split.toFanout.p50} / ${r.webhooks.split.fanoutToAttempt.p50}`, unit: 'ms', note: `p95 ${r.webhooks.split.toFanout.p95} / ${r.webhooks.split.fanoutToAttempt.p95} ms; attempt → received p50 ${r.webhooks.split.post.p50} ms (webhook-timestamp: whole seconds)` },
    { scenario, metric: 'npm start warnings and errors', value: r.logs.length, note: r.logs.join('; ') },
    { scenario, metric: 'RSS node first / max / last', value: `${r.rssMiB.node.first} / ${r.rssMiB.node.max} / ${r.rssMiB.node.last}`, unit: 'MiB' },
    { scenario, metric: 'RSS engine first / max / last', value: `${r.rssMiB.engine.first} / ${r.rssMiB.engine.max} / ${r.rssMiB.engine.last}`, unit: 'MiB' },
  ];
}
