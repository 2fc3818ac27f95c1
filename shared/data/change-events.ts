/**
 * The change event a record write puts in the events table, in the same transaction. Pure: no I/O.
 *
 * Events table: `<tenant>#<table>` (its write shard `#~<k>/<N>` appended on a sharded entity,
 * partitions.ts) / `<ISO time>#<random>` — {id, type: `<name>.created|updated|deleted`, entity,
 * recordId, tenantId, ownerId, data (the record, or {id} for deletes), createdAt, expiresAt}.
 * Readers (shared/stream/events.ts) read every shard count of the layout's `shards.events`.
 */
import type { LoadedEntity } from '../registry/index.js';
import type { LiveLayout } from './layout.js';
import { recordShardKey } from './partitions.js';
import type { StoredRecord, TransactItem } from './record-item.js';

/** Change events are kept at least this long (TTL). */
export const EVENT_TTL_SECONDS = 24 * 3600;

export type ChangeType = 'created' | 'updated' | 'deleted';

/** The events of one tenant for one entity: this partition, or its write shards (partitions.ts shardKeys). */
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
  layout: LiveLayout,
  change: ChangeType,
  record: StoredRecord,
  data: Record<string, unknown>,
  ids: { eventId: string; suffix: string; now: string },
): Record<string, unknown> {
  const { entity } = layout;
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
  return { pk: recordShardKey(eventPartition(record.tenantId, entity), record.id, layout.shards.write), sk: `${ids.now}#${ids.suffix}`, ...event };
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

