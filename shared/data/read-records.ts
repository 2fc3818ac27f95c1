/**
 * Reading records by id: ONE strongly consistent GetItem for one, ONE BatchGetItem per 100 keys for
 * many (unprocessed keys retried), and the records behind the partial copies a listing read met
 * (resolveCopies). While a change of write shards is migrated a record may stand under either
 * count (partitions.ts recordKeys): its keys under both are read in one BatchGetItem, and the
 * record item taken, never a copy. Every record comes back as the layout shows it (items.ts fromItem).
 */
import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import type { LiveLayout } from './layout.js';
import { fromItem, isPartialCopy } from './items.js';
import { listingPartitions, shardsChangingError } from './listings.js';
import { listingSortKey, movedKeys, recordKeys } from './partitions.js';
import type { Key, StoredRecord } from './record-item.js';

/** Longest id looked up (generated ids are 36 characters, or 23 plus the prefix). */
export const MAX_ID_LENGTH = 200;

/**
 * The record item among the items read at a record's keys (partitions.ts recordKeys): the one of
 * kind 'record'. Undefined when none was found; `moved` when only listing copies were: the record
 * stood where it was looked for, and a write has moved it since, under a count the keys did not
 * name (or between the reads of one BatchGetItem, which are not one snapshot).
 */
export function recordAmong(items: readonly (Record<string, unknown> | undefined)[]): Record<string, unknown> | undefined | 'moved' {
  const found = items.filter((item): item is Record<string, unknown> => item !== undefined);
  // (Detached record items of earlier versions carry kind 'record' too.)
  return found.find((item) => item.kind === 'record') ?? (found.length ? 'moved' : undefined);
}

/**
 * The record items at the keys of each wanted record (recordKeys), read in as few BatchGetItem
 * calls as they take. A record met only as copies moved: between two reads of the batch, or under
 * a count of write shards this process has not read of yet (movedKeys). It is read again once at
 * those keys too, then refused (503, retry once this process has read the change).
 */
async function readRecordItems(layout: LiveLayout, wanted: readonly { id: string; tenantId: string | undefined }[], byId = false): Promise<(Record<string, unknown> | undefined)[]> {
  const pick = (found: Map<string, Record<string, unknown>>, keys: readonly Key[]) => recordAmong(keys.map((k) => found.get(batchKey('records', k))));
  const keys = wanted.map((r) => recordKeys(layout, r.id, r.tenantId));
  // One record at one key (a read by id, no change under way): a GetItem.
  const first = byId && keys[0].length === 1 ? await getOne(keys[0][0]) : await batchGet([{ table: 'records', keys: keys.flat() }]);
  const out = keys.map((k) => pick(first, k));
  const moved = wanted.map((r, i) => (out[i] === 'moved' ? [...keys[i], ...movedKeys(layout, r.id, r.tenantId)] : []));
  if (moved.some((k) => k.length)) {
    const again = await batchGet([{ table: 'records', keys: moved.flat() }]);
    moved.forEach((k, i) => {
      if (k.length) out[i] = pick(again, k);
    });
  }
  return out.map((item) => {
    if (item === 'moved') throw shardsChangingError(layout.entity.slug);
    return item;
  });
}

/**
 * What a batchGet found at the keys of one item: for the records table, the record item among its
 * keys (recordKeys; 503 when only listing copies were found: see recordAmong); for the identity
 * table, the item at its one key.
 */
export function foundAt(found: ReadonlyMap<string, Record<string, unknown>>, table: BatchRequest['table'], keys: readonly Key[], entity: string): Record<string, unknown> | undefined {
  if (table !== 'records') return found.get(batchKey(table, keys[0]));
  const item = recordAmong(keys.map((k) => found.get(batchKey(table, k))));
  if (item === 'moved') throw shardsChangingError(entity);
  return item;
}

/** One item by key (ONE strongly consistent GetItem), as batchGet answers. */
async function getOne(key: Key): Promise<Map<string, Record<string, unknown>>> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName('records'), Key: key, ConsistentRead: true }));
  return new Map(Item ? [[batchKey('records', key), Item]] : []);
}

/**
 * One record by id, as `tenantId` (the caller's tenant; none for an anonymous caller) may find it:
 * ONE GetItem (strongly consistent), or while a change of write shards is migrated ONE
 * BatchGetItem of its keys under each count. A soft-deleted record of an earlier version's id is
 * returned (callers decide); one whose id carries its time is no longer where reads look.
 */
export async function getRecord(layout: LiveLayout, id: string, tenantId: string | undefined): Promise<StoredRecord | undefined> {
  // No id is that long (keys are at most 2048 bytes): not found, without asking.
  if (id.length === 0 || id.length > MAX_ID_LENGTH) return undefined;
  const [item] = await readRecordItems(layout, [{ id, tenantId }], true);
  return item ? fromItem(layout, item) : undefined;
}

/** A listing copy read: its sort key and the record it stands for (whole). */
export interface Copy {
  sk: string;
  record: StoredRecord;
}

/**
 * The stored records of these ids, each looked up in its tenant (the records behind copies, an
 * import's records that exist already), by id: ONE strongly consistent BatchGetItem per 100 keys
 * (unprocessed keys retried; each record's keys under every count while a change of write shards
 * is migrated).
 */
export async function readRecords(layout: LiveLayout, wanted: readonly { id: string; tenantId: string | undefined }[]): Promise<Map<string, StoredRecord>> {
  if (wanted.length === 0) return new Map();
  const items = await readRecordItems(layout, wanted);
  const out = new Map<string, StoredRecord>();
  for (const item of items) {
    if (!item) continue;
    const record = fromItem(layout, item);
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
  layout: LiveLayout,
  partition: string,
  items: readonly Record<string, unknown>[],
  mayKeep: (copy: StoredRecord) => boolean = () => true,
): Promise<Copy[]> {
  const wanted = items.filter((item) => isPartialCopy(item)).map((item) => fromItem(layout, item)).filter(mayKeep);
  const fetched = await readRecords(layout, wanted);
  const out: Copy[] = [];
  for (const item of items) {
    const sk = String(item.sk);
    if (!isPartialCopy(item)) {
      out.push({ sk, record: fromItem(layout, item) });
      continue;
    }
    const record = fetched.get(String(item.id));
    if (!record || listingSortKey(record) !== sk || !listingPartitions(layout, record).includes(partition)) continue;
    out.push({ sk, record });
  }
  return out;
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
