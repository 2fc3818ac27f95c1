/**
 * The k-way merge of a sharded listing partition (partitions.ts, write shards):
 * every shard is sorted by its key (the listing sort key), each record is in exactly one shard,
 * so the first `want` items of the whole partition are the first `want` of the shards' items
 * merged. Shards are read lazily: each first gives a few items (about its share of `want`), and
 * only a shard whose last item read still sorts before the `want`-th item merged is read again
 * (twice as many each round). With records spread evenly, most pages are one Query per shard.
 */

/** Items of one shard read in one go, and whether the shard ended with them. */
export interface ShardRead<T> {
  items: T[];
  ended: boolean;
}

/**
 * Reads up to `n` items of one shard, in key order: from its start when `after` is undefined
 * (the first read), else strictly after that key.
 */
export type ShardReader<T> = (after: string | undefined, n: number) => Promise<ShardRead<T>>;

interface ShardState<T> {
  items: T[];
  ended: boolean;
}

/** Items of sorted lists merged into one sorted list (keys are unique across lists). */
export function mergeSorted<T>(lists: readonly (readonly T[])[], keyOf: (item: T) => string): T[] {
  return lists.flat().sort((a, b) => {
    const x = keyOf(a);
    const y = keyOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/**
 * Shards still to read: every shard not ended whose last item read sorts before `boundary`, the
 * `want`-th item merged (its unread items may come before it); every shard not ended while fewer
 * than `want` items are in.
 */
export function shardsToRead<T>(shards: readonly ShardState<T>[], merged: readonly T[], want: number, keyOf: (item: T) => string): number[] {
  const boundary = merged.length >= want ? keyOf(merged[want - 1]) : undefined;
  const out: number[] = [];
  shards.forEach((shard, i) => {
    if (shard.ended) return;
    const last = shard.items.length ? keyOf(shard.items[shard.items.length - 1]) : undefined;
    if (boundary === undefined || last === undefined || last < boundary) out.push(i);
  });
  return out;
}

/** How many items each shard is first asked for: its share of `want` and a margin. */
export function firstAsk(want: number, shards: number): number {
  return Math.max(1, Math.ceil((want * 1.25) / shards) + 1);
}

/**
 * The first `want` items of the shards merged in key order (fewer when the shards hold fewer),
 * reading each shard as little as the merge allows (see the module comment).
 */
export async function mergeFirst<T>(readers: readonly ShardReader<T>[], want: number, keyOf: (item: T) => string, ask = firstAsk(want, readers.length)): Promise<T[]> {
  const shards: ShardState<T>[] = readers.map(() => ({ items: [], ended: false }));
  if (want <= 0) return [];
  let pending = readers.map((_, i) => i);
  let merged: T[] = [];
  for (let n = ask; pending.length > 0; n *= 2) {
    await Promise.all(
      pending.map(async (i) => {
        const shard = shards[i];
        const after = shard.items.length ? keyOf(shard.items[shard.items.length - 1]) : undefined;
        const read = await readers[i](after, n);
        shard.items.push(...read.items);
        shard.ended = read.ended;
      }),
    );
    merged = mergeSorted(
      shards.map((s) => s.items),
      keyOf,
    );
    pending = shardsToRead(shards, merged, want, keyOf);
  }
  return merged.slice(0, want);
}
