/**
 * Write capacity per partition key (pure), for the write-scale scenario: the WRU each key of the
 * records and events tables took, and what that means for the key DynamoDB throttles first (a
 * partition key takes at most 1,000 WCU/s).
 */
import type { ItemWrite } from './billing.js';
import { unshardedKey } from '../shared/data/partitions.js';

/** WCU per second one partition key takes at most. */
export const KEY_WCU_PER_SECOND = 1000;

/** The tables a key belongs to, as the write-scale scenario tells them apart. */
export type TableRole = 'records' | 'events';

/** WRU per key (`<role> <pk>`) of the writes added. */
export class KeyLoad {
  readonly wru = new Map<string, number>();

  /** Adds the writes on the records and events tables (`tables`: their names); others are left out. */
  add(writes: readonly ItemWrite[], tables: Record<TableRole, string>): void {
    for (const write of writes) {
      const role = write.table === tables.records ? 'records' : write.table === tables.events ? 'events' : undefined;
      if (!role) continue;
      const key = `${role} ${write.pk}`;
      this.wru.set(key, (this.wru.get(key) ?? 0) + write.wru);
    }
  }

  total(): number {
    let sum = 0;
    for (const wru of this.wru.values()) sum += wru;
    return sum;
  }
}

/** A key as shown: ids of tenants, users and records abbreviated (`<tenant>#tasks#~3/16`), events keys marked. */
export function shownKey(key: string): string {
  const [role, pk] = splitKey(key);
  const shown = pk
    .replace(/ten_[A-Za-z0-9]+/g, '<tenant>')
    .replace(/usr_[A-Za-z0-9]+/g, '<user>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
  return role === 'events' ? `events: ${shown}` : shown;
}

function splitKey(key: string): [TableRole, string] {
  const space = key.indexOf(' ');
  return [key.slice(0, space) as TableRole, key.slice(space + 1)];
}

/** The listing partition a key is one shard of (`<partition>#~<shard>/<shards>`), or the key itself. */
export const shardedPartition = unshardedKey;

/**
 * Whether `pk` of the records table is one of the entity's listing partitions (or a shard of
 * one): the entity's table name is one of its segments, and it is not a record's own key
 * (`<table>#<id>`, a record outside every listing) nor a unique value's (`…#<table>#unique#…`).
 */
export function isListingKey(pk: string, entityTable: string): boolean {
  const segments = pk.split('#');
  const at = segments.indexOf(entityTable);
  if (at < 0) return false;
  const rest = segments.slice(at + 1);
  if (rest[0] === 'unique') return false;
  const ownKey = at === 0 && rest.length === 1 && !/[=~]/.test(rest[0]);
  return !ownKey;
}

export interface KeyFigure {
  /** As shown (shownKey). */
  key: string;
  wcuPerRecord: number;
}

export interface LoadSummary {
  records: number;
  /** Every key's WRU together, per record written. */
  wcuPerRecord: number;
  /** The key with the most WRU, of either table. */
  hottest: KeyFigure;
  /** The entity's listing key with the most WRU, and its partition's other shards. */
  hottestListing?: KeyFigure & {
    /** Keys of its partition: its shards (written to or not), or 1 when it is not sharded. */
    keys: number;
    /** Mean WCU per record of the partition's other keys (the key itself when it is the only one). */
    meanWcuPerRecord: number;
  };
}

function hottestOf(entries: [string, number][]): [string, number] | undefined {
  let best: [string, number] | undefined;
  for (const entry of entries) if (!best || entry[1] > best[1]) best = entry;
  return best;
}

/**
 * What `load` means per record written. `shards`: the keys a sharded listing partition is spread
 * over (the entity's writeShards), so that a shard nobody wrote to counts in the mean.
 */
export function summarizeLoad(load: KeyLoad, records: number, entityTable: string, shards = 1): LoadSummary {
  const entries = [...load.wru];
  const hottest = hottestOf(entries) ?? ['records -', 0];
  const summary: LoadSummary = {
    records,
    wcuPerRecord: load.total() / records,
    hottest: { key: shownKey(hottest[0]), wcuPerRecord: hottest[1] / records },
  };
  const listing = entries.filter(([key]) => {
    const [role, pk] = splitKey(key);
    return role === 'records' && isListingKey(pk, entityTable);
  });
  const hot = hottestOf(listing);
  if (hot) {
    const partition = shardedPartition(splitKey(hot[0])[1]);
    const siblings = listing.filter(([key]) => shardedPartition(splitKey(key)[1]) === partition);
    const sharded = siblings.some(([key]) => splitKey(key)[1] !== partition);
    const keys = sharded ? Math.max(siblings.length, shards) : 1;
    const others = siblings.filter(([key]) => key !== hot[0]).reduce((n, [, wru]) => n + wru, 0);
    summary.hottestListing = {
      key: shownKey(hot[0]),
      wcuPerRecord: hot[1] / records,
      keys,
      meanWcuPerRecord: keys > 1 ? others / (keys - 1) / records : hot[1] / records,
    };
  }
  return summary;
}

/** Creates per second one key takes at `wcuPerRecord` before it reaches KEY_WCU_PER_SECOND. */
export function ceiling(wcuPerRecord: number): number {
  return wcuPerRecord > 0 ? KEY_WCU_PER_SECOND / wcuPerRecord : Infinity;
}
