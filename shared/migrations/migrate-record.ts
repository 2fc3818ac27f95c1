/**
 * One record taken to its migration's target layout (the runner, runner.ts, calls it for each
 * record its Scan meets), with the layout of the state it runs (live-layouts.ts layoutOfState).
 *
 * Per record of the entity (one TransactWriteItems, conditional on the record's version and index
 * tokens, so a concurrent write is never overwritten and never counted twice: the loser re-reads):
 * - defaults of new fields written, values of removed fields purged (then every copy rewritten,
 *   the version moved on and a revision kept: operation `migration`, actor `system`);
 * - copies and counts added in the partitions of each index token the record is not listed under
 *   yet (a new or rebuilt index is built from the records themselves, never from older copies);
 * - its copies in dropped indexes' partitions deleted;
 * - its values added to the counters of each sum token it is not counted under yet (a new sum is
 *   built from the records themselves), in every listing it is counted in;
 * - `ix` and `sm` set to the target tokens;
 * - a record listed under a new count of write shards moved to that count's listing (its own item
 *   there), a listing copy left in its place under the earlier count, which readers read until the
 *   new count is complete (and the purge that follows deletes with the earlier count's other copies);
 * then, per field made unique, its uniqueness item (the oldest record of a value keeps it, the
 * others are reported), and the rules a tightened definition breaks (reported, not changed).
 * Copies and counter items of dropped indexes (or of retired shard counts) that the Scan meets
 * are deleted too, and the attributes of dropped sums removed from counter items (cleanListingItem).
 */
import {
  batchGet,
  batchKey,
  copyItem,
  counterUpdates,
  detachedKey,
  dayItems,
  db,
  heldShards,
  homeKey,
  isDayPartition,
  keyShardCount,
  listings,
  listingSortKey,
  ownListing,
  randomShard,
  recordAmong,
  recordKeys,
  recordTables,
  recordWrite,
  revisionPut,
  storedFromItem,
  sumAttribute,
  tableName,
  transact,
  uniqueItem,
  versionGuard,
  withMaintainedShards,
  writeCounts,
  WriteConflict,
  type LiveLayout,
  type StoredRecord,
  type TransactItem,
} from '../data/index.js';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LoadedEntity } from '../registry/index.js';
import { canonical } from '../canonical-json.js';
import { removedKeys } from './layout.js';
import { ruleViolations } from './rules.js';
import { reportItem, type MigrationState, type ReportEntry } from './state.js';

/** The part of a partition key after the entity's table name, if it is a partition of this entity. */
function partitionParts(entity: LoadedEntity, pk: string): string[] | undefined {
  const parts = pk.split('#');
  if (parts[0] === entity.tableName) return parts.slice(1);
  if (parts[1] === entity.tableName && parts[0] !== '') return parts.slice(2);
  return undefined;
}

function underToken(parts: string[], tokens: readonly string[]): boolean {
  return parts.some((p) => tokens.some((t) => p.startsWith(`${t}=`)));
}

/** Whether a counter item's attribute is a sum (or number of values) kept under one of `tokens` (record-item.ts sumAttribute). */
function sumUnder(name: string, tokens: readonly string[]): boolean {
  return tokens.some((t) => (['s', 'n'] as const).some((kind) => name === sumAttribute('count', kind, t) || name.endsWith(sumAttribute('', kind, t))));
}

/**
 * A listing copy or counter item of a dropped index or of a retired shard count, or a day counter
 * item of dropped day counts (deleted), or a counter item with counts of a dropped index or sums
 * of a dropped sum (cleared).
 */
export async function cleanListingItem(entity: LoadedEntity, state: MigrationState, item: Record<string, unknown>): Promise<void> {
  const obsolete = state.target.obsolete.map((i) => i.token);
  const retired = state.target.retiredShards ?? [];
  const droppedSums = state.target.droppedSums ?? [];
  if (obsolete.length === 0 && retired.length === 0 && droppedSums.length === 0) return;
  const parts = partitionParts(entity, String(item.pk));
  if (!parts) return;
  const ofDroppedDays = item.kind === 'counter' && isDayPartition(String(item.pk)) && droppedSums.some((t) => String(item.sk).startsWith(dayItems(t)));
  if (underToken(parts, obsolete) || retired.includes(keyShardCount(String(item.pk))) || ofDroppedDays) {
    await db().send(new DeleteCommand({ TableName: tableName('records'), Key: { pk: item.pk, sk: item.sk } }));
    return;
  }
  if (item.kind !== 'counter') return;
  const stale = Object.keys(item).filter((name) => (name.startsWith('#') && obsolete.some((t) => name.startsWith(`#${t}=`))) || sumUnder(name, droppedSums));
  if (stale.length === 0) return;
  await db().send(
    new UpdateCommand({
      TableName: tableName('records'),
      Key: { pk: item.pk, sk: item.sk },
      UpdateExpression: `REMOVE ${stale.map((_, i) => `#a${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(stale.map((name, i) => [`#a${i}`, name])),
      ConditionExpression: 'attribute_exists(pk)',
    }),
  ).catch((error: { name?: string }) => {
    if (error.name !== 'ConditionalCheckFailedException') throw error;
  });
}

/** The record as the target layout stores it: defaults written, removed fields purged. */
function targetData(state: MigrationState, data: Record<string, unknown>): Record<string, unknown> {
  const out = { ...data };
  for (const [name, value] of Object.entries(state.target.layout.defaults)) if (out[name] === undefined) out[name] = value;
  for (const key of removedKeys(state.target.layout, out)) delete out[key];
  return out;
}

/** versionGuard of a write, but a soft-deleted record (detached) is migrated too. */
function guard(before: StoredRecord): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  // A soft-deleted record's guard already asks it to be deleted as read (`#deletedAt = :deletedAt`).
  if (before.deletedAt !== undefined) return versionGuard(before);
  const { ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues } = versionGuard(before);
  const { '#deletedAt': _deletedAt, ...names } = ExpressionAttributeNames;
  return { ConditionExpression: ConditionExpression.replace(' AND attribute_not_exists(#deletedAt)', ''), ExpressionAttributeNames: names, ExpressionAttributeValues };
}

/** The record as the target layout stores it (what migrateTransaction writes): data, tokens and shard counts. */
export function migratedRecord(layout: LiveLayout, state: MigrationState, raw: StoredRecord): StoredRecord {
  const data = targetData(state, raw.data ?? {});
  const dataChanged = canonical(data) !== canonical(raw.data ?? {});
  // Changed values are a new version (a stale If-Match no longer matches) with its revision; a
  // change of listings alone is not.
  const version = dataChanged ? raw.version + 1 : raw.version;
  const sums = layout.sumTokens;
  const { sm: _sm, ...kept } = withMaintainedShards(layout, raw);
  return { ...kept, data, ix: state.target.indexes.map((i) => i.token), ...(sums.length ? { sm: [...sums] } : {}), version, ...(dataChanged ? { copiesVersion: version } : {}) };
}

/** The transaction taking one stored record to the target layout; none when it is there already. */
export function migrateTransaction(layout: LiveLayout, state: MigrationState, raw: StoredRecord): TransactItem[] | undefined {
  const tokens = state.target.indexes.map((i) => i.token);
  const held = raw.ix ?? state.target.legacy;
  const data = targetData(state, raw.data ?? {});
  const dataChanged = canonical(data) !== canonical(raw.data ?? {});
  const missing = tokens.filter((t) => !held.includes(t));
  const dropped = held.filter((t) => !tokens.includes(t));
  const shards = layout.shards.maintained;
  const heldSets = heldShards(raw);
  const shardsChanged = canonical(heldSets) !== canonical(shards);
  const sums = layout.sumTokens;
  const sumsChanged = canonical(raw.sm ?? []) !== canonical(sums);
  if (!dataChanged && missing.length === 0 && dropped.length === 0 && !shardsChanged && !sumsChanged && raw.ix !== undefined) return undefined;
  const tables = recordTables();
  const after = migratedRecord(layout, state, raw);
  const own = ownListing(layout, after);
  // The target listings (the layout is this state's): those of tokens or shard counts the record
  // is not listed under yet are added and counted; in the others, only what changed is counted
  // (sums it is not counted under yet, values a default fills in).
  const now = listings(layout, after);
  const was = listings(layout, { ...raw, ix: held }, 'held');
  const before = new Set(was.map((l) => l.partition));
  const added = now.filter((l) => !before.has(l.partition));
  const staying = new Set(now.map((l) => l.partition));
  // The record item moves when it is listed under a new count of write shards (partitions.ts
  // homeShards): its place under the earlier count becomes a listing copy (recordWrite).
  const ownBefore = ownListing(layout, raw);
  const record = recordWrite(layout, { before: raw, after, placed: after }, { ...homeKey(layout, after), kind: 'record', ...after }, guard(raw), staying, tables);
  const copies = now.filter((l) => l.partition !== own && l.partition !== record.vacated && (dataChanged || added.includes(l)));
  // The partitions of dropped tokens and left shard counts it was listed under (never counted); the record's own is its item's.
  const gone = was.filter((l) => !staying.has(l.partition) && l.partition !== ownBefore).map((l) => l.partition);
  return [
    ...record.items,
    ...copies.map((l): TransactItem => ({ Put: { TableName: tables.records, Item: copyItem(layout.entity, l.partition, after) } })),
    ...gone.map((partition): TransactItem => ({ Delete: { TableName: tables.records, Key: { pk: partition, sk: listingSortKey(raw) } } })),
    ...counterUpdates(tables, writeCounts(layout, { record: raw, listings: was }, { record: after, listings: now }), randomShard()),
    ...(dataChanged ? revisionPut(layout.entity, tables.history, raw, after, MIGRATION_WRITE) : []),
  ];
}

/** How a migration's change of values is described in the record's history. */
const MIGRATION_WRITE = { operation: 'migration', actor: { type: 'system', id: 'migration' } } as const;

/**
 * The record as stored now, wherever it stands: detached (soft-deleted) or in its tenant's listing
 * under any count of write shards the layout knows (one BatchGetItem), the record item of those.
 */
async function reread(layout: LiveLayout, record: StoredRecord): Promise<StoredRecord | undefined> {
  const keys = [detachedKey(layout.entity, record.id), ...recordKeys(layout, record.id, record.tenantId)];
  for (let attempt = 0; attempt < 5; attempt++) {
    const found = await batchGet([{ table: 'records', keys }]);
    const item = recordAmong(keys.map((k) => found.get(batchKey('records', k))));
    // Only copies: it moved between two reads of the batch (the reads are not one snapshot).
    if (item !== 'moved') return item ? storedFromItem(item) : undefined;
  }
  throw new Error(`record ${record.id} of ${layout.entity.slug}: only listing copies found where it stands`);
}

async function report(state: MigrationState, entry: ReportEntry): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName('records'), Item: reportItem(state.entity, state.run, entry) }));
}

async function unreport(state: MigrationState, entry: Pick<ReportEntry, 'kind' | 'recordId' | 'field'>): Promise<void> {
  const item = reportItem(state.entity, state.run, { ...entry, detail: '' });
  await db().send(new DeleteCommand({ TableName: tableName('records'), Key: { pk: item.pk, sk: item.sk } }));
}

function older(a: StoredRecord, b: StoredRecord): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);
}

function addUnique(layout: LiveLayout, record: StoredRecord, field: string, extra: TransactItem[] = []): TransactItem[] {
  return [
    {
      Update: {
        TableName: tableName('records'),
        Key: homeKey(layout, record),
        UpdateExpression: 'SET #uniques = list_append(if_not_exists(#uniques, :none), :field)',
        // (still the record item there, not a copy left when a write moved it; a write planned on the
        // record before this fails its guard on `uniques` and re-reads)
        ConditionExpression: '#kind = :record AND #version = :version',
        ExpressionAttributeNames: { '#uniques': 'uniques', '#version': 'version', '#kind': 'kind' },
        ExpressionAttributeValues: { ':none': [], ':field': [field], ':version': record.version, ':record': 'record' },
      },
    },
    ...extra,
  ];
}

function isCancelled(error: unknown): boolean {
  return (error as { name?: string }).name === 'TransactionCanceledException';
}

/**
 * The uniqueness item of one field's value for a record stored before the field was unique. The
 * oldest record of a value (createdAt, then id) ends up holding it: a younger holder met first
 * hands it over (one transaction: both records and the item, each conditional); the others are
 * reported as duplicates. Returns false when the record changed meanwhile (the caller re-reads).
 */
async function backfillUnique(layout: LiveLayout, state: MigrationState, record: StoredRecord, field: string): Promise<boolean> {
  const { entity } = layout;
  const value = record.data[field];
  const item = uniqueItem(entity, record, field, value);
  const key = { pk: item.pk, sk: item.sk };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: addUnique(layout, record, field, [{ Put: { TableName: tableName('records'), Item: item, ConditionExpression: 'attribute_not_exists(pk)' } }]) }));
      return true;
    } catch (error) {
      if (!isCancelled(error)) throw error;
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return false;
      if (reasons[1]?.Code !== 'ConditionalCheckFailed') continue;
    }
    const { Item: holding } = await db().send(new GetCommand({ TableName: tableName('records'), Key: key, ConsistentRead: true }));
    if (!holding) continue;
    const holderId = String(holding.recordId);
    if (holderId === record.id) return true;
    const holder = await reread(layout, { ...record, id: holderId, tenantId: String(holding.tenantId), deletedAt: undefined });
    if (holder && !older(record, holder)) {
      await report(state, { kind: 'duplicate', recordId: record.id, field, detail: String(value), keptId: holder.id });
      return true;
    }
    // This record is older (or the holder is gone): it takes the item over. Its own entry (from an
    // earlier attempt of the run) goes first: once the item is its, an older record may take it over
    // at once and report it, and a deletion after that would lose the entry.
    await unreport(state, { kind: 'duplicate', recordId: record.id, field });
    const handOver: TransactItem[] = [{ Put: { TableName: tableName('records'), Item: item, ConditionExpression: 'recordId = :holder', ExpressionAttributeValues: { ':holder': holderId } } }];
    if (holder) {
      handOver.push({
        Update: {
          TableName: tableName('records'),
          Key: homeKey(layout, holder),
          UpdateExpression: 'SET #uniques = :rest',
          ConditionExpression: '#kind = :record AND #version = :version',
          ExpressionAttributeNames: { '#uniques': 'uniques', '#version': 'version', '#kind': 'kind' },
          ExpressionAttributeValues: { ':rest': (holder.uniques ?? []).filter((f) => f !== field), ':version': holder.version, ':record': 'record' },
        },
      });
    }
    try {
      await db().send(new TransactWriteCommand({ TransactItems: addUnique(layout, record, field, handOver) }));
      if (holder) await report(state, { kind: 'duplicate', recordId: holder.id, field, detail: String(value), keptId: record.id });
      return true;
    } catch (error) {
      if (!isCancelled(error)) throw error;
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return false;
    }
  }
  throw new Error(`uniqueness of ${entity.slug}.${field} for record ${record.id}: the value kept changing hands`);
}

/** Takes one record to the target layout (re-reading it after a concurrent write), then its uniqueness items and report. */
export async function migrateRecord(layout: LiveLayout, state: MigrationState, first: StoredRecord): Promise<void> {
  const { entity } = layout;
  let raw: StoredRecord | undefined = first;
  for (let attempt = 0; raw && attempt < 20; attempt++) {
    const items = migrateTransaction(layout, state, raw);
    if (items) {
      try {
        await transact(items);
      } catch (error) {
        if (!(error instanceof WriteConflict)) throw error;
        raw = await reread(layout, raw);
        continue;
      }
    }
    // As stored now (its home too: a record listed under a new count of write shards moved there).
    const current = migratedRecord(layout, state, raw);
    if (!current.deletedAt) {
      let changed = false;
      for (const field of state.target.layout.unique) {
        const value = current.data[field];
        if (value === undefined || value === null || (current.uniques ?? []).includes(field)) continue;
        if (!(await backfillUnique(layout, state, current, field))) {
          changed = true;
          break;
        }
      }
      if (changed) {
        raw = await reread(layout, raw);
        continue;
      }
      const broken = ruleViolations(state.target.layout.rules, state.target.layout.defaults, current.data);
      for (const [field, problem] of Object.entries(broken)) await report(state, { kind: 'violation', recordId: current.id, field, detail: problem });
    }
    return;
  }
  if (raw) throw new Error(`record ${raw.id} of ${entity.slug} kept changing while it was migrated`);
}
