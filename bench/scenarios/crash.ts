/**
 * kill -9 rounds of `npm start` with writes and an import in flight (bench/crash.ts): after every
 * restart on the same DATA_DIR, every write ever acknowledged is checked. Target: none lost.
 * CRASH_ROUNDS sets the rounds (default 40 × BENCH_SCALE). Runs its own `npm start` processes, each
 * with its own DynamoDB Local on a temporary DATA_DIR.
 */
import { crashRounds, WRITERS } from '../crash.js';
import { round } from '../stats.js';
import type { BenchContext, BenchRow } from '../types.js';

export const order = 300;
export const long = true;
export const usesLocal = false;

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const rounds = Math.max(1, Number(process.env.CRASH_ROUNDS ?? Math.round(40 * context.scale)));
  const result = await crashRounds(rounds, (line) => console.log(`  ${line}`));
  const { tally } = result;
  const scenario = `crash: ${rounds} rounds of kill -9 of npm start with ${WRITERS} writers and an import in flight`;
  const examples = tally.examples.join('; ');
  const retryFailures = result.importRetryFailures + result.createRetryFailures;
  return [
    { scenario, metric: 'rounds', value: rounds, note: `${result.importRetries} killed with an import in flight (its answer cut off, retried); ${round(result.seconds, 0)} s in all, ${round(result.restartSeconds, 1)} s per restart on average` },
    { scenario, metric: 'acknowledged writes', value: tally.creates + tally.updates + tally.deletes, note: `${tally.creates} creates (${tally.imports} imports of 100 included), ${tally.updates} updates, ${tally.deletes} deletes (single and bulk)` },
    { scenario, metric: 'acknowledged-write checks after restarts', value: tally.checks, note: 'every record ever written, read back after every restart' },
    { scenario, metric: 'writes lost', value: result.lost, target: '0', pass: result.lost === 0, note: `${tally.lostCreates} creates missing, ${tally.undoneDeletes} deletes undone, ${tally.revertedUpdates} updates reverted${examples ? `; ${examples}` : ''}` },
    { scenario, metric: 'cut-off requests retried with their Idempotency-Key', value: result.importRetries + result.createRetries, note: `${result.importRetries} imports, ${result.createRetries} creates` },
    { scenario, metric: 'retries refused or incomplete', value: retryFailures, target: '0', pass: retryFailures === 0, note: 'an import retried holds exactly its 100 tasks' },
    { scenario, metric: 'engines left running by a killed run', value: result.leftoverEngines, target: '0', pass: result.leftoverEngines === 0 },
  ];
}
