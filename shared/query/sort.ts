/**
 * `sort` / `sortBy` and `order` / `sortOrder` (comma lists that pair up; a missing order is asc),
 * and the in-memory comparator: values of one type compare naturally (numbers numerically,
 * strings in UTF-8 byte order — DynamoDB's, so sorting, comparisons and cursors agree with
 * filters DynamoDB evaluates — false before true); a missing or null value sorts before any value
 * (first in asc, last in desc); ties are always broken by id ascending. Pure.
 */
import { BadRequestError } from '../errors.js';
import type { LoadedEntity } from '../registry/index.js';
import { resolveField, valueAt, type FieldRef } from './fields.js';

export interface SortKey {
  field: FieldRef;
  direction: 'asc' | 'desc';
}

export function invalidSort(message: string, key: 'sort' | 'order' = 'sort'): BadRequestError {
  return new BadRequestError(`Invalid sort: ${message}`, { [key]: message }, 'INVALID_SORT');
}

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim());
}

export function parseSort(entity: LoadedEntity, sort: string | undefined, order: string | undefined): SortKey[] {
  if (sort === undefined || sort.trim() === '') {
    if (order !== undefined && order.trim() !== '') {
      // order alone applies to the default field, createdAt.
      const direction = order.trim().toLowerCase();
      if (direction !== 'asc' && direction !== 'desc') throw invalidSort(`order must be asc or desc, got '${order}'`, 'order');
      return [{ field: (resolveField(entity, 'createdAt') as { ref: FieldRef }).ref, direction }];
    }
    return [];
  }
  const names = list(sort);
  const orders = order === undefined || order.trim() === '' ? [] : list(order);
  if (orders.length > names.length) throw invalidSort(`${orders.length} orders for ${names.length} sort fields`, 'order');
  const seen = new Set<string>();
  return names.map((name, i) => {
    if (name === '') throw invalidSort('empty field name in the sort list');
    const resolved = resolveField(entity, name);
    if (!resolved.ok) {
      throw invalidSort(resolved.reason === 'protected' ? `field '${name}' is protected and cannot be sorted` : `unknown field '${name}'`);
    }
    if (!resolved.ref.sortable) throw invalidSort(`field '${name}' is not sortable`);
    if (seen.has(name)) throw invalidSort(`field '${name}' appears twice`);
    seen.add(name);
    const direction = (orders[i] ?? 'asc').toLowerCase();
    if (direction !== 'asc' && direction !== 'desc') throw invalidSort(`order must be asc or desc, got '${orders[i]}'`, 'order');
    return { field: resolved.ref, direction };
  });
}

/** True when the keys ask for the listing partitions' own order: createdAt desc (ties by id asc). */
export function isDefaultOrder(keys: readonly SortKey[]): boolean {
  return keys.length === 0 || (keys.length === 1 && keys[0].field.name === 'createdAt' && keys[0].direction === 'desc');
}

const TYPE_RANK: Record<string, number> = { boolean: 1, number: 2, string: 3, object: 4 };

/**
 * UTF-16 code unit → a rank in code point order: U+E000..U+FFFF come before the surrogates
 * (which encode U+10000 and above). Code point order is UTF-8 byte order.
 */
function unitRank(unit: number): number {
  return unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit;
}

/** Strings in UTF-8 byte order (DynamoDB's order for strings): negative, zero or positive. */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return unitRank(x) - unitRank(y);
  }
  return a.length - b.length;
}

export function compareValues(a: unknown, b: unknown): number {
  const aMissing = a === undefined || a === null;
  const bMissing = b === undefined || b === null;
  if (aMissing || bMissing) return aMissing === bMissing ? 0 : aMissing ? -1 : 1;
  if (typeof a !== typeof b) return (TYPE_RANK[typeof a] ?? 9) - (TYPE_RANK[typeof b] ?? 9);
  if (typeof a === 'number' || typeof a === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string') return compareText(a, b as string);
  return compareText(JSON.stringify(a), JSON.stringify(b));
}

const DEFAULT_KEYS: readonly SortKey[] = [{ field: { name: 'createdAt', path: ['createdAt'], type: 'datetime', sortable: true }, direction: 'desc' }];

function effectiveKeys(keys: readonly SortKey[]): readonly SortKey[] {
  return keys.length ? keys : DEFAULT_KEYS;
}

/** A record's place in the order of the keys: its sort values (missing as null) and its id. */
export interface Position {
  values: unknown[];
  id: string;
}

export function positionOf(record: { id: string }, keys: readonly SortKey[]): Position {
  return { values: effectiveKeys(keys).map((k) => valueAt(record, k.field.path) ?? null), id: record.id };
}

/** Two positions in the order of the keys (default order when empty), ties by id asc. */
export function comparePositions(a: Position, b: Position, keys: readonly SortKey[]): number {
  const effective = effectiveKeys(keys);
  for (let i = 0; i < effective.length; i++) {
    const c = compareValues(a.values[i], b.values[i]);
    if (c !== 0) return effective[i].direction === 'asc' ? c : -c;
  }
  return compareText(a.id, b.id);
}

/** A comparator of stored records for the keys (default order when empty), ties by id asc. */
export function comparator(keys: readonly SortKey[]): (a: { id: string }, b: { id: string }) => number {
  return (a, b) => comparePositions(positionOf(a, keys), positionOf(b, keys), keys);
}
