/**
 * Keys, items and transactions of the records and events tables: pure functions, no I/O
 * (shared/data/records.ts sends what these build).
 *
 * Records table (pk / sk):
 * - the record:        {kind: 'record', entity, id, tenantId, ownerId, createdAt, updatedAt,
 *                      deletedAt?, version, data: {fields…}, metadata?, metas?}, at
 *                      `<tenant>#<table>` / `<inverted createdAt>#<id>` when its id carries its
 *                      creation time (shared/record-ids.ts) and its entity is not public: the
 *                      record is then its own copy in the tenant's listing (one item less per
 *                      write), and a read by id derives that key from the id and the caller's
 *                      tenant. Otherwise (public entities, ids of earlier versions or derived for
 *                      an import's Idempotency-Key, and soft-deleted records, which leave the
 *                      listing) at `<table>#<id>` / `#record`.
 * - listing copies:    `<partition>` / `<inverted createdAt>#<id>` — kind 'index', one per listing
 *                      partition of the record but the one the record stands in: the same
 *                      attributes (a full copy) when they fit in 1 KB, so a page is one Query;
 *                      otherwise a partial copy (`partial: true`, at most 1 KB: keys, bookkeeping,
 *                      indexed fields, the smaller values) whose record readers fetch (copyItem)
 * - counters:          `<partition>` / `#count#<shard>` — {kind: 'counter', count, `#<field>=<value>`…}:
 *                      COUNTER_SHARDS items per partition, a write adds to ONE of them (picked at
 *                      random, another on a retry), a total is the sum, so no single item takes every
 *                      write of a partition. '#' sorts before the digits of the copies: a Query from
 *                      `#count` returns the counters first, then page 1. An older single counter at
 *                      `#count` is still read (it falls in the same key range) and never written.
 *                      Low-cardinality indexed fields (enum, boolean; see consolidatedFields) have no
 *                      counters of their own: the base partition's counter items hold their counts
 *                      as attributes named like the partition's suffix (`#status=todo`), so a write
 *                      touches one counter item per base partition instead of one per partition.
 *
 * Listing partitions of a record:
 * - public entity:     `<table>` (every tenant's records, readable by anyone)
 * - shared entity:     `<tenant>#<table>`
 * - private entity:    `<tenant>#<table>` (admin view) and `<tenant>#<table>#owner=<ownerId>` (owner view)
 * - and for each indexed field with a value, each of those with `#<field>=<value>` appended
 *   (the value URI-encoded, so '#' and '=' in values cannot collide).
 * The inverted createdAt is 9999999999999 − epoch ms, 13 digits: an ascending Query gives
 * createdAt descending, then id ascending — the default order.
 *
 * Write shards: an entity with `writeShards` N > 1 (shared/registry/types.ts) spreads each listing
 * partition over N partition keys, `<partition>#~<k>/<N>`, k = shardOf(id, N): a record's copies, the
 * record itself where it stands in its listing, its counter updates and its change events all go
 * to its shard k. Each shard is a partition as above (counters first, then copies in listing
 * order); readers read every shard and merge (shared/data/merge.ts). '~' appears in no field
 * name nor (URI-encoded) value, so no partition name collides with a shard's; N in the name keeps
 * the shards of two shard counts apart. N = 1 names the partitions as above, without suffix.
 * A record item's `ws` names the shard counts it is listed under (absent: [1]); while a change of
 * N is migrated (shared/migrations), writes maintain the earlier count's listings too, readers
 * read it until the new one is complete, and writes leave a retired count's copies uncounted.
 *
 * Events table: `<tenant>#<table>` (`#~<k>/<N>` appended on a sharded entity) / `<ISO time>#<random>` — {id, type: `<name>.created|updated|deleted`,
 * entity, recordId, tenantId, ownerId, data (the record, or {id} for deletes), createdAt, expiresAt}.
 */
import { canonical } from '../canonical-json.js';
import { writeShardsOf, type LoadedEntity } from '../registry/index.js';
import { liveLayout, upgradeData, type LiveLayout } from './live-layout.js';
import { idTime } from '../record-ids.js';
import { encodeKeyValue, MAX_PARTITION_KEY_BYTES, type Key, type StoredRecord, type TransactItem } from './record-item.js';
import { uniqueWrites, withUniques } from './unique-keys.js';

export { encodeKeyValue, MAX_PARTITION_KEY_BYTES, type Key, type StoredRecord, type TransactItem };

export const RECORD_SK = '#record';
/** The counters' key prefix; alone, the single counter of earlier versions (read, never written). */
export const COUNTER_SK = '#count';
/** Above every counter's sort key and below every listing copy's (those start with a digit). */
export const COUNTERS_END = '#count#~';
/** Counter items per partition: the most concurrent writers one partition's counts spread over. */
export const COUNTER_SHARDS = 10;
/** Budget (bytes) of the field counts a base partition's counter item holds, so it stays under 1 KB. */
const CONSOLIDATED_BUDGET = 600;
/** Change events are kept at least this long (TTL). */
export const EVENT_TTL_SECONDS = 24 * 3600;
const MAX_EPOCH_MS = 9_999_999_999_999;
export interface TableNames {
  records: string;
  events: string;
}

type ShardedEntity = Pick<LoadedEntity, 'slug' | 'access' | 'writeShards'>;

/** The write shards new writes use: the migration state's, else the definition's. */
export function writeShardCount(entity: ShardedEntity): number {
  return liveLayout(entity)?.writeShards ?? writeShardsOf(entity);
}

/** The write shards readers read: writeShardCount, or the earlier count while a change is migrated. */
export function shardCount(entity: ShardedEntity): number {
  const live = liveLayout(entity);
  if (live?.keptShards !== undefined && !live.shardsReady) return live.keptShards;
  return writeShardCount(entity);
}

/** The shard counts whose listings writes maintain (copies and counts): the target's, and a kept one while migrated. */
export function maintainedShards(entity: ShardedEntity): number[] {
  const live = liveLayout(entity);
  const target = writeShardCount(entity);
  return live?.keptShards !== undefined && live.keptShards !== target ? [live.keptShards, target] : [target];
}

/** The shard counts whose change events readers merge. */
export function eventShardCounts(entity: ShardedEntity): number[] {
  return liveLayout(entity)?.eventShards ?? [writeShardCount(entity)];
}

/** The shard counts a stored record's listings are under. */
export function heldShards(record: Pick<StoredRecord, 'ws'>): number[] {
  return record.ws ?? [1];
}

/** The shard of a record among `shards` (FNV-1a of its id): the same for the record's whole life. */
export function shardOf(id: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** The partition key of shard `shard` of a partition (the partition itself when unsharded). */
export function shardKey(partition: string, shard: number, shards: number): string {
  return shards <= 1 ? partition : `${partition}#~${shard}/${shards}`;
}

const SHARD_SUFFIX = /#~\d+\/(\d+)$/;

/** The shard count a partition key is named for (`…#~<k>/<N>`: N; no suffix: 1). */
export function keyShardCount(pk: string): number {
  const match = SHARD_SUFFIX.exec(pk);
  return match ? Number(match[1]) : 1;
}

/** The (logical) partition a partition key is one shard of, or the key itself. */
export function unshardedKey(pk: string): string {
  return pk.replace(SHARD_SUFFIX, '');
}

/** Every partition key of a (logical) partition: its shards, in shard order. */
export function shardKeys(partition: string, shards: number): string[] {
  return shards <= 1 ? [partition] : Array.from({ length: shards }, (_, k) => shardKey(partition, k, shards));
}

/** The partition key where record `id` stands in a (logical) partition of `entity` (the read shards, or `shards`). */
export function recordShardKey(entity: ShardedEntity, partition: string, id: string, shards = shardCount(entity)): string {
  return shardKey(partition, shardOf(id, shards), shards);
}

/** Where a record that is not in a listing of its own lives (see the module comment). */
export function detachedKey(entity: Pick<LoadedEntity, 'tableName'>, id: string): Key {
  return { pk: `${entity.tableName}#${id}`, sk: RECORD_SK };
}

/**
 * The key of the live record `id` of `tenantId` (the caller's, or the record's): in the tenant's
 * listing when the id carries its creation time and the entity is not public, else detachedKey. A
 * tenant other than the record's gives a key where it is not: not found, as for any record of
 * another tenant.
 */
export function recordKey(entity: Pick<LoadedEntity, 'slug' | 'tableName' | 'access' | 'idFormat' | 'writeShards'>, id: string, tenantId: string | undefined): Key {
  const ms = entity.access.public ? undefined : idTime(entity.idFormat, id);
  if (ms === undefined || tenantId === undefined) return detachedKey(entity, id);
  return { pk: recordShardKey(entity, tenantPartition(entity, tenantId), id), sk: `${invertedMs(ms)}#${id}` };
}

/**
 * Where `record` is stored: recordKey for a live one; detachedKey once soft-deleted (it leaves the
 * listing it stood in, and reads by id no longer find it: 404 like any soft-deleted record).
 */
export function homeKey(entity: LoadedEntity, record: StoredRecord): Key {
  return record.deletedAt ? detachedKey(entity, record.id) : recordKey(entity, record.id, record.tenantId);
}

/** The listing partition the record item itself stands in (its own copy there); none for a detached record. */
export function ownListing(entity: LoadedEntity, record: StoredRecord): string | undefined {
  const key = homeKey(entity, record);
  if (key.sk === RECORD_SK) return undefined;
  // The key comes from the id; the listing orders by createdAt: they are one time, by construction (newRecordId).
  if (key.sk !== listingSortKey(record)) throw new Error(`record ${record.id}: createdAt ${record.createdAt} is not the time its id carries`);
  return key.pk;
}

function invertedMs(ms: number): string {
  return String(MAX_EPOCH_MS - ms).padStart(13, '0');
}

export function invertedTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not a date-time: ${iso}`);
  return invertedMs(ms);
}

export function listingSortKey(record: Pick<StoredRecord, 'createdAt' | 'id'>): string {
  return `${invertedTime(record.createdAt)}#${record.id}`;
}

export function globalPartition(entity: LoadedEntity): string {
  return entity.tableName;
}

export function tenantPartition(entity: Pick<LoadedEntity, 'tableName'>, tenantId: string): string {
  return `${tenantId}#${entity.tableName}`;
}

export function ownerPartition(entity: LoadedEntity, tenantId: string, ownerId: string): string {
  return `${tenantPartition(entity, tenantId)}#owner=${encodeURIComponent(ownerId)}`;
}

export function fieldPartition(base: string, field: string, value: unknown): string {
  return `${base}#${field}=${encodeKeyValue(String(value))}`;
}

/** The base partitions a record is listed in (before indexed fields). */
export function basePartitions(entity: LoadedEntity, tenantId: string, ownerId: string): string[] {
  if (entity.access.public) return [globalPartition(entity)];
  if (entity.access.shared) return [tenantPartition(entity, tenantId)];
  return [tenantPartition(entity, tenantId), ownerPartition(entity, tenantId, ownerId)];
}

export function indexedFields(entity: Pick<LoadedEntity, 'fields'>): string[] {
  return Object.entries(entity.fields)
    .filter(([, f]) => f.indexed)
    .map(([name]) => name);
}

const definitionLayouts = new WeakMap<object, LiveLayout>();

/**
 * The layout writes maintain and queries read (shared/data/live-layout.ts): the state of the
 * entity's migration, or, when none was loaded, its definition's indexes under their own names,
 * all complete.
 */
export function layoutFor(entity: Pick<LoadedEntity, 'fields' | 'slug'>): LiveLayout {
  const set = liveLayout(entity);
  if (set) return set;
  let found = definitionLayouts.get(entity);
  if (!found) {
    const consolidated = consolidatedFields(entity);
    const indexes = indexedFields(entity).map((field) => ({ field, token: field, consolidated: consolidated.has(field), ready: true }));
    found = { indexes, obsolete: [], legacy: indexes.map((i) => i.token), defaults: {}, settled: true };
    definitionLayouts.set(entity, found);
  }
  return found;
}

/** The index tokens writes maintain (a record item's `ix` after a write). */
export function targetTokens(entity: Pick<LoadedEntity, 'fields' | 'slug'>): string[] {
  return layoutFor(entity).indexes.map((i) => i.token);
}

/** The field an index token lists by (`status`, `status@3`). */
export function tokenField(token: string): string {
  const at = token.indexOf('@');
  return at < 0 ? token : token.slice(0, at);
}

/**
 * A listing partition of a record: a base partition, or an indexed field's partition under one.
 * `partition` and `base` are partition keys: the record's shard of each (shardKey).
 */
export interface Listing {
  partition: string;
  base: string;
  field?: string;
  value?: unknown;
  /** The index token in the partition's name (field partitions). */
  token?: string;
  /** Counted in its base partition's counter items. */
  consolidated?: boolean;
  /** false: a dropped index's partition, whose counts nobody reads (not maintained). */
  counted?: boolean;
}

/**
 * Every listing partition of a record, bases first; none once it is soft-deleted. `held`: the
 * partitions the stored record is in (its `ix` tokens, or the layout's legacy ones), for what a
 * write leaves; otherwise those of the layout writes maintain, for what it enters.
 */
export function listings(entity: LoadedEntity, record: StoredRecord, which: 'target' | 'held' = 'target'): Listing[] {
  if (record.deletedAt) return [];
  const layout = layoutFor(entity);
  const maintained = maintainedShards(entity);
  const sets = which === 'held' ? heldShards(record) : maintained;
  const tokens = which === 'held' ? (record.ix ?? layout.legacy) : layout.indexes.map((i) => i.token);
  const bases = basePartitions(entity, record.tenantId, record.ownerId);
  const out: Listing[] = [];
  for (const shards of sets) {
    // A shard count writes no longer maintain: its copies are left, never counted.
    const kept = maintained.includes(shards);
    const at = (partition: string) => recordShardKey(entity, partition, record.id, shards);
    out.push(...bases.map((base): Listing => ({ partition: at(base), base: at(base), ...(kept ? {} : { counted: false }) })));
    for (const token of tokens) {
      const index = layout.indexes.find((i) => i.token === token);
      const field = tokenField(token);
      const value = record.data[field];
      if (value === undefined || value === null || value === '') continue;
      for (const base of bases) {
        out.push({ partition: at(fieldPartition(base, token, value)), base: at(base), field, value, token, consolidated: index?.consolidated ?? false, counted: kept && index !== undefined });
      }
    }
  }
  return out;
}

/** Every listing partition of a record; none once it is soft-deleted. */
export function listingPartitions(entity: LoadedEntity, record: StoredRecord): string[] {
  return listings(entity, record).map((l) => l.partition);
}

/** Who is listing: decides the partition (owner view, tenant view, or the public one). */
export interface Viewer {
  tenantId?: string;
  userId?: string;
  admin: boolean;
}

/**
 * The partition a LIST reads: public entity → the global one; shared entity or an admin → the
 * tenant's; anyone else → their own owner partition. `filter` narrows it to an indexed field's value.
 */
export function listingPartitionFor(entity: LoadedEntity, viewer: Viewer, filter?: { field: string; value: unknown }): string {
  let base: string;
  if (entity.access.public) base = globalPartition(entity);
  else {
    if (!viewer.tenantId) throw new Error('a private listing needs a tenant');
    if (entity.access.shared || viewer.admin) base = tenantPartition(entity, viewer.tenantId);
    else {
      if (!viewer.userId) throw new Error('an owner listing needs a user');
      base = ownerPartition(entity, viewer.tenantId, viewer.userId);
    }
  }
  return filter ? fieldPartition(base, filter.field, filter.value) : base;
}

export function counterKey(partition: string, shard: number): Key {
  return { pk: partition, sk: `${COUNTER_SK}#${shard}` };
}

export function isCounterKey(sk: unknown): boolean {
  return typeof sk === 'string' && sk.startsWith(COUNTER_SK);
}

export function randomShard(): number {
  return Math.floor(Math.random() * COUNTER_SHARDS);
}

/** The attribute of a base partition's counter items counting one of its field partitions. */
export function countAttribute(field: string, value: unknown): string {
  return `#${field}=${encodeKeyValue(String(value))}`;
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
  /** Write shards of the partition and of its base (shardKeys; default 1): counted over all of them. */
  shards?: number;
}

/** Counter items a partition may hold: its shards and an older single counter. */
export const COUNTER_ITEMS = COUNTER_SHARDS + 1;

export function totalSource(
  entity: Pick<LoadedEntity, 'fields' | 'slug' | 'access' | 'writeShards'>,
  base: string,
  filter?: { field: string; value: unknown; token?: string },
): TotalSource {
  const shards = shardCount(entity);
  if (!filter) return { partition: base, ownCounters: COUNTER_ITEMS, shards };
  const token = filter.token ?? filter.field;
  const index = layoutFor(entity).indexes.find((i) => i.token === token);
  return {
    partition: fieldPartition(base, token, filter.value),
    base,
    attribute: countAttribute(token, filter.value),
    ownCounters: index?.consolidated ? 1 : COUNTER_ITEMS,
    shards,
  };
}

const consolidatedCache = new WeakMap<object, Set<string>>();

/**
 * Indexed fields whose partitions are counted in their base partition's counter items: enum and
 * boolean fields (few values), in definition order, while their attributes fit CONSOLIDATED_BUDGET.
 * A transactional write is billed by the size of every item it touches (at least 1 KB each), so
 * the counter item must stay small: references and free text keep counter items of their own.
 */
export function consolidatedFields(entity: Pick<LoadedEntity, 'fields'>): Set<string> {
  let found = consolidatedCache.get(entity);
  if (found) return found;
  found = new Set();
  let bytes = 0;
  for (const [name, f] of Object.entries(entity.fields)) {
    if (!f.indexed) continue;
    const values = f.type === 'boolean' ? ['true', 'false'] : f.type === 'enum' ? (f.values ?? []) : undefined;
    if (!values) continue;
    // Attribute name + a number of up to 12 digits.
    const cost = values.reduce((n, v) => n + Buffer.byteLength(countAttribute(name, v)) + 7, 0);
    if (bytes + cost > CONSOLIDATED_BUDGET) continue;
    bytes += cost;
    found.add(name);
  }
  consolidatedCache.set(entity, found);
  return found;
}

export function recordItem(entity: LoadedEntity, record: StoredRecord): Record<string, unknown> {
  return { ...homeKey(entity, record), kind: 'record', ...withMaintainedShards(entity, record), copiesVersion: record.version, ix: targetTokens(entity) };
}

/** The record marked as listed under the shard counts writes maintain (`ws`; absent for [1]). */
export function withMaintainedShards(entity: LoadedEntity, record: StoredRecord): StoredRecord {
  const { ws: _ws, ...rest } = record;
  const shards = maintainedShards(entity);
  return shards.length === 1 && shards[0] === 1 ? rest : { ...rest, ws: shards };
}

/**
 * Attribute that listing copies of earlier versions carry (the searchable fields folded): dropped
 * when read. Copies no longer hold it: `search` reads the partition's copies whatever a filter
 * keeps (DynamoDB bills the items read, not those returned), so a second copy of every searchable
 * text in every copy only made each write and each page dearer; the words are matched in memory
 * page by page (shared/entities/list.ts).
 */
export const SEARCH_ATTRIBUTE = '_search';

// ---------- item sizes, as DynamoDB counts them ----------

/** Significant digits of a number as DynamoDB stores it (leading and trailing zeroes trimmed). */
function numberSize(value: number | bigint): number {
  const digits = String(value).replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

function valueSize(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberSize(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((n: number, v) => n + valueSize(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + valueSize(v), 0);
  if (typeof value === 'object') return 3 + entriesOf(value as Record<string, unknown>).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k) + valueSize(v), 0);
  return 1;
}

/** Attributes as the document client sends them (undefined values are left out). */
function entriesOf(object: Record<string, unknown>): [string, unknown][] {
  return Object.entries(object).filter(([, v]) => v !== undefined);
}

/** The size of one attribute (name + value), in bytes. */
export function attributeSize(name: string, value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(name) + valueSize(value);
}

/**
 * An item's size as DynamoDB counts it (and bills it: writes per started KB, reads per 4 KB):
 * UTF-8 bytes of every attribute name and string value; a number 1 byte per two significant
 * digits + 1; null and booleans 1; a list or map 3 bytes + 1 per element (+ the key's bytes in a
 * map) + the elements.
 */
export function itemSize(item: Record<string, unknown> | undefined): number {
  if (!item) return 0;
  return entriesOf(item).reduce((n, [name, value]) => n + attributeSize(name, value), 0);
}

// ---------- listing copies ----------

/** Largest listing copy written: one write unit (a transactional write is billed 2 WRU per started KB). */
export const COPY_MAX_BYTES = 1024;
/** Marks a listing copy that does not hold all of the record: readers fetch the record itself. */
export const PARTIAL_ATTRIBUTE = 'partial';

/**
 * A listing copy: the record's attributes under the partition's key — all of them when the item
 * fits in COPY_MAX_BYTES (readers need nothing else). Otherwise a partial copy (`partial: true`):
 * the keys and the record's bookkeeping (id, owner, times, version, deletedAt) always, then the
 * indexed fields and as many other values as fit, dropping the largest first (data fields,
 * metadata and metas alike; indexed fields only when nothing else is left). A record whose
 * bookkeeping alone passes 1 KB (ids near their limit) keeps just that.
 */
export function copyItem(entity: Pick<LoadedEntity, 'fields'>, partition: string, stored: StoredRecord): Record<string, unknown> {
  const { copiesVersion: _copiesVersion, ix: _ix, uniques: _uniques, ws: _ws, ...record } = stored;
  const full: Record<string, unknown> = { pk: partition, sk: listingSortKey(record), kind: 'index', ...record };
  let size = itemSize(full);
  if (size <= COPY_MAX_BYTES) return full;
  const { data, metadata, metas, ...rest } = record;
  const indexed = new Set(Object.entries(entity.fields).filter(([, f]) => f.indexed).map(([name]) => name));
  // Droppable values: non-indexed ones first (rank 0), the largest first within a rank.
  const kept: Record<string, unknown> = { ...data };
  const copy: Record<string, unknown> = { pk: partition, sk: listingSortKey(record), kind: 'index', ...rest, [PARTIAL_ATTRIBUTE]: true, data: kept };
  if (metadata !== undefined) copy.metadata = metadata;
  if (metas !== undefined) copy.metas = metas;
  size = itemSize(copy);
  const droppable: { rank: number; bytes: number; name: string; into: Record<string, unknown>; key: string; value: unknown }[] = [];
  for (const [name, value] of entriesOf(data)) {
    droppable.push({ rank: indexed.has(name) ? 1 : 0, bytes: 1 + attributeSize(name, value), name: `data.${name}`, into: kept, key: name, value });
  }
  for (const name of ['metadata', 'metas'] as const) {
    if (copy[name] !== undefined) droppable.push({ rank: 0, bytes: attributeSize(name, copy[name]), name, into: copy, key: name, value: copy[name] });
  }
  droppable.sort((a, b) => a.rank - b.rank || b.bytes - a.bytes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const dropped: typeof droppable = [];
  for (const value of droppable) {
    if (size <= COPY_MAX_BYTES) break;
    delete value.into[value.key];
    size -= value.bytes;
    dropped.push(value);
  }
  // Then whatever dropped value still fits goes back, indexed first, smallest first.
  dropped.sort((a, b) => b.rank - a.rank || a.bytes - b.bytes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const value of dropped) {
    if (size + value.bytes > COPY_MAX_BYTES) continue;
    value.into[value.key] = value.value;
    size += value.bytes;
  }
  return copy;
}

/** Attributes of a partial copy that may lag behind its record (see unchangedCopy). */
export const LAGGING_ATTRIBUTES = ['updatedAt', 'version'] as const;

/**
 * Whether an update may leave a listing copy as it stands instead of writing `next` (the copy the
 * record gets there now): the copy `before` had there and `next` are both partial and hold the
 * same values but for updatedAt and version (the update changed only values the copy leaves out,
 * a long description say), and the copies standing are known to be copyItem's
 * (before.copiesVersion is before.version). Readers replace a partial copy by its record, so its
 * updatedAt and version are never shown, and never used to rule a record out
 * (shared/entities/list.ts): saving the Put (2 WRU per copy) loses nothing.
 */
export function unchangedCopy(entity: Pick<LoadedEntity, 'fields'>, partition: string, before: StoredRecord, next: Record<string, unknown>): boolean {
  if (!isPartialCopy(next) || before.copiesVersion !== before.version) return false;
  const old = copyItem(entity, partition, before);
  if (!isPartialCopy(old)) return false;
  const now = { ...next };
  for (const name of LAGGING_ATTRIBUTES) {
    delete old[name];
    delete now[name];
  }
  return canonical(old) === canonical(now);
}

/** Whether a listing copy is partial (copies of earlier versions carry no mark: they are full). */
export function isPartialCopy(item: Record<string, unknown>): boolean {
  return item[PARTIAL_ATTRIBUTE] === true;
}

/** The StoredRecord inside a record or index item, as stored (shared/migrations/runner.ts). */
export function storedFromItem(item: Record<string, unknown>): StoredRecord {
  const { pk: _pk, sk: _sk, kind: _kind, [SEARCH_ATTRIBUTE]: _search, [PARTIAL_ATTRIBUTE]: _partial, ...record } = item;
  return record as unknown as StoredRecord;
}

/**
 * The StoredRecord inside a record or index item, as the current layout shows it: a field added
 * since it was written reads as its default, a removed field is left out
 * (shared/data/live-layout.ts upgradeData). The next write stores it so.
 */
export function fromItem(item: Record<string, unknown>): StoredRecord {
  const record = storedFromItem(item);
  const data = upgradeData(record.entity, record.data);
  return data === record.data ? record : { ...record, data: data! };
}

export type ChangeType = 'created' | 'updated' | 'deleted';

/** The events of one tenant for one entity: this partition, or its write shards (shardKeys). */
export function eventPartition(tenantId: string, entity: Pick<LoadedEntity, 'tableName'>): string {
  return `${tenantId}#${entity.tableName}`;
}

export interface ChangeEvent {
  id: string;
  type: string;
  entity: string;
  recordId: string;
  tenantId: string;
  ownerId: string;
  data: Record<string, unknown>;
  createdAt: string;
  expiresAt: number;
}

export function eventItem(
  entity: LoadedEntity,
  change: ChangeType,
  record: StoredRecord,
  data: Record<string, unknown>,
  ids: { eventId: string; suffix: string; now: string },
): Record<string, unknown> {
  const event: ChangeEvent = {
    id: ids.eventId,
    type: `${entity.name}.${change}`,
    entity: entity.slug,
    recordId: record.id,
    tenantId: record.tenantId,
    ownerId: record.ownerId,
    data: change === 'deleted' ? { id: record.id } : data,
    createdAt: ids.now,
    expiresAt: Math.floor(Date.parse(ids.now) / 1000) + EVENT_TTL_SECONDS,
  };
  return { pk: recordShardKey(entity, eventPartition(record.tenantId, entity), record.id, writeShardCount(entity)), sk: `${ids.now}#${ids.suffix}`, ...event };
}

/**
 * The transaction's change events stamped with `now` (pure): their position (`<now>#<suffix>`,
 * the suffix kept), createdAt and expiry. A writer stamps its events immediately before each
 * attempt to send the transaction, so that an event's position trails its commit by at most one
 * request's time, not by the time spent validating, batching or backing off: readers of the
 * events table count on that bound (shared/stream/session.ts).
 */
export function restampEvents(items: readonly TransactItem[], eventsTable: string, now: string): TransactItem[] {
  return items.map((item) => {
    const put = item.Put;
    if (!put || put.TableName !== eventsTable || !put.Item) return item;
    const sk = String(put.Item.sk);
    const suffix = sk.slice(sk.indexOf('#') + 1);
    return { Put: { ...put, Item: { ...put.Item, sk: `${now}#${suffix}`, createdAt: now, expiresAt: Math.floor(Date.parse(now) / 1000) + EVENT_TTL_SECONDS } } };
  });
}

/** Where a listing's count is kept: the partition's own counter items, or an attribute of its base's. */
export function countPlace(_entity: Pick<LoadedEntity, 'fields'>, listing: Listing): { pk: string; attribute: string } {
  if (listing.token !== undefined && listing.consolidated) return { pk: listing.base, attribute: countAttribute(listing.token, listing.value) };
  return { pk: listing.partition, attribute: 'count' };
}

/**
 * The counter Updates for listings entered (+n) or left (−n): ONE Update per counter item
 * (`ADD` of every attribute it holds that changes), all in shard `shard`; nothing for a net zero.
 */
export function counterUpdates(entity: LoadedEntity, tables: TableNames, deltas: Iterable<[Listing, number]>, shard: number): TransactItem[] {
  const byItem = new Map<string, Map<string, number>>();
  for (const [listing, delta] of deltas) {
    if (listing.counted === false) continue;
    const { pk, attribute } = countPlace(entity, listing);
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

function eventPut(tables: TableNames, event: Record<string, unknown>): TransactItem {
  return { Put: { TableName: tables.events, Item: event } };
}

/**
 * A new record's Puts: the record (only if new; first), then a copy per listing partition of
 * `entered` but the one it stands in, then the uniqueness items of its unique values (each only
 * if no other record holds the value).
 */
export function newRecordPuts(entity: LoadedEntity, record: StoredRecord, entered: readonly Listing[], tables: TableNames): TransactItem[] {
  const own = ownListing(entity, record);
  const unique = uniqueWrites(entity, tables.records, undefined, record);
  return [
    { Put: { TableName: tables.records, Item: recordItem(entity, withUniques(record, unique.holds)), ConditionExpression: 'attribute_not_exists(pk)' } },
    ...entered.filter((l) => l.partition !== own).map((l): TransactItem => ({ Put: { TableName: tables.records, Item: copyItem(entity, l.partition, record) } })),
    ...unique.items,
  ];
}

/** Create: the record (only if new), a copy per other listing partition, +1 to each (one Update per counter item), the event. */
export function createTransaction(entity: LoadedEntity, record: StoredRecord, event: Record<string, unknown>, tables: TableNames, shard = randomShard()): TransactItem[] {
  const entered = listings(entity, record);
  return [...newRecordPuts(entity, record, entered, tables), ...counterUpdates(entity, tables, entered.map((l) => [l, 1]), shard), eventPut(tables, event)];
}

/**
 * The record is still as read: same version, not deleted, listed under the same index tokens and
 * holding the same uniqueness items (the migration runner completes those without changing the
 * version: a write planned before must not count the record twice nor drop its `uniques`).
 */
export function versionGuard(before: StoredRecord): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  const ix = before.ix === undefined ? 'attribute_not_exists(#ix)' : '#ix = :ix';
  const uniques = before.uniques === undefined ? 'attribute_not_exists(#uniques)' : '#uniques = :uniques';
  const ws = before.ws === undefined ? 'attribute_not_exists(#ws)' : '#ws = :ws';
  return {
    ConditionExpression: `attribute_exists(pk) AND #version = :version AND attribute_not_exists(#deletedAt) AND ${ix} AND ${uniques} AND ${ws}`,
    ExpressionAttributeNames: { '#version': 'version', '#deletedAt': 'deletedAt', '#ix': 'ix', '#uniques': 'uniques', '#ws': 'ws' },
    ExpressionAttributeValues: {
      ':version': before.version,
      ...(before.ix === undefined ? {} : { ':ix': before.ix }),
      ...(before.uniques === undefined ? {} : { ':uniques': before.uniques }),
      ...(before.ws === undefined ? {} : { ':ws': before.ws }),
    },
  };
}

/**
 * Update (also a soft delete, whose `after` has deletedAt): the record if still at `before`'s
 * version (a soft-deleted record moves out of the listing it stood in: Delete there, Put at its
 * detached key); fresh copies in every other partition of `after` (but partial copies the update
 * leaves as they are: unchangedCopy); copies removed from partitions it left;
 * counters +1 / -1 for partitions entered / left; values acquired and released
 * (shared/data/unique-keys.ts uniqueWrites; a soft delete releases every value held); the event.
 */
export function updateTransaction(
  entity: LoadedEntity,
  before: StoredRecord,
  after: StoredRecord,
  event: Record<string, unknown>,
  tables: TableNames,
  shard = randomShard(),
): TransactItem[] {
  const old = listings(entity, before, 'held');
  const now = listings(entity, after);
  const oldSet = new Set(old.map((l) => l.partition));
  const nowSet = new Set(now.map((l) => l.partition));
  const left = old.filter((l) => !nowSet.has(l.partition));
  const entered = now.filter((l) => !oldSet.has(l.partition));
  const oldSk = listingSortKey(before);
  const ownBefore = ownListing(entity, before);
  const ownAfter = ownListing(entity, after);
  // Each copy built once; a partial one the update leaves as it stands is not written.
  const rewritten = now
    .filter((l) => l.partition !== ownAfter)
    .map((l) => ({ l, copy: copyItem(entity, l.partition, after) }))
    .filter(({ l, copy }) => !oldSet.has(l.partition) || !unchangedCopy(entity, l.partition, before, copy));
  const from = homeKey(entity, before);
  const to = homeKey(entity, after);
  const unique = uniqueWrites(entity, tables.records, before, after);
  const stored = withUniques(after, unique.holds);
  const record: TransactItem[] =
    from.pk === to.pk && from.sk === to.sk
      ? [{ Put: { TableName: tables.records, Item: recordItem(entity, stored), ...versionGuard(before) } }]
      : [{ Delete: { TableName: tables.records, Key: from, ...versionGuard(before) } }, { Put: { TableName: tables.records, Item: recordItem(entity, stored) } }];
  return [
    ...record,
    ...rewritten.map(({ copy }): TransactItem => ({ Put: { TableName: tables.records, Item: copy } })),
    ...left.filter((l) => l.partition !== ownBefore).map((l): TransactItem => ({ Delete: { TableName: tables.records, Key: { pk: l.partition, sk: oldSk } } })),
    ...counterUpdates(entity, tables, [...entered.map((l): [Listing, number] => [l, 1]), ...left.map((l): [Listing, number] => [l, -1])], shard),
    ...unique.items,
    eventPut(tables, event),
  ];
}

/** Hard delete: the record if still at `before`'s version, its other copies, -1 per partition, the values it holds released, the event. */
export function deleteTransaction(entity: LoadedEntity, before: StoredRecord, event: Record<string, unknown>, tables: TableNames, shard = randomShard()): TransactItem[] {
  const left = listings(entity, before, 'held');
  const sk = listingSortKey(before);
  const own = ownListing(entity, before);
  return [
    { Delete: { TableName: tables.records, Key: homeKey(entity, before), ...versionGuard(before) } },
    ...left.filter((l) => l.partition !== own).map((l): TransactItem => ({ Delete: { TableName: tables.records, Key: { pk: l.partition, sk } } })),
    ...counterUpdates(entity, tables, left.map((l) => [l, -1]), shard),
    ...uniqueWrites(entity, tables.records, before, undefined).items,
    eventPut(tables, event),
  ];
}
