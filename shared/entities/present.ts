/**
 * The record as responses (and change events) show it: id, the entity's fields in definition
 * order, manyToMany id lists, createdAt, updatedAt, deletedAt when soft-deleted. Never the keys,
 * tenant, owner or version, and never a protected field (password, passwordHash, apiKeyHash,
 * secretKey). metadata and metas only when asked for.
 */
import type { StoredRecord } from '../data/index.js';
import { linkKeys, PROTECTED_FIELDS, type LoadedEntity } from '../registry/index.js';

const PROTECTED = new Set<string>(PROTECTED_FIELDS);

export interface PresentOptions {
  /** Add the record's metadata. */
  metadata?: boolean;
  /** Add metas: every pair ('all') or the named ones. */
  metas?: 'all' | string[];
}

export type PublicRecord = Record<string, unknown> & { id: string };

const shownKeys = new WeakMap<LoadedEntity, { fields: readonly string[]; links: readonly string[] }>();

/** The fields a record shows (definition order, protected ones left out) and its manyToMany id lists: once per definition. */
function shownOf(entity: LoadedEntity): { fields: readonly string[]; links: readonly string[] } {
  let found = shownKeys.get(entity);
  if (!found) {
    found = { fields: Object.keys(entity.fields).filter((name) => !PROTECTED.has(name)), links: linkKeys(entity) };
    shownKeys.set(entity, found);
  }
  return found;
}

export function present(entity: LoadedEntity, record: StoredRecord, options: PresentOptions = {}): PublicRecord {
  const out: PublicRecord = { id: record.id };
  const { fields, links } = shownOf(entity);
  for (const name of fields) {
    const value = record.data[name];
    if (value !== undefined) out[name] = value;
  }
  for (const key of links) out[key] = (record.data[key] as string[] | undefined) ?? [];
  out.createdAt = record.createdAt;
  out.updatedAt = record.updatedAt;
  if (record.deletedAt) out.deletedAt = record.deletedAt;
  if (options.metadata) out.metadata = record.metadata ?? {};
  if (options.metas) {
    const all = record.metas ?? {};
    out.metas = options.metas === 'all' ? { ...all } : Object.fromEntries(options.metas.filter((k) => Object.prototype.hasOwnProperty.call(all, k)).map((k) => [k, all[k]]));
  }
  return out;
}

/** Keeps only the named fields (id always). */
export function pick(record: Record<string, unknown>, fields: readonly string[] | undefined): Record<string, unknown> {
  if (!fields) return record;
  const out: Record<string, unknown> = { id: record.id };
  for (const f of fields) if (Object.prototype.hasOwnProperty.call(record, f) && !PROTECTED.has(f)) out[f] = record[f];
  return out;
}
