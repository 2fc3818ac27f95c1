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
 *
 * Day counter items: `<base partition>#days` (partitions.ts dayPartition) / `<token>#<YYYY-MM>#<shard>`
 * — {kind: 'counter', `<YYYY-MM-DD>`: count…}: the records of a base partition per UTC day of a
 * field counted per day (aggregates.days), one item per month and counter shard, so a write
 * touches one small item, on a key of its own, and a month is read in one Query.
 */
import { tokenField, type LiveLayout, type LiveSum } from './layout.js';
import type { Listing } from './listings.js';
import { dayPartition, fieldPartition, isDayPartition } from './partitions.js';
import { countAttribute, sumAttribute, type Key, type StoredRecord, type TableNames, type TransactItem } from './record-item.js';

export { countAttribute, sumAttribute };

/** The counters' key prefix; alone, the single counter of earlier versions (read, never written). */
export const COUNTER_SK = '#count';
/** Above every counter's sort key and below every listing copy's (those start with a digit). */
export const COUNTERS_END = '#count#~';
/** Counter items per partition: the most concurrent writers one partition's counts spread over. */
export const COUNTER_SHARDS = 10;
/** Counter items a partition may hold: its shards and an older single counter. */
export const COUNTER_ITEMS = COUNTER_SHARDS + 1;

/** Counter item `item` (its sort key before the shard: COUNTER_SK, or a dayItem) of a partition, counter shard `shard`. */
export function counterKey(partition: string, shard: number, item: string = COUNTER_SK): Key {
  return { pk: partition, sk: `${item}#${shard}` };
}

export function isCounterKey(sk: unknown): boolean {
  return typeof sk === 'string' && sk.startsWith(COUNTER_SK);
}

/** The day counter item (its sort key before the counter shard) of a day token for the month of `day` (YYYY-MM-DD). */
export function dayItem(token: string, day: string): string {
  return `${dayItems(token)}${day.slice(0, 7)}`;
}

/** The sort-key prefix of every day counter item of a token (a dropped one's are deleted by the runner). */
export function dayItems(token: string): string {
  return `${token}#`;
}

/** The UTC day (YYYY-MM-DD) of a date (itself) or date-time value; undefined without one. */
export function utcDay(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().slice(0, 10);
}

/** The value a field counted per day has on a record: createdAt and updatedAt are the record's own, others its data's. */
function dayValue(record: StoredRecord, field: string): unknown {
  return field === 'createdAt' || field === 'updatedAt' ? record[field] : record.data[field];
}

export function randomShard(): number {
  return Math.floor(Math.random() * COUNTER_SHARDS);
}

/** Where a listing's count is kept: the partition's own counter items, or an attribute of its base's. */
export function countPlace(listing: Listing): { pk: string; attribute: string } {
  if (listing.token !== undefined && listing.consolidated) return { pk: listing.base, attribute: countAttribute(listing.token, listing.value) };
  return { pk: listing.partition, attribute: 'count' };
}

/** An amount added to one attribute of a partition's counter items (`item`: which; default its counts'). */
export interface CounterDelta {
  pk: string;
  item?: string;
  attribute: string;
  amount: number;
}

/** A summed field's value as counters and aggregates take it: a finite number, or none. */
export function summedValue(record: StoredRecord, token: string): number | undefined {
  const value = record.data[tokenField(token)];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * What a record adds to the counters of `listings` (× `sign`: −1 takes it out): per counted
 * listing, 1 to its count and, per summed field of `sums` the record has a number for, the value
 * to its sum (`s`) and 1 to its number of values (`n`), kept beside the count (sumAttribute); per
 * counted base listing and field of `sums` counted per day the record has a date in, 1 to that
 * day in its day counter item.
 */
export function recordCounts(record: StoredRecord, listings: readonly Listing[], sums: readonly LiveSum[], sign: 1 | -1 = 1): CounterDelta[] {
  const out: CounterDelta[] = [];
  const values = sums.filter((s) => s.by === undefined).map((s) => [s.token, summedValue(record, s.token)] as const).filter((v): v is readonly [string, number] => v[1] !== undefined);
  const days = sums.filter((s) => s.by === 'day').map((s) => [s.token, utcDay(dayValue(record, s.field))] as const).filter((v): v is readonly [string, string] => v[1] !== undefined);
  for (const listing of listings) {
    if (listing.counted === false) continue;
    const { pk, attribute } = countPlace(listing);
    out.push({ pk, attribute, amount: sign });
    for (const [token, value] of values) {
      out.push({ pk, attribute: sumAttribute(attribute, 's', token), amount: sign * value });
      out.push({ pk, attribute: sumAttribute(attribute, 'n', token), amount: sign });
    }
    if (listing.field !== undefined) continue;
    for (const [token, day] of days) out.push({ pk: dayPartition(listing.partition), item: dayItem(token, day), attribute: day, amount: sign });
  }
  return out;
}

/** The sums (and day counts) whose counters hold a stored record and that writes still maintain (its `sm` ∩ the layout's). */
export function heldSums(layout: LiveLayout, record: StoredRecord): LiveSum[] {
  const held = record.sm ?? [];
  return layout.sums.filter((s) => held.includes(s.token));
}

/**
 * The counter deltas of a write: what `after` counts in its listings put in (under the layout's
 * sums), what `before` counted in its listings taken out (under the sums it is counted under). A listing kept
 * nets to the change of its summed values only (nothing when none changed).
 */
export function writeCounts(layout: LiveLayout, before: { record: StoredRecord; listings: readonly Listing[] } | undefined, after: { record: StoredRecord; listings: readonly Listing[] } | undefined): CounterDelta[] {
  return [
    ...(after ? recordCounts(after.record, after.listings, layout.sums) : []),
    ...(before ? recordCounts(before.record, before.listings, heldSums(layout, before.record), -1) : []),
  ];
}

/** Decimal places a number is written with (0.25: 2; 1e-7: 7; 12: 0). */
function decimalsOf(amount: number): number {
  const [mantissa, exponent] = amount.toExponential().split('e');
  return Math.max(0, (mantissa.split('.')[1]?.length ?? 0) - Number(exponent));
}

/**
 * Amounts added up as decimals: binary floating point would leave dust (0.3 − 0.1 is
 * 0.19999999999999998, and 0.3 − 0.1 − 0.2 not 0), which DynamoDB's exact decimal ADD would keep
 * for good; the sum is rounded to the most decimal places of its terms. Counts (integers) are
 * unchanged.
 */
export function decimalSum(amounts: readonly number[]): number {
  const places = Math.min(20, Math.max(0, ...amounts.map(decimalsOf)));
  const sum = Number(amounts.reduce((n, a) => n + a, 0).toFixed(places));
  return sum === 0 ? 0 : sum;
}

/**
 * The counter Updates of `deltas`: ONE Update per counter item (`ADD` of every attribute it holds
 * that changes), all in shard `shard`; nothing for a net zero.
 */
export function counterUpdates(tables: TableNames, deltas: Iterable<CounterDelta>, shard: number): TransactItem[] {
  const byItem = new Map<string, { pk: string; item: string; attributes: Map<string, number[]> }>();
  for (const { pk, item = COUNTER_SK, attribute, amount } of deltas) {
    const id = JSON.stringify([pk, item]);
    const entry = byItem.get(id) ?? { pk, item, attributes: new Map<string, number[]>() };
    entry.attributes.set(attribute, [...(entry.attributes.get(attribute) ?? []), amount]);
    byItem.set(id, entry);
  }
  const items: TransactItem[] = [];
  for (const { pk, item, attributes } of byItem.values()) {
    const changes = [...attributes].map(([attribute, amounts]) => [attribute, decimalSum(amounts)] as const).filter(([, n]) => n !== 0);
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
        Key: counterKey(pk, shard, item),
        UpdateExpression: `ADD ${adds.join(', ')} SET #kind = :counter`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    });
  }
  return items;
}

/** The same transaction with its counter Updates (counts and days) moved to counter shard `shard` (a retry after a conflict). */
export function reshard(items: readonly TransactItem[], shard: number): TransactItem[] {
  return items.map((item) => {
    const key = item.Update?.Key;
    const sk = typeof key?.sk === 'string' ? key.sk : undefined;
    if (!item.Update || !key || sk === undefined || !(isCounterKey(sk) || isDayPartition(String(key.pk)))) return item;
    return { Update: { ...item.Update, Key: counterKey(String(key.pk), shard, sk.slice(0, sk.lastIndexOf('#'))) } };
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
