/**
 * The write-shards controller's decision, pure: from the writes each shard of an auto entity took
 * in the last windows (counted by the stream consumer from the change events, shard-load.ts), whether
 * to double its write shards, halve them, or hold.
 *
 * - Split: the busiest listing key's write rate stays at or above `splitAtPercent` of a key's
 *   ceiling in every window of the last `splitAfterSeconds` (the whole span measured after the
 *   last change ended): N doubles, up to MAX_WRITE_SHARDS.
 * - Merge: it stays below `mergeBelowPercent` of the ceiling in every window of the last
 *   `mergeAfterSeconds`, with no change meanwhile: N halves. Halving doubles each key's rate, so the
 *   merge threshold is kept well under half the split one: the two never chase each other.
 * - Hold otherwise, and always while a migration of the entity is open (never two at once), and
 *   for an entity whose count is pinned.
 *
 * Every process that reads the same windows and state decides the same; shard-load.ts makes the
 * change one conditional write on the migration state, so one of them starts it.
 */
import { MAX_WRITE_SHARDS } from '../registry/index.js';
import type { WriteShardsConfig } from '../config.js';
import type { MigrationPhase } from './state.js';

/**
 * Writes per second one listing key takes: 1,000 WCU/s per partition key, and a create writes a
 * copy and a counter item (2 WCU each) on its listing key (docs/capacity.md).
 */
export const KEY_CEILING_WRITES = 250;

/** The writes counted in one window for one shard count: `counts[k]` for shard k. */
export interface LoadWindow {
  /** Start of the window (epoch ms). */
  start: number;
  shards: number;
  counts: readonly number[];
}

export interface ShardDecisionInput {
  /** Whether the controller chooses the count (registry autoShards). */
  auto: boolean;
  /** The count of the entity's migration target. */
  shards: number;
  phase: MigrationPhase;
  /** When the last change of the layout ended (epoch ms; its state's endedAt). */
  settledAt: number;
  /** The windows read for the entity (any shard count; those of another count are left out). */
  windows: readonly LoadWindow[];
  now: number;
  config: Pick<WriteShardsConfig, 'splitAtPercent' | 'splitAfterSeconds' | 'mergeBelowPercent' | 'mergeAfterSeconds' | 'windowSeconds'>;
  /** Whether to consider a merge (its windows span hours: read less often). */
  merge: boolean;
}

export interface ShardMeasure {
  /** The busiest key's writes per second: mean over the windows, the lowest and the highest window. */
  rate: number;
  lowest: number;
  highest: number;
  /** Complete windows over which it was measured. */
  windows: number;
}

export type ShardDecision =
  | { action: 'hold'; reason: string; measure?: ShardMeasure }
  | { action: 'split' | 'merge'; from: number; to: number; threshold: number; seconds: number; reason: string; measure: ShardMeasure };

const round = (n: number) => Math.round(n * 10) / 10;

/**
 * The busiest key's rate in each complete window of [from, to) (a window with no writes counted
 * is 0), for the given shard count.
 */
export function busiestRates(windows: readonly LoadWindow[], shards: number, from: number, to: number, windowMs: number): number[] {
  const byStart = new Map<number, number>();
  for (const w of windows) {
    if (w.shards !== shards || w.start < from || w.start + windowMs > to) continue;
    byStart.set(w.start, Math.max(byStart.get(w.start) ?? 0, ...w.counts.map((n) => n || 0)));
  }
  const rates: number[] = [];
  for (let start = from; start + windowMs <= to; start += windowMs) rates.push((byStart.get(start) ?? 0) / (windowMs / 1000));
  return rates;
}

function measureOf(rates: readonly number[]): ShardMeasure {
  if (!rates.length) return { rate: 0, lowest: 0, highest: 0, windows: 0 };
  return { rate: round(rates.reduce((a, b) => a + b, 0) / rates.length), lowest: round(Math.min(...rates)), highest: round(Math.max(...rates)), windows: rates.length };
}

/** The start of the window holding `ms`. */
export function windowStart(ms: number, windowMs: number): number {
  return Math.floor(ms / windowMs) * windowMs;
}

export function decideShards(input: ShardDecisionInput): ShardDecision {
  const { config, shards, now } = input;
  if (!input.auto) return { action: 'hold', reason: 'the write shards are pinned by the definition' };
  if (input.phase !== 'done') return { action: 'hold', reason: 'a migration of the entity is open' };
  const windowMs = config.windowSeconds * 1000;
  const end = windowStart(now, windowMs);
  // Split: every window of the span at or above the threshold, the span wholly after the last change.
  const splitMs = Math.ceil(config.splitAfterSeconds / config.windowSeconds) * windowMs;
  const splitFrom = end - splitMs;
  const splitAt = (KEY_CEILING_WRITES * config.splitAtPercent) / 100;
  const recent = busiestRates(input.windows, shards, splitFrom, end, windowMs);
  const measure = measureOf(recent);
  if (shards < MAX_WRITE_SHARDS && input.settledAt <= splitFrom && recent.length && recent.every((r) => r >= splitAt)) {
    const to = Math.min(MAX_WRITE_SHARDS, shards * 2);
    return {
      action: 'split',
      from: shards,
      to,
      threshold: splitAt,
      seconds: splitMs / 1000,
      measure,
      reason: `the busiest listing key took ${measure.rate} writes/s (at least ${measure.lowest} in every ${config.windowSeconds} s window) for ${splitMs / 1000} s, at or above ${splitAt} (${config.splitAtPercent} % of a key's ${KEY_CEILING_WRITES})`,
    };
  }
  if (input.merge && shards > 1) {
    const mergeMs = Math.ceil(config.mergeAfterSeconds / config.windowSeconds) * windowMs;
    const mergeFrom = end - mergeMs;
    const below = (KEY_CEILING_WRITES * config.mergeBelowPercent) / 100;
    const quiet = busiestRates(input.windows, shards, mergeFrom, end, windowMs);
    const spanMeasure = measureOf(quiet);
    if (input.settledAt <= mergeFrom && quiet.length && quiet.every((r) => r < below)) {
      const to = Math.max(1, Math.floor(shards / 2));
      return {
        action: 'merge',
        from: shards,
        to,
        threshold: below,
        seconds: mergeMs / 1000,
        measure: spanMeasure,
        reason: `the busiest listing key took ${spanMeasure.rate} writes/s (at most ${spanMeasure.highest}) for ${mergeMs / 1000} s, below ${below} (${config.mergeBelowPercent} % of a key's ${KEY_CEILING_WRITES})`,
      };
    }
  }
  return { action: 'hold', reason: 'the load is within the thresholds', measure };
}
