import { describe, expect, it } from 'vitest';
import { busiestRates, decideShards, KEY_CEILING_WRITES, type LoadWindow, type ShardDecisionInput } from '../../../shared/migrations/shard-control.js';
import { changeState, loadOfEvents } from '../../../shared/migrations/shard-load.js';
import { adoptedTarget, type Layout } from '../../../shared/migrations/layout.js';
import type { MigrationState } from '../../../shared/migrations/state.js';

const config = { splitAtPercent: 50, splitAfterSeconds: 60, mergeBelowPercent: 10, mergeAfterSeconds: 3600, windowSeconds: 10 };
const NOW = 1_800_000_000_000;

/** Windows of 10 s from `fromMs` to NOW, shard k of `shards` taking `perSecond(k)` writes a second. */
function load(shards: number, fromMs: number, perSecond: (k: number, start: number) => number): LoadWindow[] {
  const out: LoadWindow[] = [];
  for (let start = Math.floor(fromMs / 10_000) * 10_000; start < NOW; start += 10_000) out.push({ start, shards, counts: Array.from({ length: shards }, (_, k) => perSecond(k, start) * 10) });
  return out;
}

function input(overrides: Partial<ShardDecisionInput>): ShardDecisionInput {
  return { auto: true, shards: 1, phase: 'done', settledAt: 0, windows: [], now: NOW, config, merge: false, ...overrides };
}

describe('decideShards', () => {
  it('doubles the shards when the busiest key stays at half its ceiling for the whole minute', () => {
    const decision = decideShards(input({ shards: 2, windows: load(2, NOW - 90_000, (k) => (k === 0 ? 130 : 20)) }));

    expect(decision).toMatchObject({ action: 'split', from: 2, to: 4, threshold: KEY_CEILING_WRITES / 2, seconds: 60 });
    expect(decision.measure).toMatchObject({ rate: 130, lowest: 130, windows: 6 });
  });

  it('holds when one window of the minute dips under the threshold, or the minute began before the last change ended', () => {
    const dip = load(1, NOW - 90_000, (_, start) => (start === Math.floor(NOW / 10_000) * 10_000 - 30_000 ? 100 : 200));
    const busy = load(1, NOW - 90_000, () => 200);

    expect(decideShards(input({ windows: dip })).action).toBe('hold');
    expect(decideShards(input({ windows: busy, settledAt: NOW - 30_000 })).action).toBe('hold');
    expect(decideShards(input({ windows: busy })).action).toBe('split');
  });

  it('counts a window with nothing recorded as no writes, and leaves out the window still under way and other shard counts', () => {
    const windows = load(1, NOW - 90_000, () => 200).filter((_, i) => i !== 5);

    expect(decideShards(input({ windows })).action).toBe('hold');
    expect(decideShards(input({ windows: load(2, NOW - 90_000, () => 200) })).action).toBe('hold');
    expect(busiestRates([{ start: NOW - (NOW % 10_000), shards: 1, counts: [5_000] }], 1, NOW - 60_000, NOW - (NOW % 10_000), 10_000)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('never goes past 32 shards, never touches a pinned count, never starts a change while a migration is open', () => {
    const busy = (shards: number) => load(shards, NOW - 90_000, () => 240);

    expect(decideShards(input({ shards: 32, windows: busy(32) })).action).toBe('hold');
    expect(decideShards(input({ shards: 16, windows: busy(16) }))).toMatchObject({ action: 'split', to: 32 });
    expect(decideShards(input({ auto: false, windows: busy(1) })).action).toBe('hold');
    expect(decideShards(input({ phase: 'running', windows: busy(1) })).action).toBe('hold');
    expect(decideShards(input({ phase: 'pending', windows: busy(1) })).action).toBe('hold');
  });

  it('halves the shards after the merge span below a tenth of the ceiling, only when asked to consider merges', () => {
    const quiet = load(8, NOW - 3_700_000, () => 20);

    expect(decideShards(input({ shards: 8, windows: quiet, merge: true }))).toMatchObject({ action: 'merge', from: 8, to: 4, threshold: 25, seconds: 3600 });
    expect(decideShards(input({ shards: 8, windows: quiet, merge: false })).action).toBe('hold');
    expect(decideShards(input({ shards: 1, windows: load(1, NOW - 3_700_000, () => 0), merge: true })).action).toBe('hold');
  });

  it('does not merge when one window of the span was busy, or a change ended within it', () => {
    const peak = load(8, NOW - 3_700_000, (_, start) => (start === Math.floor((NOW - 1_000_000) / 10_000) * 10_000 ? 30 : 2));
    const quiet = load(8, NOW - 3_700_000, () => 2);

    expect(decideShards(input({ shards: 8, windows: peak, merge: true })).action).toBe('hold');
    expect(decideShards(input({ shards: 8, windows: quiet, merge: true, settledAt: NOW - 600_000 })).action).toBe('hold');
    expect(decideShards(input({ shards: 8, windows: [], merge: true }))).toMatchObject({ action: 'merge', to: 4 });
  });
});

describe('loadOfEvents', () => {
  it('counts each change event on its window and on the shard its key names, per entity and shard count', () => {
    const at = '2027-01-15T08:00:03.000Z';
    const later = '2027-01-15T08:00:12.000Z';
    const loads = loadOfEvents(
      [
        { pk: 'ten_1#products#~1/2', entity: 'products', createdAt: at },
        { pk: 'ten_2#products#~1/2', entity: 'products', createdAt: at },
        { pk: 'ten_2#products#~0/2', entity: 'products', createdAt: later },
        { pk: 'ten_1#products', entity: 'products', createdAt: at },
        { pk: 'ten_1#tasks', entity: 'tasks', createdAt: at },
      ],
      10_000,
    );

    const start = Date.parse('2027-01-15T08:00:00.000Z');
    expect(loads).toEqual([
      { entity: 'products', start, shards: 2, counts: [0, 2] },
      { entity: 'products', start: start + 10_000, shards: 2, counts: [1, 0] },
      { entity: 'products', start, shards: 1, counts: [1] },
      { entity: 'tasks', start, shards: 1, counts: [1] },
    ]);
  });

  it('counts a private or shared entity\'s events per tenant: its busiest listing key is one tenant\'s shard', () => {
    const at = '2027-01-15T08:00:03.000Z';
    const loads = loadOfEvents(
      [
        { pk: 'ten_1#tasks#~1/2', entity: 'tasks', createdAt: at, perTenant: true },
        { pk: 'ten_1#tasks#~1/2', entity: 'tasks', createdAt: at, perTenant: true },
        { pk: 'ten_2#tasks#~1/2', entity: 'tasks', createdAt: at, perTenant: true },
        { pk: 'ten_2#tasks#~0/2', entity: 'tasks', createdAt: at, perTenant: true },
      ],
      10_000,
    );
    const start = Date.parse('2027-01-15T08:00:00.000Z');

    expect(loads).toEqual([
      { entity: 'tasks', start, shards: 2, tenant: 'ten_1', counts: [0, 2] },
      { entity: 'tasks', start, shards: 2, tenant: 'ten_2', counts: [1, 1] },
    ]);
    expect(busiestRates(loads, 2, start, start + 10_000, 10_000)).toEqual([0.2]);
  });
});

describe('changeState', () => {
  it('records the new count as the next target, pending, its pass held back for the settle time, with the trigger', () => {
    const layout: Layout = { access: { public: true, shared: true }, softDelete: false, indexes: [], unique: [], defaults: {}, fields: ['title'], searchable: [], rules: {} };
    const current: MigrationState = { entity: 'posters', target: adoptedTarget(layout), changes: [], state: 'done', run: 3, segments: [], processed: 0, revision: 7 };
    const decision = decideShards(input({ windows: load(1, NOW - 90_000, () => 200) }));
    if (decision.action === 'hold') throw new Error('expected a split');

    const next = changeState(current, decision, NOW, 25_000, 4);

    expect(next).toMatchObject({ state: 'pending', run: 4, revision: 8, changes: ['writeShards changed from 1 to 2'], trigger: { action: 'split', from: 1, to: 2, rate: 200 } });
    expect(next.target.layout.writeShards).toBe(2);
    expect(next.target.keptShards).toBe(1);
    expect(next.target.notBefore).toBe(new Date(NOW + 25_000).toISOString());
  });
});
