/**
 * kill -9 of `npm start` (infra/local/main.ts) on a DATA_DIR, with concurrent creates, updates,
 * deletes (single and bulk) and an import in flight (bench/crash.ts): after a restart on the same
 * DATA_DIR every acknowledged write is there, the engine of the killed run is not left running,
 * and the requests cut off by the crash, retried with their Idempotency-Key, are done (an import
 * then holds exactly its 100 tasks), never refused as still in progress.
 * One round in the suite (each restart starts Java); `BENCH_ONLY=crash npm run bench` runs 40.
 */
import { describe, expect, it } from 'vitest';
import { crashRounds } from '../../../bench/crash.js';

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 1);

describe('kill -9 of the local runtime with writes in flight', () => {
  it(`keeps every acknowledged write and frees in-flight Idempotency-Keys (${ROUNDS} rounds)`, { timeout: 300_000 + ROUNDS * 120_000 }, async () => {
    const result = await crashRounds(ROUNDS);

    expect(result.tally.examples).toEqual([]);
    expect(result.lost).toBe(0);
    expect(result.leftoverEngines).toBe(0);
    expect(result.importRetryFailures + result.createRetryFailures).toBe(0);
    expect(result.tally.creates).toBeGreaterThan(0);
    expect(result.tally.checks).toBeGreaterThan(0);
  });
});
