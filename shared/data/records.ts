/**
 * I/O of the records and events tables: every request built by records-keys.ts (pure) is sent
 * here. Reads are strongly consistent (the records table has no GSI: listing copies live in the
 * table itself), so a LIST right after a write shows it.
 *
 * Every read of listing copies goes through resolveCopies: a partial copy (a record over 1 KB,
 * shared/data/records-keys.ts copyItem) is replaced by its record, fetched with ONE strongly
 * consistent BatchGetItem per 100 keys, and dropped when the record has gone or no longer belongs
 * to the partition read (changed between the Query and the BatchGetItem).
 *
 * Functions that take a listing partition take its logical name (records-keys.ts
 * listingPartitionFor) and read each of its write shards, merging them (merge.ts); resolveCopies
 * takes the partition key the copies were read from.
 */
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ServiceUnavailableError, UniqueViolationError } from '../errors.js';
import type { LoadedEntity } from '../registry/index.js';
import { randomUUID } from 'node:crypto';
import { isEngineBusy, whileBusy } from './busy.js';
import { db, dbOnce, tableName } from './client.js';
import {
  COUNTER_ITEMS,
  COUNTER_SK,
  COUNTERS_END,
  fromItem,
  isCounterKey,
  isPartialCopy,
  listingPartitions,
  listingSortKey,
  randomShard,
  recordKey,
  reshard,
  restampEvents,
  shardCount,
  shardKeys,
  type Key,
  type StoredRecord,
  type TableNames,
  type TotalSource,
  type TransactItem,
} from './records-keys.js';
import { mergeFirst, mergeSorted, type ShardRead, type ShardReader } from './merge.js';
import { uniquePutField } from './unique-keys.js';

export function recordTables(): TableNames {
  return { records: tableName('records'), events: tableName('events') };
}

/** Longest id looked up (generated ids are 36 characters, or 23 plus the prefix). */
export const MAX_ID_LENGTH = 200;

/** The record's version changed (or it vanished) between our read and our write. */
export class WriteConflict extends Error {
  constructor() {
    super('The record changed while it was being written');
    this.name = 'WriteConflict';
  }
}

/**
 * One record by id, as `tenantId` (the caller's tenant; none for an anonymous caller) may find it:
 * ONE GetItem (strongly consistent). A soft-deleted record of an earlier version's id is
 * returned (callers decide); one whose id carries its time is no longer where reads look.
 */
export async function getRecord(entity: LoadedEntity, id: string, tenantId: string | undefined): Promise<StoredRecord | undefined> {
  // No id is that long (keys are at most 2048 bytes): not found, without asking.
  if (id.length === 0 || id.length > MAX_ID_LENGTH) return undefined;
  const { Item } = await db().send(new GetCommand({ TableName: tableName('records'), Key: recordKey(entity, id, tenantId), ConsistentRead: true }));
  return Item ? fromItem(Item) : undefined;
}

/**
 * Attempts of a transaction cancelled by TransactionConflict. With jittered exponential back-off
 * (cap 1 s) and a fresh counter shard each time, 10 attempts wait up to about 5 s in all.
 */
export const CONFLICT_ATTEMPTS = 10;

/** Full jitter: a random wait up to min(1 s, 10 ms × 2^attempt). */
export function conflictBackoff(attempt: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.random() * Math.min(1000, 10 * 2 ** attempt)));
}

/** Largest `Limit` sent with a Query (DynamoDB takes a 32-bit integer; each Query stops at 1 MB anyway). */
export const MAX_QUERY_LIMIT = 1_000_000;

/** Resends of a transaction whose outcome is unknown (a network error, a 5xx other than busy). */
const AMBIGUOUS_RESENDS = 2;

function mayHaveCommitted(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  if (isEngineBusy(error)) return false;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500;
  // No HTTP answer: a socket error or a timeout.
  return ['TimeoutError', 'RequestTimeout', 'AbortError'].includes(e.name ?? '') || /ECONNRESET|EPIPE|ETIMEDOUT|socket hang up/i.test(String((error as Error)?.message));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends ONE TransactWriteItems, its change events stamped immediately before each attempt
 * (records-keys.ts restampEvents), so that an event's position trails its commit by at most one
 * request's time. The SDK's own retries would resend the old stamp, so the client used retries
 * nothing itself:
 * - engine busy (throttling, DynamoDB Local's lock timeout; nothing written): retried in place
 *   with jitter (busy.ts), restamped, under a new request token;
 * - outcome unknown (network error, other 5xx): resent unchanged with the SAME
 *   ClientRequestToken, so DynamoDB applies it at most once (its stamp is the first attempt's,
 *   when it was first sent);
 * - anything else (TransactionCanceledException included) is the caller's to handle.
 */
export async function sendTransaction(items: readonly TransactItem[]): Promise<void> {
  const events = tableName('events');
  await whileBusy(async () => {
    const input = { TransactItems: restampEvents(items, events, new Date().toISOString()), ClientRequestToken: randomUUID() };
    for (let resend = 0; ; resend++) {
      try {
        await dbOnce().send(new TransactWriteCommand(input));
        return;
      } catch (error) {
        if (resend >= AMBIGUOUS_RESENDS || !mayHaveCommitted(error)) throw error;
        await sleep(50 + Math.random() * 100 * 2 ** resend);
      }
    }
  });
}

/**
 * ONE TransactWriteItems. A failed condition on the first item (the record) is a WriteConflict;
 * on a uniqueness item (shared/data/unique-keys.ts), 409 UNIQUE_VIOLATION naming the field(s).
 * Another transaction on the same items at the same moment (two writes adding to one counter
 * item) cancels with TransactionConflict and nothing written: that is retried with jittered
 * back-off, the counters moved to another shard each time (CONFLICT_ATTEMPTS in all), then 503.
 */
export async function transact(sent: TransactItem[]): Promise<void> {
  let items = sent;
  for (let attempt = 1; ; attempt++) {
    try {
      await sendTransaction(items);
      return;
    } catch (error) {
      const e = error as { name?: string; CancellationReasons?: { Code?: string }[] };
      if (e.name !== 'TransactionCanceledException') throw error;
      const reasons = e.CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') throw new WriteConflict();
      // A uniqueness item's condition: another record holds the value (409, not a version conflict).
      const taken = uniqueClashes(items, reasons);
      if (taken.fields.length) throw new UniqueViolationError(taken.entity, taken.fields);
      const conflict = reasons.some((r) => r.Code === 'TransactionConflict') && !reasons.some((r) => r.Code === 'ConditionalCheckFailed');
      if (!conflict) throw error;
      if (attempt >= CONFLICT_ATTEMPTS) throw new ServiceUnavailableError('The records are busy; retry shortly');
      await conflictBackoff(attempt);
      items = reshard(items, randomShard());
    }
  }
}

/**
 * The unique fields whose uniqueness Put failed its condition in a cancelled transaction (the
 * reasons are in the order of the items), and the entity's slug.
 */
export function uniqueClashes(items: readonly TransactItem[], reasons: readonly { Code?: string }[]): { entity: string; fields: string[] } {
  const fields: string[] = [];
  let slug = '';
  items.forEach((item, i) => {
    const field = uniquePutField(item);
    if (field === undefined || reasons[i]?.Code !== 'ConditionalCheckFailed') return;
    if (!fields.includes(field)) fields.push(field);
    slug = String(item.Put!.Item!.entity);
  });
  return { entity: slug, fields };
}

/** A listing copy read: its sort key and the record it stands for (whole). */
interface Copy {
  sk: string;
  record: StoredRecord;
}

/**
 * The stored records of these ids, each looked up in its tenant (the records behind copies, an
 * import's records that exist already), by id: ONE strongly consistent BatchGetItem per 100
 * (unprocessed keys retried).
 */
export async function readRecords(entity: LoadedEntity, wanted: readonly { id: string; tenantId: string | undefined }[]): Promise<Map<string, StoredRecord>> {
  if (wanted.length === 0) return new Map();
  const found = await batchGet([{ table: 'records', keys: wanted.map((r) => recordKey(entity, r.id, r.tenantId)) }]);
  const out = new Map<string, StoredRecord>();
  for (const item of found.values()) {
    const record = fromItem(item);
    out.set(record.id, record);
  }
  return out;
}

/**
 * Listing copies of `partition` (in the order given) → whole records. Full copies are the record;
 * partial ones (those `mayKeep` does not already rule out from the values they hold) are replaced
 * by their record, read in one go. A record gone by then, or no longer listed in this partition at
 * this place (another filter value, soft-deleted, another owner), is dropped: a page never shows a
 * record its partition no longer holds.
 */
export async function resolveCopies(
  entity: LoadedEntity,
  partition: string,
  items: readonly Record<string, unknown>[],
  mayKeep: (copy: StoredRecord) => boolean = () => true,
): Promise<Copy[]> {
  const wanted = items.filter((item) => isPartialCopy(item)).map(fromItem).filter(mayKeep);
  const fetched = await readRecords(entity, wanted);
  const out: Copy[] = [];
  for (const item of items) {
    const sk = String(item.sk);
    if (!isPartialCopy(item)) {
      out.push({ sk, record: fromItem(item) });
      continue;
    }
    const record = fetched.get(String(item.id));
    if (!record || listingSortKey(record) !== sk || !listingPartitions(entity, record).includes(partition)) continue;
    out.push({ sk, record });
  }
  return out;
}

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
  return items.reduce((n, item) => n + (isCounterKey(item.sk) ? Number(item[attribute] ?? 0) : 0), 0);
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
  entity: LoadedEntity,
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
    copies.push(...(await resolveCopies(entity, partition, raw)));
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
  entity: LoadedEntity,
  partition: string,
  condition: { op: '>' | '>='; sk: string },
  want: number,
  slack = 0,
): Promise<{ counters: Record<string, unknown>[]; copies: Copy[] }> {
  const keys = shardKeys(partition, shardCount(entity));
  if (keys.length === 1) return readCopies(entity, partition, condition, want, slack);
  const counters: Record<string, unknown>[] = [];
  const readers = keys.map(
    (key): ShardReader<Copy> =>
      async (after, n) => {
        const read = await readCopies(entity, key, after === undefined ? condition : { op: '>', sk: after }, n, after === undefined ? slack : 0);
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
export async function firstPage(entity: LoadedEntity, source: TotalSource, limit: number): Promise<PartitionPage> {
  const [{ counters, copies }, share] = await Promise.all([readMerged(entity, source.partition, FROM_COUNTER, limit + 1, source.ownCounters ?? COUNTER_ITEMS), baseShare(source)]);
  return { ...pageOf(copies, limit), total: sumOf(counters, 'count') + share };
}

/** Up to `limit` records after a sort key (a cursor or the end of skipped entries), and whether more follow. */
export async function pageAfter(entity: LoadedEntity, partition: string, afterSk: string, limit: number): Promise<PartitionPage> {
  if (limit <= 0) return { records: [], more: false };
  return pageOf((await readMerged(entity, partition, { op: '>', sk: afterSk }, limit + 1)).copies, limit);
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

/** A total from the partition's counter items and, for a field partition, its base's: read in parallel. */
async function totalOf(source: TotalSource, itemsOf: (partition: string) => Promise<Record<string, unknown>[]>): Promise<number> {
  const [own, base] = await Promise.all([itemsOf(source.partition), source.base && source.attribute ? itemsOf(source.base) : []]);
  return sumOf(own, 'count') + (source.attribute ? sumOf(base, source.attribute) : 0);
}

/** A partition's total: ONE Query of its counter items per shard (twice that for a field partition), in parallel. */
export function readCounter(source: TotalSource): Promise<number> {
  return totalOf(source, (partition) => counterItems(partition, source.shards));
}

/** The first `limit` records of a partition in default order (included children; past 1 MB too). */
export async function queryPartition(entity: LoadedEntity, partition: string, limit: number): Promise<StoredRecord[]> {
  return (await readMerged(entity, partition, COPIES_ONLY, limit)).copies.map((c) => c.record);
}

export interface BatchRequest {
  table: 'records' | 'identity';
  keys: Key[];
}

const BATCH_MAX = 100;

/**
 * Many items from one or more tables in as few BatchGetItem calls as the 100-key limit allows
 * (unprocessed keys are retried). Results keyed by table id, then `pk|sk`.
 */
export async function batchGet(requests: BatchRequest[]): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const pending: { table: string; id: string; key: Key }[] = [];
  const seen = new Set<string>();
  for (const request of requests) {
    const table = tableName(request.table);
    for (const key of request.keys) {
      const id = `${request.table}|${key.pk}|${key.sk}`;
      if (seen.has(id)) continue;
      seen.add(id);
      pending.push({ table, id, key });
    }
  }
  const byTableName = new Map(requests.map((r) => [tableName(r.table), r.table]));
  for (let i = 0; i < pending.length; i += BATCH_MAX) {
    let chunk: Record<string, { Keys: Key[]; ConsistentRead: boolean }> = {};
    for (const p of pending.slice(i, i + BATCH_MAX)) (chunk[p.table] ??= { Keys: [], ConsistentRead: true }).Keys.push(p.key);
    for (let attempt = 0; Object.keys(chunk).length > 0; attempt++) {
      const out = await db().send(new BatchGetCommand({ RequestItems: chunk }));
      for (const [table, items] of Object.entries(out.Responses ?? {})) {
        const id = byTableName.get(table);
        for (const item of items) found.set(`${id}|${String(item.pk)}|${String(item.sk)}`, item);
      }
      const unprocessed = out.UnprocessedKeys ?? {};
      chunk = {};
      for (const [table, value] of Object.entries(unprocessed)) {
        if (value.Keys?.length) chunk[table] = { Keys: value.Keys as Key[], ConsistentRead: true };
      }
      if (Object.keys(chunk).length && attempt >= 5) throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
      if (Object.keys(chunk).length) await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    }
  }
  return found;
}

export function batchKey(table: 'records' | 'identity', key: Key): string {
  return `${table}|${key.pk}|${key.sk}`;
}

export interface ReadAllOptions {
  /** Inclusive bounds on the sort key (listing copies only: both start with digits). */
  range?: { lo: string; hi: string };
  /**
   * A FilterExpression evaluated by DynamoDB (shared/query/expression.ts builds it). Partial
   * copies pass it whatever it says (they may lack the values it tests): `keep` decides on their
   * records.
   */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
  /** Records kept, tested as each Query's items arrive (only those are held in memory). */
  keep?: (record: StoredRecord) => boolean;
  /**
   * Whether a partial copy may be kept, judged on the values it holds (false: its record is not
   * fetched). Without it every partial copy's record is fetched.
   */
  mayKeep?: (copy: StoredRecord) => boolean;
}

/** Names the partial-copy escape of a pushed-down filter uses (never produced by the filter builder). */
const PARTIAL_NAMES = { '#partialCopy': 'partial' };
const PARTIAL_VALUES = { ':partialCopy': true };

/** Whether an expression is one parenthesised group (DynamoDB refuses redundant parentheses). */
function enclosed(expression: string): boolean {
  if (!expression.startsWith('(') || !expression.endsWith(')')) return false;
  let depth = 0;
  for (let i = 0; i < expression.length; i++) {
    if (expression[i] === '(') depth += 1;
    else if (expression[i] === ')') depth -= 1;
    if (depth === 0 && i < expression.length - 1) return false;
  }
  return true;
}

/** `(<filter>) OR partial = true`: a partial copy is never dropped by a test on a value it may lack. */
export function withPartialCopies(filter: NonNullable<ReadAllOptions['filter']>): NonNullable<ReadAllOptions['filter']> {
  return {
    expression: `${enclosed(filter.expression) ? filter.expression : `(${filter.expression})`} OR #partialCopy = :partialCopy`,
    names: { ...filter.names, ...PARTIAL_NAMES },
    values: { ...filter.values, ...PARTIAL_VALUES },
  };
}

/**
 * Every record listed in a partition (in listing order) that passes the pushed-down filter and
 * `keep`: Query after Query (1 MB each) until the partition ends. Never a Scan. The partial copies
 * of each Query's answer are resolved with one BatchGetItem per 100 (resolveCopies) before `keep`
 * sees them. Cost: the partition's copies in the key range are read (and billed) whether or not
 * they match, plus the records of the partial copies `mayKeep` lets through.
 */
export async function queryAll(entity: LoadedEntity, partition: string, options: ReadAllOptions = {}): Promise<StoredRecord[]> {
  const keys = shardKeys(partition, shardCount(entity));
  if (keys.length === 1) return (await queryShard(entity, partition, options)).map((c) => c.record);
  const shards = await Promise.all(keys.map((key) => queryShard(entity, key, options)));
  return mergeSorted(shards, (c) => c.sk).map((c) => c.record);
}

/** queryAll of one partition key: the copies kept, in listing order. */
async function queryShard(entity: LoadedEntity, partition: string, options: ReadAllOptions): Promise<Copy[]> {
  const range = options.range ?? { lo: '0', hi: '9999999999999#\uffff' };
  const filter = options.filter ? withPartialCopies(options.filter) : undefined;
  const records: Copy[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName('records'),
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lo AND :hi',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', ...(filter?.names ?? {}) },
        ExpressionAttributeValues: { ':pk': partition, ':lo': range.lo, ':hi': range.hi, ...(filter?.values ?? {}) },
        ...(filter ? { FilterExpression: filter.expression } : {}),
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const copy of await resolveCopies(entity, partition, out.Items ?? [], options.mayKeep)) {
      if (!options.keep || options.keep(copy.record)) records.push(copy);
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return records;
}

/** Several partitions' totals: one Query per counter key range, in parallel (a shared base read once). */
export async function readCounters(sources: TotalSource[]): Promise<Map<string, number>> {
  const reads = new Map<string, Promise<Record<string, unknown>[]>>();
  const itemsOf = (shards: number | undefined) => (partition: string) => {
    if (!reads.has(partition)) reads.set(partition, counterItems(partition, shards));
    return reads.get(partition)!;
  };
  const totals = await Promise.all(sources.map((s) => totalOf(s, itemsOf(s.shards))));
  return new Map(sources.map((s, i) => [s.partition, totals[i]]));
}
