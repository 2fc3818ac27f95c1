/**
 * What the query language may name on an entity: the record's own attributes (id, createdAt,
 * updatedAt), the entity's fields, and dotted metadata paths (metadata.a.b). Protected fields
 * (password, passwordHash, apiKeyHash, secretKey) can be neither filtered, sorted nor selected.
 * Pure: no I/O.
 */
import { linkKeys, PROTECTED_FIELDS, type FieldType, type LoadedEntity } from '../registry/index.js';

export const PROTECTED = new Set<string>(PROTECTED_FIELDS);

/** The type a value is checked against: a field type, or 'any' for metadata paths. */
export type ValueType = FieldType | 'any';

export interface FieldRef {
  /** The name as the client wrote it (`status`, `metadata.workflow.stage`). */
  name: string;
  /** Attribute path in a stored record (`['data', 'status']`, `['createdAt']`, `['metadata', 'workflow', 'stage']`). */
  path: string[];
  type: ValueType;
  sortable: boolean;
  /** An enum's values. */
  values?: readonly string[];
}

export type Resolution = { ok: true; ref: FieldRef } | { ok: false; reason: 'unknown' | 'protected' | 'not sortable' };

const TOP: Record<string, FieldType> = { id: 'string', createdAt: 'datetime', updatedAt: 'datetime' };

export function isMetadataPath(name: string): boolean {
  return name.startsWith('metadata.');
}

/** Resolves a name used in filter, sort or a `{field}=value` parameter. */
export function resolveField(entity: LoadedEntity, name: string): Resolution {
  if (PROTECTED.has(name)) return { ok: false, reason: 'protected' };
  if (isMetadataPath(name)) {
    const parts = name.split('.').slice(1);
    if (parts.length === 0 || parts.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype')) return { ok: false, reason: 'unknown' };
    return { ok: true, ref: { name, path: ['metadata', ...parts], type: 'any', sortable: true } };
  }
  if (Object.prototype.hasOwnProperty.call(TOP, name)) return { ok: true, ref: { name, path: [name], type: TOP[name], sortable: true } };
  const field = Object.prototype.hasOwnProperty.call(entity.fields, name) ? entity.fields[name] : undefined;
  if (!field) return { ok: false, reason: 'unknown' };
  return { ok: true, ref: { name, path: ['data', name], type: field.type, sortable: field.sortable !== false, values: field.values } };
}

/** Names `fields=` may select (id always comes back). */
export function selectableFields(entity: LoadedEntity): Set<string> {
  const names = ['id', 'createdAt', 'updatedAt', ...Object.keys(entity.fields).filter((n) => !PROTECTED.has(n)), ...linkKeys(entity)];
  if (entity.softDelete) names.push('deletedAt');
  return new Set(names);
}

export function searchableFields(entity: LoadedEntity): string[] {
  return Object.entries(entity.fields)
    .filter(([name, f]) => f.searchable && !PROTECTED.has(name))
    .map(([name]) => name);
}

/** The value at an attribute path of a stored record (or any object). */
export function valueAt(record: unknown, path: readonly string[]): unknown {
  let current: unknown = record;
  for (const part of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
