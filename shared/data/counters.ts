/**
 * What a record is counted under: the counter items of its listing partitions, and where a
 * partition's total is read. Pure: no I/O.
 *
 * Counter items: `<partition>` / `#count#<shard>` — {kind: 'counter', count, `#<token>=<value>`…}:
 * COUNTER_SHARDS items per partition; a write adds to ONE of them (picked at random, another on a
 * retry), a total is the sum, so no single item takes every write of a partition. '#' sorts
 * before the digits of the listing copies: a Query from `#count` returns the counters first, then
 * page 1. An older single counter at `#count` is still read (it falls in the same key range) and
 * never written. Low-cardinality indexed fields (enum, boolean; layout.ts consolidatedFields) have
 * no counters of their own: the base partition's counter items hold their counts as attributes
 * named like the partition's suffix (`#status=todo`), so a write touches one counter item per
 * base partition instead of one per partition.
 */
import type { LiveLayout } from './layout.js';
import type { Listing } from './listings.js';
import { fieldPartition } from './partitions.js';
import { countAttribute, type Key, type TableNames, type TransactItem } from './record-item.js';

export { countAttribute };

/** The counters' key prefix; alone, the single counter of earlier versions (read, never written). */
export const COUNTER_SK = '#count';
/** Above every counter's sort key and below every listing copy's (those start with a digit). */
export const COUNTERS_END = '#count#~';
/** Counter items per partition: the most concurrent writers one partition's counts spread over. */
export const COUNTER_SHARDS = 10;
/** Counter items a partition may hold: its shards and an older single counter. */
export const COUNTER_ITEMS = COUNTER_SHARDS + 1;

export function counterKey(partition: string, shard: number): Key {
  return { pk: partition, sk: `${COUNTER_SK}#${shard}` };
}

export function isCounterKey(sk: unknown): boolean {
  return typeof sk === 'string' && sk.startsWith(COUNTER_SK);
}

export function randomShard(): number {
  return Math.floor(Math.random() * COUNTER_SHARDS);
}

/** Where a listing's count is kept: the partition's own counter items, or an attribute of its base's. */
export function countPlace(listing: Listing): { pk: string; attribute: string } {
  if (listing.token !== undefined && listing.consolidated) return { pk: listing.base, attribute: countAttribute(listing.token, listing.value) };
  return { pk: listing.partition, attribute: 'count' };
}

/**
 * The counter Updates for listings entered (+n) or left (−n): ONE Update per counter item
 * (`ADD` of every attribute it holds that changes), all in shard `shard`; nothing for a net zero.
 */
export function counterUpdates(tables: TableNames, deltas: Iterable<[Listing, number]>, shard: number): TransactItem[] {
  const byItem = new Map<string, Map<string, number>>();
  for (const [listing, delta] of deltas) {
    if (listing.counted === false) continue;
    const { pk, attribute } = countPlace(listing);
    const attributes = byItem.get(pk) ?? new Map<string, number>();
    attributes.set(attribute, (attributes.get(attribute) ?? 0) + delta);
    byItem.set(pk, attributes);
  }
  const items: TransactItem[] = [];
  for (const [pk, attributes] of byItem) {
    const changes = [...attributes].filter(([, n]) => n !== 0);
    if (changes.length === 0) continue;
    const names: Record<string, string> = { '#kind': 'kind' };
    const values: Record<string, unknown> = { ':counter': 'counter' };
    const adds = changes.map(([attribute, n], i) => {
      names[`#a${i}`] = attribute;
      values[`:d${i}`] = n;
      return `#a${i} :d${i}`;
    });
    items.push({
      Update: {
        TableName: tables.records,
        Key: counterKey(pk, shard),
        UpdateExpression: `ADD ${adds.join(', ')} SET #kind = :counter`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    });
  }
  return items;
}

/** The same transaction with its counter Updates moved to shard `shard` (a retry after a conflict). */
export function reshard(items: readonly TransactItem[], shard: number): TransactItem[] {
  return items.map((item) => {
    const key = item.Update?.Key;
    if (!item.Update || !key || !isCounterKey(key.sk)) return item;
    return { Update: { ...item.Update, Key: counterKey(String(key.pk), shard) } };
  });
}

/**
 * Where a partition's total is read: its own counter items (`count`), plus, for a field partition,
 * the attribute counting it in its base partition's counter items (both are always read, so a
 * field whose counts moved between the two places, or data of earlier versions, still adds up).
 */
export interface TotalSource {
  partition: string;
  base?: string;
  attribute?: string;
  /**
   * Counter items the partition itself may hold (its shards and an older single counter; only the
   * latter for a field counted in its base): room asked for in the Query that reads them with page 1.
   */
  ownCounters?: number;
  /** Write shards of the partition and of its base (partitions.ts shardKeys; default 1): counted over all of them. */
  shards?: number;
}

/** Where the total of a (logical) listing partition is read: `base`, or its partition for `filter` (an index token's value). */
export function totalSource(layout: LiveLayout, base: string, filter?: { field: string; value: unknown; token?: string }): TotalSource {
  const shards = layout.shards.read;
  if (!filter) return { partition: base, ownCounters: COUNTER_ITEMS, shards };
  const token = filter.token ?? filter.field;
  const index = layout.indexes.find((i) => i.token === token);
  return {
    partition: fieldPartition(base, token, filter.value),
    base,
    attribute: countAttribute(token, filter.value),
    ownCounters: index?.consolidated ? 1 : COUNTER_ITEMS,
    shards,
  };
}
