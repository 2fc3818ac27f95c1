/**
 * Uniqueness items of the records table (`unique: true` on a field): pure key and item builders,
 * no I/O. A value is held by ONE item, written in the same TransactWriteItems as the record that
 * takes it, on the condition that no such item exists yet:
 *
 *   pk = `<scope>#<tableName>#unique#<field>=<encoded value>`, sk = `#unique`
 *   {kind: 'unique', entity: <slug>, field, recordId, tenantId}
 *
 * scope is the record's tenant, or `*` for a public entity (whose records every tenant reads, so
 * a value is unique across tenants). The value is `encodeURIComponent(String(value))`, except that
 * a lone surrogate (which encodeURIComponent refuses) becomes `%u` and its four hex digits (encodeKeyValue): the
 * same text for every well-formed string. Null, absent and empty values hold no item.
 *
 * The record item lists the fields whose item it holds in `uniques`. A record may hold none for a
 * unique field (a duplicate that predates the rule): an update or delete releases only what the
 * record holds, so such a record can still be updated and deleted; an update that sets a new value
 * must acquire it.
 *
 * While a migration builds the items of a field made unique (the layout's `uniqueBuilding`), a
 * record it has not reached yet may hold any value without an item: an item's absence proves
 * nothing. No write may then acquire a new value of that field: the builders refuse it (503
 * SERVICE_UNAVAILABLE with Retry-After, uniqueBuildingError), until the pass is complete and
 * every live record's value is held. Writes that set no new value of it (clear it, leave it
 * unchanged, or change other fields) proceed.
 */
import { ApiError } from '../errors.js';
import type { LoadedEntity } from '../registry/index.js';
import { encodeKeyValue, MAX_PARTITION_KEY_BYTES, type Key, type StoredRecord, type TransactItem } from './record-item.js';

export const UNIQUE_SK = '#unique';
export const UNIQUE_KIND = 'unique';
/** The scope of a public entity's values: every tenant. */
export const PUBLIC_SCOPE = '*';

type EntityKeys = Pick<LoadedEntity, 'tableName' | 'access'>;

export interface UniqueItem extends Key {
  kind: typeof UNIQUE_KIND;
  entity: string;
  field: string;
  recordId: string;
  tenantId: string;
}

/** The fields of an entity declared `unique: true`, in definition order. */
export function uniqueFields(entity: Pick<LoadedEntity, 'fields'>): string[] {
  return Object.entries(entity.fields)
    .filter(([, f]) => f.unique === true)
    .map(([name]) => name);
}

export function uniqueScope(entity: EntityKeys, tenantId: string): string {
  return entity.access.public ? PUBLIC_SCOPE : tenantId;
}

/** Whether a value takes a uniqueness item (null, absent and '' do not). */
export function holdsValue(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** The key of the item holding `value` of `field` in the tenant's scope (every tenant's for a public entity). */
export function uniqueKey(entity: EntityKeys, tenantId: string, field: string, value: unknown): Key {
  return { pk: `${uniqueScope(entity, tenantId)}#${entity.tableName}#unique#${field}=${encodeKeyValue(String(value))}`, sk: UNIQUE_SK };
}

/** Whether the key of this value fits DynamoDB's partition key limit (a longer value cannot be held). */
export function uniqueKeyFits(entity: EntityKeys, tenantId: string, field: string, value: unknown): boolean {
  return Buffer.byteLength(uniqueKey(entity, tenantId, field, value).pk) <= MAX_PARTITION_KEY_BYTES;
}

export function uniqueItem(entity: EntityKeys & Pick<LoadedEntity, 'slug'>, record: Pick<StoredRecord, 'id' | 'tenantId'>, field: string, value: unknown): UniqueItem {
  return { ...uniqueKey(entity, record.tenantId, field, value), kind: UNIQUE_KIND, entity: entity.slug, field, recordId: record.id, tenantId: record.tenantId };
}

/** Acquires a value: a Put that fails (ConditionalCheckFailed) when another record holds it. */
export function uniquePut(table: string, item: UniqueItem): TransactItem {
  return { Put: { TableName: table, Item: { ...item }, ConditionExpression: 'attribute_not_exists(pk)' } };
}

/** Releases a value the record holds. */
export function uniqueDelete(table: string, key: Key): TransactItem {
  return { Delete: { TableName: table, Key: { pk: key.pk, sk: key.sk } } };
}

/** The field of a uniqueness Put in a transaction (undefined for any other item). */
export function uniquePutField(item: TransactItem | undefined): string | undefined {
  const put = item?.Put?.Item;
  return put && put.kind === UNIQUE_KIND && typeof put.field === 'string' ? put.field : undefined;
}

export interface UniqueWrites {
  /** The fields whose item the record holds after the write (its `uniques`). */
  holds: string[];
  /** Puts of values acquired, Deletes of values released. */
  items: TransactItem[];
}

/**
 * What a write does to the record's uniqueness items: `before` undefined is a create, `after`
 * undefined (or soft-deleted) a delete, which releases everything held. On an update, for every
 * field held before or unique now:
 * - a held value that stays (same field still unique, same value) stays held;
 * - a held value that changes, is cleared, or whose field is no longer unique is released;
 * - a new value of a unique field is acquired (conditional Put);
 * - an unchanged value not held (a duplicate predating the rule) stays not held.
 */
export function uniqueWrites(
  entity: EntityKeys & Pick<LoadedEntity, 'slug' | 'fields'>,
  table: string,
  before: StoredRecord | undefined,
  after: StoredRecord | undefined,
  building: ReadonlySet<string> = new Set(),
): UniqueWrites {
  const unique = new Set(uniqueFields(entity));
  const held = new Set(before?.uniques ?? []);
  const live = after && !after.deletedAt ? after : undefined;
  const holds: string[] = [];
  const items: TransactItem[] = [];
  const fields = [...new Set([...held, ...unique])];
  for (const field of fields) {
    const oldValue = before?.data[field];
    const newValue = live && unique.has(field) ? live.data[field] : undefined;
    const oldKey = before && held.has(field) && holdsValue(oldValue) ? uniqueKey(entity, before.tenantId, field, oldValue) : undefined;
    const newKey = live && holdsValue(newValue) ? uniqueKey(entity, live.tenantId, field, newValue) : undefined;
    if (oldKey && newKey && oldKey.pk === newKey.pk) {
      holds.push(field);
      continue;
    }
    if (oldKey) items.push(uniqueDelete(table, oldKey));
    if (!newKey) continue;
    const unchanged = before !== undefined && holdsValue(oldValue) && uniqueKey(entity, before.tenantId, field, oldValue).pk === newKey.pk;
    // An unchanged value the record never held (a duplicate from before the rule): left as it is.
    if (unchanged && !oldKey) continue;
    items.push(uniquePut(table, uniqueItem(entity, live!, field, newValue)));
    holds.push(field);
  }
  const refused = items.map(uniquePutField).filter((f): f is string => f !== undefined && building.has(f));
  if (refused.length) throw uniqueBuildingError(entity.slug, refused);
  return { holds, items };
}

/** Seconds a write refused while uniqueness is built is told to wait (a process reads a finished pass within 5 s). */
export const UNIQUE_BUILDING_RETRY_AFTER_SECONDS = 5;

/** 503 SERVICE_UNAVAILABLE with Retry-After: a new value of these fields cannot be taken while their uniqueness items are built. */
export function uniqueBuildingError(entity: string, fields: readonly string[]): ApiError {
  const retry = UNIQUE_BUILDING_RETRY_AFTER_SECONDS;
  return ApiError.of('SERVICE_UNAVAILABLE', `The uniqueness of ${fields.join(' and ')} of ${entity} is being built over the stored records; a new value can be set once it is complete: retry after ${retry} seconds`, {
    headers: { 'Retry-After': String(retry) },
    details: Object.fromEntries(fields.map((f) => [f, 'unique: being built over the stored records, a new value is refused until it is complete; retry'])),
  });
}

/**
 * The uniqueness items this write would acquire (the new values of unique fields) for fields in
 * `building`: their keys, so a caller can tell a value already held (409) from one it cannot
 * judge yet (503).
 */
export function buildingAcquisitions(entity: EntityKeys & Pick<LoadedEntity, 'slug' | 'fields'>, building: ReadonlySet<string>, before: StoredRecord | undefined, after: StoredRecord): { field: string; key: Key }[] {
  if (building.size === 0) return [];
  return uniqueWrites(entity, '', before, after)
    .items.filter((item) => building.has(uniquePutField(item) ?? ''))
    .map((item) => ({ field: uniquePutField(item)!, key: { pk: String(item.Put!.Item!.pk), sk: String(item.Put!.Item!.sk) } }));
}

/**
 * Unique fields whose new value (set by this create or update) is too long to be held: its key
 * would pass DynamoDB's partition key limit. The write is refused (422) rather than failed (500).
 */
export function oversizedUniques(entity: EntityKeys & Pick<LoadedEntity, 'fields'>, before: StoredRecord | undefined, after: StoredRecord): string[] {
  return uniqueFields(entity).filter((field) => {
    const value = after.data[field];
    if (!holdsValue(value) || (before && before.data[field] === value)) return false;
    return !uniqueKeyFits(entity, after.tenantId, field, value);
  });
}

/** The record with its `uniques` set to `holds` (absent when it holds none). */
export function withUniques(record: StoredRecord, holds: readonly string[]): StoredRecord {
  const { uniques: _uniques, ...rest } = record;
  return holds.length ? { ...rest, uniques: [...holds] } : rest;
}
