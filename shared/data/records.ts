/**
 * I/O of the records and events tables: every request built by records-keys.ts (pure) is sent
 * here. Reads are strongly consistent (the records table has no GSI: listing copies live in the
 * table itself), so a LIST right after a write shows it.
 */
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ServiceUnavailableError } from '../errors.js';
import type { LoadedEntity } from '../registry/types.js';
import { db, tableName } from './client.js';
import { COUNTER_SK, counterKey, fromItem, recordKey, type Key, type StoredRecord, type TableNames, type TransactItem } from './records-keys.js';

export function recordTables(): TableNames {
  return { records: tableName('records'), events: tableName('events') };
}

/** Longest id looked up (generated ids are 24 or 36 characters). */
export const MAX_ID_LENGTH = 200;

/** The record's version changed (or it vanished) between our read and our write. */
export class WriteConflict extends Error {
  constructor() {
    super('The record changed while it was being written');
    this.name = 'WriteConflict';
  }
}

/** One record by id: ONE GetItem (strongly consistent). Soft-deleted records are returned; callers decide. */
export async function getRecord(entity: LoadedEntity, id: string): Promise<StoredRecord | undefined> {
  // No id is that long (keys are at most 2048 bytes): not found, without asking.
  if (id.length === 0 || id.length > MAX_ID_LENGTH) return undefined;
  const { Item } = await db().send(new GetCommand({ TableName: tableName('records'), Key: recordKey(entity, id), ConsistentRead: true }));
  return Item ? fromItem(Item) : undefined;
}

const CONFLICT_ATTEMPTS = 5;

/** Largest `Limit` sent with a Query (DynamoDB takes a 32-bit integer; each Query stops at 1 MB anyway). */
export const MAX_QUERY_LIMIT = 1_000_000;

/**
 * ONE TransactWriteItems. A failed condition on the first item (the record) is a WriteConflict.
 * Another transaction on the same items at the same moment (two writes bumping one counter)
 * cancels with TransactionConflict and nothing written: that is retried with jittered back-off,
 * then answered 503.
 */
export async function transact(items: TransactItem[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return;
    } catch (error) {
      const e = error as { name?: string; CancellationReasons?: { Code?: string }[] };
      if (e.name !== 'TransactionCanceledException') throw error;
      const reasons = e.CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') throw new WriteConflict();
      const conflict = reasons.some((r) => r.Code === 'TransactionConflict') && !reasons.some((r) => r.Code === 'ConditionalCheckFailed');
      if (!conflict) throw error;
      if (attempt >= CONFLICT_ATTEMPTS) throw new ServiceUnavailableError('The records are busy; retry shortly');
      await new Promise((r) => setTimeout(r, Math.random() * 20 * 2 ** attempt));
    }
  }
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

/** From the counter on: `#count` sorts before every listing copy (their keys start with digits). */
const FROM_COUNTER = { op: '>=', sk: COUNTER_SK } as const;
/** Listing copies only. */
const COPIES_ONLY = { op: '>', sk: COUNTER_SK } as const;

/**
 * Up to `want` items of a partition from a key condition on, in listing order. One Query stops at
 * 1 MB (a few dozen large records), so the read continues from LastEvaluatedKey until `want`
 * items are in or the partition ends: a page is never cut short by the size of its records.
 */
async function readItems(partition: string, condition: { op: '>' | '>='; sk: string }, want: number): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(new QueryCommand(listingQuery(partition, condition, want - items.length, start ? { ExclusiveStartKey: start } : {})));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length < want);
  return items;
}

function pageOf(copies: Record<string, unknown>[], limit: number): PartitionPage {
  const page = copies.slice(0, limit);
  return { records: page.map(fromItem), lastSk: page.length ? String(page[page.length - 1].sk) : undefined, more: copies.length > limit };
}

/**
 * The first page of a partition and its total: the counter, then up to `limit` copies and one
 * more (which tells whether anything follows). ONE Query unless the records pass 1 MB.
 */
export async function firstPage(partition: string, limit: number): Promise<PartitionPage> {
  const items = await readItems(partition, FROM_COUNTER, limit + 2);
  let total = 0;
  const copies: Record<string, unknown>[] = [];
  for (const item of items) {
    if (item.sk === COUNTER_SK) total = Number(item.count ?? 0);
    else copies.push(item);
  }
  return { ...pageOf(copies, limit), total };
}

/** Up to `limit` copies after a sort key (a cursor or the end of skipped entries), and whether more follow. */
export async function pageAfter(partition: string, afterSk: string, limit: number): Promise<PartitionPage> {
  if (limit <= 0) return { records: [], more: false };
  return pageOf(await readItems(partition, { op: '>', sk: afterSk }, limit + 1), limit);
}

/**
 * Skips the first `count` copies of a partition reading keys only (ProjectionExpression; each
 * Query returns at most 1 MB), and reads the counter on the way. `lastSk` is the sort key of the
 * last skipped copy; undefined when the partition has fewer copies than `count`.
 */
export async function skipEntries(partition: string, count: number): Promise<{ total: number; lastSk?: string }> {
  let total = 0;
  let counterSeen = false;
  let seen = 0;
  let lastSk: string | undefined;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand(
        listingQuery(partition, FROM_COUNTER, Math.min(count - seen + (counterSeen ? 0 : 1), MAX_QUERY_LIMIT), {
          ProjectionExpression: '#sk, #count',
          ExpressionAttributeNames: { '#count': 'count' },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      ),
    );
    for (const item of out.Items ?? []) {
      if (item.sk === COUNTER_SK) {
        counterSeen = true;
        total = Number(item.count ?? 0);
        // Asked to skip past the end: nothing more to read.
        if (total <= count) return { total };
        continue;
      }
      seen += 1;
      lastSk = String(item.sk);
    }
    start = out.LastEvaluatedKey;
  } while (start && seen < count);
  return { total, lastSk: seen >= count ? lastSk : undefined };
}

/** A partition's counter: ONE GetItem. */
export async function readCounter(partition: string): Promise<number> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName('records'), Key: counterKey(partition), ConsistentRead: true }));
  return Number(Item?.count ?? 0);
}

/** The first `limit` copies of a partition in default order (included children; past 1 MB too). */
export async function queryPartition(partition: string, limit: number): Promise<StoredRecord[]> {
  return (await readItems(partition, COPIES_ONLY, limit)).map(fromItem);
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
  /** A FilterExpression evaluated by DynamoDB (shared/query/expression.ts builds it). */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
}

/**
 * Every listing copy of a partition (in listing order) that passes the pushed-down filter:
 * Query after Query (1 MB each) until the partition ends. Never a Scan. Cost: the partition's
 * copies in the key range are read (and billed) whether or not they match.
 */
export async function queryAll(partition: string, options: ReadAllOptions = {}): Promise<StoredRecord[]> {
  const range = options.range ?? { lo: '0', hi: '9999999999999#\uffff' };
  const records: StoredRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName('records'),
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lo AND :hi',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', ...(options.filter?.names ?? {}) },
        ExpressionAttributeValues: { ':pk': partition, ':lo': range.lo, ':hi': range.hi, ...(options.filter?.values ?? {}) },
        ...(options.filter ? { FilterExpression: options.filter.expression } : {}),
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of out.Items ?? []) records.push(fromItem(item));
    start = out.LastEvaluatedKey;
  } while (start);
  return records;
}

/** Several partitions' counters: ONE BatchGetItem. */
export async function readCounters(partitions: string[]): Promise<Map<string, number>> {
  const found = await batchGet([{ table: 'records', keys: partitions.map(counterKey) }]);
  return new Map(partitions.map((p) => [p, Number(found.get(batchKey('records', counterKey(p)))?.count ?? 0)]));
}
