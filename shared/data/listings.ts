/**
 * What a record is listed under: the listing partitions it has a place in (its base partitions
 * and, per index token of the layout with a value, the field partitions under them, on its write
 * shard of each count the layout maintains), and the partition a LIST reads for a viewer. Pure:
 * no I/O. Counting those listings is counters.ts'; the items standing in them are items.ts'.
 */
import { ApiError } from '../errors.js';
import type { LoadedEntity } from '../registry/index.js';
import { tokenField, type LiveLayout } from './layout.js';
import { basePartitions, fieldPartition, globalPartition, heldShards, ownerPartition, recordShardKey, tenantPartition } from './partitions.js';
import type { StoredRecord } from './record-item.js';

/**
 * A listing partition of a record: a base partition, or an indexed field's partition under one.
 * `partition` and `base` are partition keys: the record's shard of each (partitions.ts shardKey).
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
  /** false: a dropped index's partition or a shard count no longer maintained, whose counts nobody reads. */
  counted?: boolean;
}

/**
 * Every listing partition of a record, bases first; none once it is soft-deleted. `held`: the
 * partitions the stored record is in (its `ix` tokens, or the layout's legacy ones, under the
 * shard counts of its `ws`), for what a write leaves; otherwise those the layout's writes
 * maintain, for what it enters.
 */
export function listings(layout: LiveLayout, record: StoredRecord, which: 'target' | 'held' = 'target'): Listing[] {
  if (record.deletedAt) return [];
  const maintained = layout.shards.maintained;
  const sets = which === 'held' ? heldShards(record) : maintained;
  if (which === 'held') {
    // A count this process neither maintains nor knows as retired is newer than its layout: another
    // process has started a change of write shards it has not read yet. Writing on would take the
    // record out of those listings without counting it out (as for a retired count), and the pass
    // would count it in again.
    // So is a record listed under this layout's write count and, after it, another (a record lists
    // the counts of the layout that wrote it `[kept, write]`): a count this process knows as retired
    // (its events are still read) that a newer change maintains again, a merge back to it.
    const known = new Set([...maintained, ...layout.shards.events]);
    const at = sets.indexOf(layout.shards.write);
    if (sets.some((n) => !known.has(n)) || (at >= 0 && at < sets.length - 1)) throw shardsChangingError(layout.entity.slug);
  }
  const tokens = which === 'held' ? (record.ix ?? layout.legacy) : layout.tokens;
  const bases = basePartitions(layout.entity, record.tenantId, record.ownerId);
  const out: Listing[] = [];
  for (const shards of sets) {
    // A shard count writes no longer maintain: its copies are left, never counted.
    const kept = maintained.includes(shards);
    for (const base of bases) {
      const at = recordShardKey(base, record.id, shards);
      out.push(kept ? { partition: at, base: at } : { partition: at, base: at, counted: false });
    }
    for (const token of tokens) {
      const field = tokenField(token);
      const value = record.data[field];
      if (value === undefined || value === null || value === '') continue;
      const index = layout.indexes.find((i) => i.token === token);
      for (const base of bases) {
        out.push({
          partition: recordShardKey(fieldPartition(base, token, value), record.id, shards),
          base: recordShardKey(base, record.id, shards),
          field,
          value,
          token,
          consolidated: index?.consolidated ?? false,
          counted: kept && index !== undefined,
        });
      }
    }
  }
  return out;
}

/** Seconds a write refused by shardsChangingError is told to wait: a process reads the migration states at least every 5 s. */
export const SHARDS_CHANGING_RETRY_AFTER_SECONDS = 5;

/** 503 SERVICE_UNAVAILABLE with Retry-After: the record is listed under write shards this process has not read of yet. */
export function shardsChangingError(entity: string): ApiError {
  const retry = SHARDS_CHANGING_RETRY_AFTER_SECONDS;
  return ApiError.of('SERVICE_UNAVAILABLE', `The write shards of ${entity} are changing and this server has not read the change yet: retry after ${retry} seconds`, {
    headers: { 'Retry-After': String(retry) },
  });
}

/** Every listing partition of a record; none once it is soft-deleted. */
export function listingPartitions(layout: LiveLayout, record: StoredRecord): string[] {
  return listings(layout, record).map((l) => l.partition);
}

/** Who is listing: decides the partition (owner view, tenant view, or the public one). */
export interface Viewer {
  tenantId?: string;
  userId?: string;
  admin: boolean;
}

/**
 * The (logical) partition a LIST reads: public entity → the global one; shared entity or an
 * admin → the tenant's; anyone else → their own owner partition. `filter` narrows it to an
 * indexed field's value (`field` is the index token).
 */
export function listingPartitionFor(entity: Pick<LoadedEntity, 'tableName' | 'access'>, viewer: Viewer, filter?: { field: string; value: unknown }): string {
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
