import { describe, expect, it } from 'vitest';
import { firstAsk, mergeFirst, mergeSorted, type ShardReader } from '../../../shared/data/merge.js';

/** Shards over sorted keys, counting the items each read returns. */
function shardsOf(lists: string[][]): { readers: ShardReader<string>[]; reads: number[]; returned: number[] } {
  const reads = lists.map(() => 0);
  const returned = lists.map(() => 0);
  const readers = lists.map((list, i): ShardReader<string> => async (after, n) => {
    reads[i] += 1;
    const from = after === undefined ? 0 : list.findIndex((k) => k > after);
    const items = from < 0 ? [] : list.slice(from, from + n);
    returned[i] += items.length;
    return { items, ended: from < 0 || from + n >= list.length };
  });
  return { readers, reads, returned };
}

/** `count` distinct keys in a scrambled order (deterministic). */
function randomKeys(count: number, seed: number): string[] {
  return Array.from({ length: count }, (_, i) => `${String((Math.imul(i + seed, 2654435761) >>> 0) % 1_000_000).padStart(6, '0')}#${i}`);
}

describe('mergeFirst', () => {
  it('returns the first items of all shards in key order, whatever their spread', async () => {
    for (const [seed, shards, want] of [
      [1, 4, 10],
      [2, 16, 21],
      [3, 20, 101],
      [4, 3, 500],
    ] as const) {
      const keys = randomKeys(300, seed);
      const lists: string[][] = Array.from({ length: shards }, () => []);
      keys.forEach((k, i) => lists[(i * 7 + (i % 5)) % shards].push(k));
      for (const list of lists) list.sort();

      const merged = await mergeFirst(shardsOf(lists).readers, want, (k) => k);

      expect(merged).toEqual([...keys].sort().slice(0, want));
    }
  });

  it('reads a shard again only while it may hold items of the page', async () => {
    const lists = [['a1', 'a2', 'a3', 'a4', 'a5', 'a6'], ['b1', 'b2'], ['c1']];
    const { readers, reads } = shardsOf(lists);

    const merged = await mergeFirst(readers, 4, (k) => k, 2);

    expect(merged).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(reads).toEqual([2, 1, 1]);
  });

  it('returns everything when the shards hold fewer items than wanted', async () => {
    const lists = [['b'], [], ['a', 'c']];

    const merged = await mergeFirst(shardsOf(lists).readers, 10, (k) => k);

    expect(merged).toEqual(['a', 'b', 'c']);
  });

  it('with records spread evenly, a page is one read per shard', async () => {
    const keys = randomKeys(1600, 9).sort();
    const lists: string[][] = Array.from({ length: 16 }, () => []);
    keys.forEach((k, i) => lists[i % 16].push(k));
    const { readers, reads } = shardsOf(lists);

    await mergeFirst(readers, 21, (k) => k);

    expect(reads.every((n) => n === 1)).toBe(true);
    expect(firstAsk(21, 16)).toBeLessThanOrEqual(4);
  });
});

describe('mergeSorted', () => {
  it('merges sorted lists into one', () => {
    expect(mergeSorted([['a', 'd'], ['b'], ['c', 'e']], (k) => k)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});
