/**
 * Keys, items and transactions of the records and events tables: pure functions, no I/O
 * (shared/data/records.ts sends what these build).
 *
 * Records table (pk / sk):
 * - the record:        `<table>#<id>` / `#record` — {kind: 'record', entity, id, tenantId, ownerId,
 *                      createdAt, updatedAt, deletedAt?, version, data: {fields…}, metadata?, metas?}
 * - listing copies:    `<partition>` / `<inverted createdAt>#<id>` — the same attributes (a full copy,
 *                      kind 'index'), one per listing partition of the record, so a page is one Query
 * - counters:          `<partition>` / `#count` — {kind: 'counter', count}; '#' sorts before the digits
 *                      of the copies, so a Query from `#count` returns the total first, then page 1
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
 * Events table: `<tenant>#<table>` / `<ISO time>#<random>` — {id, type: `<name>.created|updated|deleted`,
 * entity, recordId, tenantId, ownerId, data (the record, or {id} for deletes), createdAt, expiresAt}.
 */
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { findEntity, isRegistryLoaded } from '../registry/index.js';
import type { LoadedEntity } from '../registry/types.js';
import { foldText } from '../query/fold.js';

export const RECORD_SK = '#record';
export const COUNTER_SK = '#count';
/** Change events are kept at least this long (TTL). */
export const EVENT_TTL_SECONDS = 24 * 3600;
const MAX_EPOCH_MS = 9_999_999_999_999;
/** DynamoDB's limit on a partition key value (UTF-8 bytes). */
export const MAX_PARTITION_KEY_BYTES = 2048;

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface StoredRecord {
  /** Entity slug. */
  entity: string;
  id: string;
  tenantId: string;
  ownerId: string;
  createdAt: string;
  updatedAt: string;
  deletedAt?: string;
  /** Incremented by every write; guards concurrent updates. */
  version: number;
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  metas?: Record<string, string>;
}

export interface TableNames {
  records: string;
  events: string;
}

export interface Key {
  pk: string;
  sk: string;
}

export function recordKey(entity: Pick<LoadedEntity, 'tableName'>, id: string): Key {
  return { pk: `${entity.tableName}#${id}`, sk: RECORD_SK };
}

export function invertedTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not a date-time: ${iso}`);
  return String(MAX_EPOCH_MS - ms).padStart(13, '0');
}

export function listingSortKey(record: Pick<StoredRecord, 'createdAt' | 'id'>): string {
  return `${invertedTime(record.createdAt)}#${record.id}`;
}

export function globalPartition(entity: LoadedEntity): string {
  return entity.tableName;
}

export function tenantPartition(entity: LoadedEntity, tenantId: string): string {
  return `${tenantId}#${entity.tableName}`;
}

export function ownerPartition(entity: LoadedEntity, tenantId: string, ownerId: string): string {
  return `${tenantPartition(entity, tenantId)}#owner=${encodeURIComponent(ownerId)}`;
}

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) becomes `%u` and four hex digits, a form
 * encodeURIComponent never produces: values stay distinct and well-formed text is unchanged.
 */
export function encodeKeyValue(text: string): string {
  return text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]|[^\uD800-\uDFFF]+/g, (part) =>
    part.length === 1 && part >= '\uD800' && part <= '\uDFFF' ? `%u${part.charCodeAt(0).toString(16).toUpperCase()}` : encodeURIComponent(part),
  );
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

export function indexedFields(entity: LoadedEntity): string[] {
  return Object.entries(entity.fields)
    .filter(([, f]) => f.indexed)
    .map(([name]) => name);
}

/** Every listing partition of a record; none once it is soft-deleted. */
export function listingPartitions(entity: LoadedEntity, record: StoredRecord): string[] {
  if (record.deletedAt) return [];
  const bases = basePartitions(entity, record.tenantId, record.ownerId);
  const partitions = [...bases];
  for (const field of indexedFields(entity)) {
    const value = record.data[field];
    if (value === undefined || value === null || value === '') continue;
    for (const base of bases) partitions.push(fieldPartition(base, field, value));
  }
  return partitions;
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

export function counterKey(partition: string): Key {
  return { pk: partition, sk: COUNTER_SK };
}

export function recordItem(entity: LoadedEntity, record: StoredRecord): Record<string, unknown> {
  return { ...recordKey(entity, record.id), kind: 'record', ...record };
}

/**
 * Attribute of listing copies holding the record's searchable fields folded (case, accents and
 * compatibility forms: shared/query/fold.ts; one per line):
 * `search` and case-insensitive matching push `contains(_search, :word)` into the Query.
 */
export const SEARCH_ATTRIBUTE = '_search';

export function searchTextOf(entity: Pick<LoadedEntity, 'fields'>, record: Pick<StoredRecord, 'data'>): string {
  return Object.entries(entity.fields)
    .filter(([, f]) => f.searchable)
    .map(([name]) => record.data[name])
    .filter((v): v is string | number => typeof v === 'string' || typeof v === 'number')
    .map((v) => foldText(String(v)))
    .join('\n');
}

/** A listing copy. `entity` gives the searchable fields (else the loaded registry's definition, when there is one). */
export function indexItem(partition: string, record: StoredRecord, entity?: Pick<LoadedEntity, 'fields'>): Record<string, unknown> {
  entity ??= isRegistryLoaded() ? findEntity(record.entity) : undefined;
  const search = entity ? searchTextOf(entity, record) : '';
  return { pk: partition, sk: listingSortKey(record), kind: 'index', ...record, ...(search ? { [SEARCH_ATTRIBUTE]: search } : {}) };
}

/** The StoredRecord inside a record or index item. */
export function fromItem(item: Record<string, unknown>): StoredRecord {
  const { pk: _pk, sk: _sk, kind: _kind, [SEARCH_ATTRIBUTE]: _search, ...record } = item;
  return record as unknown as StoredRecord;
}

export type ChangeType = 'created' | 'updated' | 'deleted';

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
  return { pk: `${record.tenantId}#${entity.tableName}`, sk: `${ids.now}#${ids.suffix}`, ...event };
}

/** Adds `delta` to a partition's counter (created at the first write). */
export function counterUpdate(tables: TableNames, partition: string, delta: number): TransactItem {
  return {
    Update: {
      TableName: tables.records,
      Key: counterKey(partition),
      UpdateExpression: 'ADD #count :delta SET #kind = :counter',
      ExpressionAttributeNames: { '#count': 'count', '#kind': 'kind' },
      ExpressionAttributeValues: { ':delta': delta, ':counter': 'counter' },
    },
  };
}

function eventPut(tables: TableNames, event: Record<string, unknown>): TransactItem {
  return { Put: { TableName: tables.events, Item: event } };
}

/** Create: the record (only if new), a copy and +1 per listing partition, the event. */
export function createTransaction(entity: LoadedEntity, record: StoredRecord, event: Record<string, unknown>, tables: TableNames): TransactItem[] {
  const partitions = listingPartitions(entity, record);
  return [
    { Put: { TableName: tables.records, Item: recordItem(entity, record), ConditionExpression: 'attribute_not_exists(pk)' } },
    ...partitions.map((p): TransactItem => ({ Put: { TableName: tables.records, Item: indexItem(p, record, entity) } })),
    ...partitions.map((p) => counterUpdate(tables, p, 1)),
    eventPut(tables, event),
  ];
}

function versionGuard(before: StoredRecord): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  return {
    ConditionExpression: 'attribute_exists(pk) AND #version = :version AND attribute_not_exists(#deletedAt)',
    ExpressionAttributeNames: { '#version': 'version', '#deletedAt': 'deletedAt' },
    ExpressionAttributeValues: { ':version': before.version },
  };
}

/**
 * Update (also a soft delete, whose `after` has deletedAt): the record if still at `before`'s
 * version; fresh copies in every partition of `after`; copies removed from partitions it left;
 * counters +1 / -1 for partitions entered / left; the event.
 */
export function updateTransaction(
  entity: LoadedEntity,
  before: StoredRecord,
  after: StoredRecord,
  event: Record<string, unknown>,
  tables: TableNames,
): TransactItem[] {
  const old = new Set(listingPartitions(entity, before));
  const now = listingPartitions(entity, after);
  const kept = new Set(now);
  const left = [...old].filter((p) => !kept.has(p));
  const entered = now.filter((p) => !old.has(p));
  const oldSk = listingSortKey(before);
  return [
    { Put: { TableName: tables.records, Item: recordItem(entity, after), ...versionGuard(before) } },
    ...now.map((p): TransactItem => ({ Put: { TableName: tables.records, Item: indexItem(p, after, entity) } })),
    ...left.map((p): TransactItem => ({ Delete: { TableName: tables.records, Key: { pk: p, sk: oldSk } } })),
    ...entered.map((p) => counterUpdate(tables, p, 1)),
    ...left.map((p) => counterUpdate(tables, p, -1)),
    eventPut(tables, event),
  ];
}

/** Hard delete: the record if still at `before`'s version, its copies, -1 per partition, the event. */
export function deleteTransaction(entity: LoadedEntity, before: StoredRecord, event: Record<string, unknown>, tables: TableNames): TransactItem[] {
  const partitions = listingPartitions(entity, before);
  const sk = listingSortKey(before);
  return [
    { Delete: { TableName: tables.records, Key: recordKey(entity, before.id), ...versionGuard(before) } },
    ...partitions.map((p): TransactItem => ({ Delete: { TableName: tables.records, Key: { pk: p, sk } } })),
    ...partitions.map((p) => counterUpdate(tables, p, -1)),
    eventPut(tables, event),
  ];
}
