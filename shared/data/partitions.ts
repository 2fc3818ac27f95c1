/**
 * Where a record lives: the partitions of the records table an entity's records are listed in,
 * their write shards, and the record item's own key. Pure: no I/O.
 *
 * Partitions (pk) of an entity's listings, by its access mode:
 * - public entity:     `<table>` (every tenant's records, readable by anyone)
 * - shared entity:     `<tenant>#<table>`
 * - private entity:    `<tenant>#<table>` (admin view) and `<tenant>#<table>#owner=<ownerId>` (owner view)
 * Those are the base partitions; each indexed field with a value adds `#<token>=<value>` to each
 * of them (the value URI-encoded, so '#' and '=' in values cannot collide; the token is the
 * index's name in the live layout: the field, or `<field>@<generation>`). A listing's sort key is
 * `<inverted createdAt>#<id>`, the inverted time 9999999999999 − epoch ms in 13 digits: an
 * ascending Query gives createdAt descending, then id ascending, the default order.
 *
 * Write shards: an entity whose layout has N > 1 write shards spreads each listing partition over
 * N partition keys, `<partition>#~<k>/<N>`, k = shardOf(id, N): a record's copies, the record
 * itself where it stands in its listing, its counter updates and its change events all go to its
 * shard k. Each shard is a partition as above; readers read every shard and merge (merge.ts).
 * '~' appears in no field name nor (URI-encoded) value, so no partition name collides with a
 * shard's; N in the name keeps the shards of two counts apart. N = 1 names the partitions as
 * above, without suffix. Which counts writes maintain and readers read is the layout's
 * (layout.ts LayoutShards); a record item's `ws` names the counts it is listed under (absent: [1]).
 *
 * The record item: at `<tenant>#<table>` / `<inverted createdAt>#<id>` when its id carries its
 * creation time (shared/record-ids.ts) and its entity is not public: the record is then its own
 * copy in the tenant's listing (one item less per write), on its shard of the LAST count of its
 * `ws` (homeShards: the layout's write count once the record is listed under it, as writes list
 * it `[kept, write]`), and a read by id derives that key from the id and the caller's tenant.
 * While a change of write shards is migrated, a record may stand under either count (the pass
 * moves it, leaving a listing copy in its place): a read by id then looks under both
 * (recordKeys) and takes the record item, never a copy. Otherwise (public entities, ids of
 * earlier versions or derived for an import's Idempotency-Key, and soft-deleted records, which
 * leave the listing) at `<table>#<id>` / `#record`, detached.
 */
import { MAX_WRITE_SHARDS, type LoadedEntity } from '../registry/index.js';
import { idTime } from '../record-ids.js';
import type { LiveLayout } from './layout.js';
import { encodeKeyValue, MAX_PARTITION_KEY_BYTES, type Key, type StoredRecord } from './record-item.js';

export { MAX_PARTITION_KEY_BYTES };

export const RECORD_SK = '#record';
const MAX_EPOCH_MS = 9_999_999_999_999;

// ---------- partitions ----------

export function globalPartition(entity: Pick<LoadedEntity, 'tableName'>): string {
  return entity.tableName;
}

export function tenantPartition(entity: Pick<LoadedEntity, 'tableName'>, tenantId: string): string {
  return `${tenantId}#${entity.tableName}`;
}

export function ownerPartition(entity: Pick<LoadedEntity, 'tableName'>, tenantId: string, ownerId: string): string {
  return `${tenantPartition(entity, tenantId)}#owner=${encodeURIComponent(ownerId)}`;
}

/** An indexed field's partition under a base partition (`token`: the index's name in the layout). */
export function fieldPartition(base: string, token: string, value: unknown): string {
  return `${base}#${token}=${encodeKeyValue(String(value))}`;
}

/**
 * The partition key of a listing partition's day counter items (counters.ts dayItem), shard by
 * shard: `<partition>#days`, before the shard's suffix (`…#days#~<k>/<N>`, so a retired shard
 * count's are found like its copies). A key of its own: the per-day counts of a write never add to
 * the load of the listing partition's key. 'days' without '=' names no indexed field's partition.
 */
export function dayPartition(partitionKey: string): string {
  const suffix = /#~\d+\/\d+$/.exec(partitionKey);
  return suffix ? `${partitionKey.slice(0, suffix.index)}#days${suffix[0]}` : `${partitionKey}#days`;
}

/** Whether a partition key is a day counter partition's (dayPartition). */
export function isDayPartition(pk: string): boolean {
  return /#days(#~\d+\/\d+)?$/.test(pk);
}

/** The base partitions a record is listed in (before indexed fields). */
export function basePartitions(entity: Pick<LoadedEntity, 'tableName' | 'access'>, tenantId: string, ownerId: string): string[] {
  if (entity.access.public) return [globalPartition(entity)];
  if (entity.access.shared) return [tenantPartition(entity, tenantId)];
  return [tenantPartition(entity, tenantId), ownerPartition(entity, tenantId, ownerId)];
}

// ---------- sort keys ----------

function invertedMs(ms: number): string {
  return String(MAX_EPOCH_MS - ms).padStart(13, '0');
}

export function invertedTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not a date-time: ${iso}`);
  return invertedMs(ms);
}

/** The time an inverted one stands for (epoch ms). */
export function uninvertedMs(inverted: string): number {
  return MAX_EPOCH_MS - Number(inverted);
}

export function listingSortKey(record: Pick<StoredRecord, 'createdAt' | 'id'>): string {
  return `${invertedTime(record.createdAt)}#${record.id}`;
}

// ---------- write shards ----------

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

/** The partition key where record `id` stands in a (logical) partition split in `shards`. */
export function recordShardKey(partition: string, id: string, shards: number): string {
  return shardKey(partition, shardOf(id, shards), shards);
}

/** Every partition key of a (logical) partition: its shards, in shard order. */
export function shardKeys(partition: string, shards: number): string[] {
  return shards <= 1 ? [partition] : Array.from({ length: shards }, (_, k) => shardKey(partition, k, shards));
}

const SHARD_SUFFIX = /#~\d+\/(\d+)$/;

/** The shard count a partition key is named for (`…#~<k>/<N>`: N; no suffix: 1). */
export function keyShardCount(pk: string): number {
  const match = SHARD_SUFFIX.exec(pk);
  return match ? Number(match[1]) : 1;
}

/** The shard a partition key names and the count it is one of (`…#~<k>/<N>`: k and N; no suffix: 0 of 1). */
export function keyShard(pk: string): { shard: number; shards: number } {
  const match = /#~(\d+)\/(\d+)$/.exec(pk);
  return match ? { shard: Number(match[1]), shards: Number(match[2]) } : { shard: 0, shards: 1 };
}

/** The (logical) partition a partition key is one shard of, or the key itself. */
export function unshardedKey(pk: string): string {
  return pk.replace(SHARD_SUFFIX, '');
}

/** The shard counts a stored record's listings are under. */
export function heldShards(record: Pick<StoredRecord, 'ws'>): readonly number[] {
  return record.ws ?? [1];
}

// ---------- the record item ----------

/** Where a record that is not in a listing of its own lives (see the module comment). */
export function detachedKey(entity: Pick<LoadedEntity, 'tableName'>, id: string): Key {
  return { pk: `${entity.tableName}#${id}`, sk: RECORD_SK };
}

/** The shard count a record item stands under: the last its `ws` names (writes list a record `[kept, write]`, so the write count once it is listed under it). */
export function homeShards(record: Pick<StoredRecord, 'ws'>): number {
  const held = heldShards(record);
  return held[held.length - 1];
}

/**
 * The shard counts a live record item may stand under for readers of `layout`, the write count
 * first. Once readers read the write count (no change of it under way, or its pass complete),
 * every record is listed under it and stands there: that count alone, one key. While the pass
 * of a change runs, a record stands under the count it was listed under until the pass (or a
 * write) moves it: every count the layout knows (the earlier one, the new one, and one retired
 * by a change made while another was migrated).
 */
export function homeCounts(layout: LiveLayout): number[] {
  const { write, read, maintained, events } = layout.shards;
  if (read === write) return [write];
  return [...new Set([write, read, ...maintained, ...events])];
}

/**
 * The key of the live record `id` of `tenantId` (the caller's, or the record's) listed under
 * `shards` (default: the layout's write count): in the tenant's listing when the id carries its
 * creation time and the entity is not public, else detachedKey. A tenant other than the record's
 * gives a key where it is not: not found, as for any record of another tenant.
 */
export function recordKey(layout: LiveLayout, id: string, tenantId: string | undefined, shards = layout.shards.write): Key {
  const { entity } = layout;
  const ms = entity.access.public ? undefined : idTime(entity.idFormat, id);
  if (ms === undefined || tenantId === undefined) return detachedKey(entity, id);
  return { pk: recordShardKey(tenantPartition(entity, tenantId), id, shards), sk: `${invertedMs(ms)}#${id}` };
}

/**
 * Every key where a read by id may find the live record `id` (recordKey under each of
 * homeCounts): one, but while a change of write shards is migrated. Of the items found there, the
 * one of kind 'record' is the record; the others are its listing copies (items.ts).
 */
export function recordKeys(layout: LiveLayout, id: string, tenantId: string | undefined): Key[] {
  const first = recordKey(layout, id, tenantId);
  if (first.sk === RECORD_SK) return [first];
  return homeCounts(layout).map((shards) => recordKey(layout, id, tenantId, shards));
}

/**
 * Where a read by id looks when it found a listing copy of the record where its layout puts the
 * record item, and not the item: another process has started a change of write shards this one
 * has not read yet (a process reads the migration states every few seconds) and a write moved the
 * record to the new count. The controller doubles or halves the count (shared/migrations/
 * shard-control.ts): the record's keys under those. A change of a pinned count is recorded at
 * deploy, and its pass waits for every process to read it.
 */
export function movedKeys(layout: LiveLayout, id: string, tenantId: string | undefined): Key[] {
  const known = new Set(homeCounts(layout));
  const { write } = layout.shards;
  const counts = [write * 2, write / 2].filter((n) => Number.isInteger(n) && n >= 1 && n <= MAX_WRITE_SHARDS && !known.has(n));
  return recordKey(layout, id, tenantId).sk === RECORD_SK ? [] : counts.map((n) => recordKey(layout, id, tenantId, n));
}

/**
 * Where `record` is stored: in its tenant's listing under its home count (homeShards) for a live
 * one; detachedKey once soft-deleted (it leaves the listing it stood in, and reads by id no
 * longer find it: 404 like any soft-deleted record).
 */
export function homeKey(layout: LiveLayout, record: StoredRecord): Key {
  return record.deletedAt ? detachedKey(layout.entity, record.id) : recordKey(layout, record.id, record.tenantId, homeShards(record));
}

/** The listing partition the record item itself stands in (its own copy there); none for a detached record. */
export function ownListing(layout: LiveLayout, record: StoredRecord): string | undefined {
  const key = homeKey(layout, record);
  if (key.sk === RECORD_SK) return undefined;
  // The key comes from the id; the listing orders by createdAt: they are one time, by construction (newRecordId).
  if (key.sk !== listingSortKey(record)) throw new Error(`record ${record.id}: createdAt ${record.createdAt} is not the time its id carries`);
  return key.pk;
}
