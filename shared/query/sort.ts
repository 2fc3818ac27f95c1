/**
 * `sort` / `sortBy` and `order` / `sortOrder` (comma lists that pair up; a missing order is asc),
 * and the in-memory comparator: values of one type compare naturally (numbers numerically,
 * strings by code point, false before true); a missing or null value sorts before any value
 * (first in asc, last in desc); ties are always broken by id ascending. Pure.
 */
import { BadRequestError } from '../errors.js';
import type { LoadedEntity } from '../registry/types.js';
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

export function compareValues(a: unknown, b: unknown): number {
  const aMissing = a === undefined || a === null;
  const bMissing = b === undefined || b === null;
  if (aMissing || bMissing) return aMissing === bMissing ? 0 : aMissing ? -1 : 1;
  if (typeof a !== typeof b) return (TYPE_RANK[typeof a] ?? 9) - (TYPE_RANK[typeof b] ?? 9);
  if (typeof a === 'number' || typeof a === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string') return a < (b as string) ? -1 : a > (b as string) ? 1 : 0;
  const sa = JSON.stringify(a);
  const sb = JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** A comparator of stored records for the keys (default order when empty), ties by id asc. */
export function comparator(keys: readonly SortKey[]): (a: { id: string }, b: { id: string }) => number {
  const effective: readonly SortKey[] = keys.length ? keys : [{ field: { name: 'createdAt', path: ['createdAt'], type: 'datetime', sortable: true }, direction: 'desc' }];
  return (a, b) => {
    for (const k of effective) {
      const c = compareValues(valueAt(a, k.field.path), valueAt(b, k.field.path));
      if (c !== 0) return k.direction === 'asc' ? c : -c;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}
