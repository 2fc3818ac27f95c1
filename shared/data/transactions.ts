/**
 * The TransactWriteItems of a record's create, update and delete (pure: no I/O; transact.ts sends
 * them). Each is ONE transaction, all or nothing: the record item (conditional on the version
 * read), its listing copies (listings.ts, items.ts), the counter Updates of the partitions it
 * enters and leaves (counters.ts), the uniqueness items of its unique values (unique-keys.ts) and
 * its change event (change-events.ts), all built from the one layout the write plans on.
 */
import type { LiveLayout } from './layout.js';
import { counterUpdates, randomShard, writeCounts } from './counters.js';
import { copyItem, recordItem, unchangedCopy, withMaintainedShards } from './items.js';
import { listings, type Listing } from './listings.js';
import { homeKey, listingSortKey, ownListing } from './partitions.js';
import type { StoredRecord, TableNames, TransactItem } from './record-item.js';
import { uniqueWrites, withUniques } from './unique-keys.js';

function eventPut(tables: TableNames, event: Record<string, unknown>): TransactItem {
  return { Put: { TableName: tables.events, Item: event } };
}

/**
 * A new record's Puts: the record (only if new; first), then a copy per listing partition of
 * `entered` but the one it stands in, then the uniqueness items of its unique values (each only
 * if no other record holds the value).
 */
export function newRecordPuts(layout: LiveLayout, record: StoredRecord, entered: readonly Listing[], tables: TableNames): TransactItem[] {
  const { entity } = layout;
  const own = ownListing(layout, withMaintainedShards(layout, record));
  const unique = uniqueWrites(entity, tables.records, undefined, record, layout.uniqueBuilding);
  return [
    { Put: { TableName: tables.records, Item: recordItem(layout, withUniques(record, unique.holds)), ConditionExpression: 'attribute_not_exists(pk)' } },
    ...entered.filter((l) => l.partition !== own).map((l): TransactItem => ({ Put: { TableName: tables.records, Item: copyItem(entity, l.partition, record) } })),
    ...unique.items,
  ];
}

/** Create: the record (only if new), a copy per other listing partition, +1 (and its summed values) to each (one Update per counter item), the event. */
export function createTransaction(layout: LiveLayout, record: StoredRecord, event: Record<string, unknown>, tables: TableNames, shard = randomShard()): TransactItem[] {
  const entered = listings(layout, record);
  return [...newRecordPuts(layout, record, entered, tables), ...counterUpdates(tables, writeCounts(layout, undefined, { record, listings: entered }), shard), eventPut(tables, event)];
}

/**
 * The record is still as read: the record item still stands at the key it was read at (not a
 * listing copy left in its place when a change of write shards moved it), same version, not
 * deleted, listed under the same index tokens and shard counts, summed under the same sum tokens
 * and holding the same uniqueness items (the migration runner completes those without changing
 * the version: a write planned before must not count the record twice nor drop its `uniques`).
 */
export function versionGuard(before: StoredRecord): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  const ix = before.ix === undefined ? 'attribute_not_exists(#ix)' : '#ix = :ix';
  const sm = before.sm === undefined ? 'attribute_not_exists(#sm)' : '#sm = :sm';
  const uniques = before.uniques === undefined ? 'attribute_not_exists(#uniques)' : '#uniques = :uniques';
  const ws = before.ws === undefined ? 'attribute_not_exists(#ws)' : '#ws = :ws';
  // A soft-deleted record is written only when restored: still deleted as read.
  const deleted = before.deletedAt === undefined ? 'attribute_not_exists(#deletedAt)' : '#deletedAt = :deletedAt';
  return {
    ConditionExpression: `attribute_exists(pk) AND #kind = :record AND #version = :version AND ${deleted} AND ${ix} AND ${sm} AND ${uniques} AND ${ws}`,
    ExpressionAttributeNames: { '#kind': 'kind', '#version': 'version', '#deletedAt': 'deletedAt', '#ix': 'ix', '#sm': 'sm', '#uniques': 'uniques', '#ws': 'ws' },
    ExpressionAttributeValues: {
      ':record': 'record',
      ':version': before.version,
      ...(before.deletedAt === undefined ? {} : { ':deletedAt': before.deletedAt }),
      ...(before.ix === undefined ? {} : { ':ix': before.ix }),
      ...(before.sm === undefined ? {} : { ':sm': before.sm }),
      ...(before.uniques === undefined ? {} : { ':uniques': before.uniques }),
      ...(before.ws === undefined ? {} : { ':ws': before.ws }),
    },
  };
}

/**
 * The record item's part of a write from `before` to `after` (`placed`: `after` as it is listed,
 * whose home decides where the item stands; `listed`: the partitions `after` is listed in): the
 * item Put where it stood under `guard` (still the record as read), or, when its home moves (soft
 * delete; a change of write shards), the item Put at its new key and its old place guarded: a
 * listing copy of `after` where the record stays listed (`vacated`: the earlier count's listing,
 * still read until the new count is complete), else deleted.
 */
export function recordWrite(
  layout: LiveLayout,
  records: { before: StoredRecord; after: StoredRecord; placed: StoredRecord },
  item: Record<string, unknown>,
  guard: ReturnType<typeof versionGuard>,
  listed: ReadonlySet<string>,
  tables: TableNames,
): { items: TransactItem[]; vacated?: string } {
  const from = homeKey(layout, records.before);
  const to = homeKey(layout, records.placed);
  if (from.pk === to.pk && from.sk === to.sk) return { items: [{ Put: { TableName: tables.records, Item: item, ...guard } }] };
  const own = ownListing(layout, records.before);
  const vacated = own !== undefined && listed.has(own) ? own : undefined;
  const left: TransactItem = vacated
    ? { Put: { TableName: tables.records, Item: copyItem(layout.entity, vacated, records.after), ...guard } }
    : { Delete: { TableName: tables.records, Key: from, ...guard } };
  return { items: [left, { Put: { TableName: tables.records, Item: item } }], vacated };
}

/**
 * Update (also a soft delete, whose `after` has deletedAt): the record if still at `before`'s
 * version (a soft-deleted record moves out of the listing it stood in: Delete there, Put at its
 * detached key; a record listed under a new count of write shards moves to that count's listing,
 * a copy in its place: recordWrite); fresh copies in every other partition of `after` (but partial copies the update
 * leaves as they are: unchangedCopy); copies removed from partitions it left;
 * counters +1 / -1 for partitions entered / left, with the record's summed values (and, in
 * partitions kept, the change of those values: no Update when none changed); values acquired and released
 * (shared/data/unique-keys.ts uniqueWrites; a soft delete releases every value held); the event.
 */
export function updateTransaction(
  layout: LiveLayout,
  before: StoredRecord,
  after: StoredRecord,
  event: Record<string, unknown>,
  tables: TableNames,
  shard = randomShard(),
): TransactItem[] {
  const { entity } = layout;
  const old = listings(layout, before, 'held');
  const now = listings(layout, after);
  const oldSet = new Set(old.map((l) => l.partition));
  const nowSet = new Set(now.map((l) => l.partition));
  const left = old.filter((l) => !nowSet.has(l.partition));
  const oldSk = listingSortKey(before);
  const placed = withMaintainedShards(layout, after);
  const ownBefore = ownListing(layout, before);
  const ownAfter = ownListing(layout, placed);
  const unique = uniqueWrites(entity, tables.records, before, after, layout.uniqueBuilding);
  const stored = withUniques(after, unique.holds);
  const record = recordWrite(layout, { before, after, placed }, recordItem(layout, stored), versionGuard(before), nowSet, tables);
  // Each copy built once (the vacated listing's by recordWrite); a partial one the update leaves as it stands is not written.
  const rewritten = now
    .filter((l) => l.partition !== ownAfter && l.partition !== record.vacated)
    .map((l) => ({ l, copy: copyItem(entity, l.partition, after) }))
    .filter(({ l, copy }) => !oldSet.has(l.partition) || !unchangedCopy(entity, l.partition, before, copy));
  return [
    ...record.items,
    ...rewritten.map(({ copy }): TransactItem => ({ Put: { TableName: tables.records, Item: copy } })),
    ...left.filter((l) => l.partition !== ownBefore).map((l): TransactItem => ({ Delete: { TableName: tables.records, Key: { pk: l.partition, sk: oldSk } } })),
    ...counterUpdates(tables, writeCounts(layout, { record: before, listings: old }, { record: after, listings: now }), shard),
    ...unique.items,
    eventPut(tables, event),
  ];
}

/** Hard delete: the record if still at `before`'s version, its other copies, -1 (and its summed values) per partition, the values it holds released, the event. */
export function deleteTransaction(layout: LiveLayout, before: StoredRecord, event: Record<string, unknown>, tables: TableNames, shard = randomShard()): TransactItem[] {
  const { entity } = layout;
  const left = listings(layout, before, 'held');
  const sk = listingSortKey(before);
  const own = ownListing(layout, before);
  return [
    { Delete: { TableName: tables.records, Key: homeKey(layout, before), ...versionGuard(before) } },
    ...left.filter((l) => l.partition !== own).map((l): TransactItem => ({ Delete: { TableName: tables.records, Key: { pk: l.partition, sk } } })),
    ...counterUpdates(tables, writeCounts(layout, { record: before, listings: left }, undefined), shard),
    ...uniqueWrites(entity, tables.records, before, undefined).items,
    eventPut(tables, event),
  ];
}
