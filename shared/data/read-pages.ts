/**
 * Reading a listing partition page by page (the planner's `partition` path, included children):
 * page 1 with the total in one Query from the counters, the page after a cursor's key, page N past
 * the keys before it, and totals alone. A partition is read on every write shard the layout's
 * readers read (`shards.read`), merged in listing order (merge.ts); the partial copies met are
 * replaced by their records (read-records.ts resolveCopies). Reads are strongly consistent (the
 * records table has no GSI: listing copies live in the table itself), so a LIST right after a
 * write shows it.
 *
 * Functions that take a listing partition take its logical name (listings.ts listingPartitionFor)
 * and read each of its write shards; resolveCopies takes the partition key the copies were read from.
 */
import { paginateQuery, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { COUNTER_ITEMS, COUNTER_SK, COUNTERS_END, dayItems, decimalSum, isCounterKey, sumAttribute, type TotalSource } from './counters.js';
import type { LiveLayout } from './layout.js';
import { mergeFirst, type ShardRead, type ShardReader } from './merge.js';
import { dayPartition, shardKeys } from './partitions.js';
import { resolveCopies, type Copy } from './read-records.js';
import type { StoredRecord } from './record-item.js';

/** Largest `Limit` sent with a Query (DynamoDB takes a 32-bit integer; each Query stops at 1 MB anyway). */
export const MAX_QUERY_LIMIT = 1_000_000;

export interface PartitionPage {
  records: StoredRecord[];
  /** The partition's counter (when it was read). */
  total?: number;
  /** Sort key of the last record returned. */
  lastSk?: string;
  /** Copies follow the last one returned. */
  more: boolean;
}

function listingQuery(partition: string, condition: { op: '>' | '>='; sk: string }, limit: number, extra: Partial<QueryCommandInput> = {}): QueryCommandInput {
  const { ExpressionAttributeNames: names, ...rest } = extra;
  return {
    TableName: tableName('records'),
    KeyConditionExpression: `#pk = :pk AND #sk ${condition.op} :sk`,
    ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', ...(names ?? {}) },
    ExpressionAttributeValues: { ':pk': partition, ':sk': condition.sk },
    Limit: limit,
    ConsistentRead: true,
    ...rest,
  };
}

/** From the counters on: their keys start with '#', before every listing copy's (digits). */
const FROM_COUNTER = { op: '>=', sk: COUNTER_SK } as const;
/** Listing copies only. */
const COPIES_ONLY = { op: '>', sk: COUNTERS_END } as const;

/**
 * Up to `want` listing items of a partition from a key condition on, in listing order, with the
 * counter items met on the way (reading from the counters, `slack` more items are asked for in
 * the first Query, so that counters and page come back in one). One Query stops at 1 MB (a few
 * dozen large records), so the read continues from LastEvaluatedKey until `want` copies are in or
 * the partition ends: a page is never cut short by the size of its records.
 */
async function readItems(partition: string, condition: { op: '>' | '>='; sk: string }, want: number, slack = 0): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let copies = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const limit = want - copies + (start ? 0 : slack);
    const out = await db().send(new QueryCommand(listingQuery(partition, condition, limit, start ? { ExclusiveStartKey: start } : {})));
    for (const item of out.Items ?? []) {
      items.push(item);
      if (!isCounterKey(item.sk)) copies += 1;
    }
    start = out.LastEvaluatedKey;
  } while (start && copies < want);
  return items;
}

/** The counter items of a (logical) partition: ONE Query per write shard over their key range, in parallel. */
async function counterItems(partition: string, shards = 1): Promise<Record<string, unknown>[]> {
  if (shards > 1) return (await Promise.all(shardKeys(partition, shards).map((key) => counterItems(key)))).flat();
  const out = await db().send(
    new QueryCommand({
      TableName: tableName('records'),
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lo AND :hi',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: { ':pk': partition, ':lo': COUNTER_SK, ':hi': COUNTERS_END },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

function sumOf(items: Record<string, unknown>[], attribute: string): number {
  return decimalSum(items.filter((item) => isCounterKey(item.sk)).map((item) => Number(item[attribute] ?? 0)));
}

/** The part of a field partition's total kept in its base partition's counter items (0 for a base partition). */
async function baseShare(source: TotalSource): Promise<number> {
  return source.base && source.attribute ? sumOf(await counterItems(source.base, source.shards), source.attribute) : 0;
}

/**
 * Up to `want` records of a partition from a key condition on (readItems, then resolveCopies),
 * and the counter items met. A partial copy dropped on the way (its record changed meanwhile) is
 * made up for by reading on after the last copy read, so a page is not cut short by it.
 */
async function readCopies(
  layout: LiveLayout,
  partition: string,
  condition: { op: '>' | '>='; sk: string },
  want: number,
  slack = 0,
): Promise<{ counters: Record<string, unknown>[]; copies: Copy[]; ended: boolean }> {
  const counters: Record<string, unknown>[] = [];
  const copies: Copy[] = [];
  let from = condition;
  for (let first = true; ; first = false) {
    const asked = want - copies.length;
    const items = await readItems(partition, from, asked, first ? slack : 0);
    const raw = items.filter((item) => !isCounterKey(item.sk));
    counters.push(...items.filter((item) => isCounterKey(item.sk)));
    copies.push(...(await resolveCopies(layout, partition, raw)));
    // Fewer than asked: the partition ended.
    if (raw.length < asked) return { counters, copies, ended: true };
    if (copies.length >= want) return { counters, copies, ended: false };
    from = { op: '>', sk: String(raw[raw.length - 1].sk) };
  }
}

/**
 * Up to `want` records of a (logical) partition from a key condition on, in listing order, across
 * its write shards (merge.ts), and the counter items of every shard when the condition starts at
 * the counters (each shard's first Query asks `slack` more items for them). One shard: readCopies.
 */
async function readMerged(
  layout: LiveLayout,
  partition: string,
  condition: { op: '>' | '>='; sk: string },
  want: number,
  slack = 0,
): Promise<{ counters: Record<string, unknown>[]; copies: Copy[] }> {
  const keys = shardKeys(partition, layout.shards.read);
  if (keys.length === 1) return readCopies(layout, partition, condition, want, slack);
  const counters: Record<string, unknown>[] = [];
  const readers = keys.map(
    (key): ShardReader<Copy> =>
      async (after, n) => {
        const read = await readCopies(layout, key, after === undefined ? condition : { op: '>', sk: after }, n, after === undefined ? slack : 0);
        counters.push(...read.counters);
        return { items: read.copies, ended: read.ended };
      },
  );
  const copies = await mergeFirst(readers, want, (c) => c.sk);
  return { counters, copies };
}

function pageOf(copies: Copy[], limit: number): PartitionPage {
  const page = copies.slice(0, limit);
  return { records: page.map((c) => c.record), lastSk: page.length ? page[page.length - 1].sk : undefined, more: copies.length > limit };
}

/**
 * The first page of a partition and its total: the counters, then up to `limit` copies and one
 * more (which tells whether anything follows). ONE Query unless the records pass 1 MB; for a field
 * partition, ONE more (in parallel) for the share of its total kept in the base partition.
 */
export async function firstPage(layout: LiveLayout, source: TotalSource, limit: number): Promise<PartitionPage> {
  const [{ counters, copies }, share] = await Promise.all([readMerged(layout, source.partition, FROM_COUNTER, limit + 1, source.ownCounters ?? COUNTER_ITEMS), baseShare(source)]);
  return { ...pageOf(copies, limit), total: sumOf(counters, 'count') + share };
}

/** Up to `limit` records after a sort key (a cursor or the end of skipped entries), and whether more follow. */
export async function pageAfter(layout: LiveLayout, partition: string, afterSk: string, limit: number): Promise<PartitionPage> {
  if (limit <= 0) return { records: [], more: false };
  return pageOf((await readMerged(layout, partition, { op: '>', sk: afterSk }, limit + 1)).copies, limit);
}

/**
 * Skips the first `count` copies of a partition reading keys only (ProjectionExpression; each
 * Query returns at most 1 MB), and reads the counters on the way. `lastSk` is the sort key of the
 * last skipped copy; undefined when the partition has fewer copies than `count`.
 */
export async function skipEntries(source: TotalSource, count: number): Promise<{ total: number; lastSk?: string }> {
  if ((source.shards ?? 1) > 1) return skipShards(source, count);
  const shared = baseShare(source);
  let own = 0;
  let countersDone = false;
  let seen = 0;
  let lastSk: string | undefined;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand(
        listingQuery(source.partition, FROM_COUNTER, Math.min(count - seen + (countersDone ? 0 : (source.ownCounters ?? COUNTER_ITEMS)), MAX_QUERY_LIMIT), {
          ProjectionExpression: '#sk, #count',
          ExpressionAttributeNames: { '#count': 'count' },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      ),
    );
    for (const item of out.Items ?? []) {
      if (isCounterKey(item.sk)) {
        own += Number(item.count ?? 0);
        continue;
      }
      countersDone = true;
      // The slack asked for the counters may bring copies beyond the ones to skip.
      if (seen === count) break;
      seen += 1;
      lastSk = String(item.sk);
    }
    start = out.LastEvaluatedKey;
    if (!start) countersDone = true;
    // Asked to skip past the end: nothing more to read.
    if (countersDone && own + (await shared) <= count) return { total: own + (await shared) };
  } while (start && seen < count);
  const total = own + (await shared);
  return { total, lastSk: seen >= count ? lastSk : undefined };
}

/** Up to `n` sort keys of a partition's copies (keys only) from its first copy, or after `after`. */
async function copyKeys(partition: string, after: string | undefined, n: number): Promise<ShardRead<string>> {
  const keys: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand(
        listingQuery(partition, after === undefined ? COPIES_ONLY : { op: '>', sk: after }, Math.min(n - keys.length, MAX_QUERY_LIMIT), {
          ProjectionExpression: '#sk',
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      ),
    );
    for (const item of out.Items ?? []) keys.push(String(item.sk));
    start = out.LastEvaluatedKey;
  } while (start && keys.length < n);
  return { items: keys, ended: keys.length < n };
}

/** skipEntries over write shards: the `count` first keys merged (keys only), the total read beside. */
async function skipShards(source: TotalSource, count: number): Promise<{ total: number; lastSk?: string }> {
  const readers = shardKeys(source.partition, source.shards ?? 1).map((key): ShardReader<string> => (after, n) => copyKeys(key, after, n));
  const [total, skipped] = await Promise.all([readCounter(source), mergeFirst(readers, count, (sk) => sk)]);
  return { total, lastSk: skipped.length >= count ? skipped[count - 1] : undefined };
}

/** An attribute kept beside a count, by the name of the count attribute (`count`, or `#status=todo` in a base). */
type Beside = (count: string) => string;
const COUNT: Beside = (count) => count;

/** A total from the partition's counter items and, for a field partition, its base's (the attribute `beside` its count). */
function tally(source: TotalSource, own: Record<string, unknown>[], base: Record<string, unknown>[], beside: Beside): number {
  return sumOf(own, beside('count')) + (source.attribute ? sumOf(base, beside(source.attribute)) : 0);
}

/** A partition's total: ONE Query of its counter items per shard (twice that for a field partition), in parallel. */
export async function readCounter(source: TotalSource): Promise<number> {
  return (await readCounterTotals([source], [])).get(source.partition)!.count;
}

/** The first `limit` records of a partition in default order (included children; past 1 MB too). */
export async function queryPartition(layout: LiveLayout, partition: string, limit: number): Promise<StoredRecord[]> {
  return (await readMerged(layout, partition, COPIES_ONLY, limit)).copies.map((c) => c.record);
}

/** Several partitions' totals: one Query per counter key range, in parallel (a shared base read once). */
export async function readCounters(sources: TotalSource[]): Promise<Map<string, number>> {
  const totals = await readCounterTotals(sources, []);
  return new Map([...totals].map(([partition, t]) => [partition, t.count]));
}

/** A partition's count and, per sum token, the sum of the values and how many records have one. */
export interface CounterTotals {
  count: number;
  sums: Map<string, { sum: number; n: number }>;
}

/**
 * Several partitions' counts and the sums kept beside them (counters.ts recordCounts) under the
 * sum tokens `sums`: the same reads as readCounters (one Query per counter key range, in parallel,
 * a shared base read once).
 */
export async function readCounterTotals(sources: TotalSource[], sums: readonly string[]): Promise<Map<string, CounterTotals>> {
  const reads = new Map<string, Promise<Record<string, unknown>[]>>();
  const itemsOf = (partition: string, shards: number | undefined) => {
    if (!reads.has(partition)) reads.set(partition, counterItems(partition, shards));
    return reads.get(partition)!;
  };
  const totals = await Promise.all(
    sources.map(async (source): Promise<CounterTotals> => {
      const [own, base] = await Promise.all([itemsOf(source.partition, source.shards), source.base && source.attribute ? itemsOf(source.base, source.shards) : []]);
      const of = (kind: 's' | 'n', token: string) => tally(source, own, base, (count) => sumAttribute(count, kind, token));
      return { count: tally(source, own, base, COUNT), sums: new Map(sums.map((token) => [token, { sum: of('s', token), n: of('n', token) }])) };
    }),
  );
  return new Map(sources.map((s, i) => [s.partition, totals[i]]));
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A base partition's records per UTC day of a field counted per day (its token; counters.ts
 * dayItem), over the months `from`–`to` (YYYY-MM, inclusive; absent: every month): one Query per
 * write shard of its day partition over the token's key range (a month is one item per counter
 * shard), the counter shards added up. Days without records are absent.
 */
export async function readDayCounts(partition: string, shards: number, token: string, months: { from?: string; to?: string } = {}): Promise<Map<string, number>> {
  const prefix = dayItems(token);
  const read = async (pk: string) => {
    const items: Record<string, unknown>[] = [];
    const pages = paginateQuery({ client: db() }, {
      TableName: tableName('records'),
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lo AND :hi',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: { ':pk': pk, ':lo': `${prefix}${months.from ?? ''}`, ':hi': `${prefix}${months.to ?? '9999-12'}#~` },
      ConsistentRead: true,
    });
    for await (const page of pages) items.push(...(page.Items ?? []));
    return items;
  };
  const days = new Map<string, number>();
  for (const item of (await Promise.all(shardKeys(dayPartition(partition), shards).map(read))).flat()) {
    for (const [name, value] of Object.entries(item)) if (DAY.test(name)) days.set(name, (days.get(name) ?? 0) + Number(value));
  }
  return days;
}

/**
 * The createdAt of the newest and of the oldest record listed in a (logical) partition: a listing
 * is sorted by createdAt, so ONE copy read at each end of each write shard (two Queries of Limit 1
 * per shard, in parallel), whatever the number of records. Undefined for an empty partition.
 */
export async function readListingEnds(partition: string, shards: number): Promise<{ newest?: string; oldest?: string }> {
  const end = async (pk: string, forward: boolean) => {
    const out = await db().send(new QueryCommand(listingQuery(pk, COPIES_ONLY, 1, { ScanIndexForward: forward, ProjectionExpression: '#createdAt', ExpressionAttributeNames: { '#createdAt': 'createdAt' } })));
    const at = out.Items?.[0]?.createdAt;
    return typeof at === 'string' ? at : undefined;
  };
  const keys = shardKeys(partition, shards);
  const [newest, oldest] = await Promise.all([true, false].map((forward) => Promise.all(keys.map((pk) => end(pk, forward)))));
  const times = (values: (string | undefined)[]) => values.filter((v): v is string => v !== undefined).sort((a, b) => Date.parse(a) - Date.parse(b));
  return { newest: times(newest).at(-1), oldest: times(oldest)[0] };
}
