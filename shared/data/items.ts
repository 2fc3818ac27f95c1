/**
 * The items of the records table built from a record: the record item, its listing copies (full,
 * or partial when the record passes 1 KB), and a record read back from either. Sizes are counted
 * as DynamoDB counts (and bills) them. Pure: no I/O.
 *
 * - the record:        {kind: 'record', entity, id, tenantId, ownerId, createdAt, updatedAt,
 *                      deletedAt?, version, data: {fields…}, metadata?, metas?, copiesVersion, ix,
 *                      sm?, uniques?, ws?} at its key (partitions.ts homeKey);
 * - listing copies:    `<partition>` / `<inverted createdAt>#<id>` — kind 'index', one per listing
 *                      partition of the record (listings.ts) but the one the record stands in: the
 *                      same attributes (a full copy) when they fit in 1 KB, so a page is one Query;
 *                      otherwise a partial copy (`partial: true`, at most 1 KB: keys, bookkeeping,
 *                      indexed fields, the smaller values) whose record readers fetch.
 */
import { canonical } from '../canonical-json.js';
import type { LoadedEntity } from '../registry/index.js';
import { upgradeData, type LiveLayout } from './layout.js';
import { homeKey, listingSortKey } from './partitions.js';
import type { RecordItem, StoredRecord, TableItem } from './record-item.js';

/**
 * The record item: the record at its key (under the shard counts writes maintain: its home is the
 * write count's), marked as listed under the layout's tokens, summed under its sum tokens (`sm`,
 * absent for none) and shard counts, its copies as of this version.
 */
export function recordItem(layout: LiveLayout, record: StoredRecord): Record<string, unknown> {
  const { sm: _sm, ...rest } = withMaintainedShards(layout, record);
  return { ...homeKey(layout, rest), kind: 'record', ...rest, copiesVersion: record.version, ix: layout.tokens, ...(layout.sumTokens.length ? { sm: layout.sumTokens } : {}) };
}

/** The record marked as listed under the shard counts writes maintain (`ws`; absent for [1]). */
export function withMaintainedShards(layout: LiveLayout, record: StoredRecord): StoredRecord {
  const { ws: _ws, ...rest } = record;
  const shards = layout.shards.maintained;
  return shards.length === 1 && shards[0] === 1 ? rest : { ...rest, ws: [...shards] };
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
  const { copiesVersion: _copiesVersion, ix: _ix, sm: _sm, uniques: _uniques, ws: _ws, ...record } = stored;
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

/**
 * The StoredRecord inside a record or index item, as stored (the migration runner reads records
 * so). The document client returns items untyped: a records-table item is read as a RecordItem
 * here, and only here.
 */
export function storedFromItem(item: TableItem): StoredRecord {
  const { pk: _pk, sk: _sk, kind: _kind, [SEARCH_ATTRIBUTE]: _search, [PARTIAL_ATTRIBUTE]: _partial, ...record } = item as RecordItem;
  return record;
}

/**
 * The StoredRecord inside a record or index item of the layout's entity, as the layout shows it:
 * a field added since it was written reads as its default, a removed field is left out
 * (layout.ts upgradeData). The next write stores it so.
 */
export function fromItem(layout: LiveLayout, item: TableItem): StoredRecord {
  const record = storedFromItem(item);
  if (record.data === undefined) return record;
  const data = upgradeData(layout, record.data);
  return data === record.data ? record : { ...record, data };
}
