/**
 * Metadata on responses (SPEC.md Metadata; CONTRACT.md metadata sources).
 *
 * - omitted unless asked: `includeMetadata=true` (the record's own), `metadataFields=a,b` (only those
 *   top-level keys; implies includeMetadata), `mergeMetadata=true` (the merged view; implies it),
 *   `mergeStrategy=deep|shallow` (default deep);
 * - merge sources, lowest to highest: global defaults (METADATA_DEFAULTS), the tenant's `settings`,
 *   the user's `preferences`, the record's `metadata`. deep: nested objects merged key by key
 *   (arrays and scalars replace); shallow: a later top-level key replaces the earlier value whole;
 * - tenant settings and user preferences are read with ONE BatchGetItem per request that merges,
 *   and cached in module scope for 5 minutes (SPEC.md Limits); `invalidateMetadataSources` drops
 *   the cached entry (writes to tenants/users in this process should call it).
 *
 * Writes: PATCH merges deeply (null removes a key), `replaceMetadata=true` replaces; at most
 * 10,000 characters serialized (422); __proto__ / constructor / prototype dropped at any depth.
 */
import { batchGet, batchKey, tenantKey, userKey, type StoredRecord } from '../data/index.js';
import { config } from '../config.js';
import { BadRequestError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { booleanParam, list } from '../query/params.js';

export const METADATA_CACHE_MS = 5 * 60 * 1000;
const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

export type MergeStrategy = 'deep' | 'shallow';

export interface MetadataOptions {
  include: boolean;
  fields?: string[];
  merge: boolean;
  strategy: MergeStrategy;
}

export function parseMetadataOptions(query: Record<string, string>): MetadataOptions {
  const merge = booleanParam(query, 'mergeMetadata');
  const strategy = (query.mergeStrategy ?? 'deep').trim() || 'deep';
  if (strategy !== 'deep' && strategy !== 'shallow') throw new BadRequestError('mergeStrategy must be deep or shallow', { mergeStrategy: 'must be deep or shallow' });
  const fields = query.metadataFields !== undefined && query.metadataFields.trim() !== '' ? list(query.metadataFields) : undefined;
  return { include: booleanParam(query, 'includeMetadata') || merge || fields !== undefined, fields, merge, strategy };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A copy without unsafe keys and without null values, at any depth. */
export function cleanMetadata(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (UNSAFE.has(key) || v === null || v === undefined) continue;
    out[key] = isPlainObject(v) ? cleanMetadata(v) : v;
  }
  return out;
}

/** Deep merge for writes: a null value removes the key; unsafe keys are dropped. */
export function mergeMetadataPatch(current: Record<string, unknown> | undefined, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (UNSAFE.has(key)) continue;
    if (value === null) delete out[key];
    else if (isPlainObject(value)) out[key] = mergeMetadataPatch(isPlainObject(out[key]) ? (out[key] as Record<string, unknown>) : undefined, value);
    else out[key] = value;
  }
  return out;
}

/** Merges read-side sources, lowest priority first. */
export function mergeSources(sources: readonly (Record<string, unknown> | undefined)[], strategy: MergeStrategy): Record<string, unknown> {
  let out: Record<string, unknown> = {};
  for (const source of sources) {
    if (!isPlainObject(source)) continue;
    if (strategy === 'shallow') out = { ...out, ...cleanMetadata(source) };
    else out = deepMerge(out, cleanMetadata(source));
  }
  return out;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? deepMerge(out[key] as Record<string, unknown>, value) : value;
  }
  return out;
}

export interface MetadataSources {
  defaults: Record<string, unknown>;
  tenant: Record<string, unknown>;
  user: Record<string, unknown>;
}

const cache = new Map<string, { at: number; value: Promise<{ tenant: Record<string, unknown>; user: Record<string, unknown> }> }>();

/** Drops cached tenant settings / user preferences (all when called without arguments). */
export function invalidateMetadataSources(ids: { tenantId?: string; userId?: string } = {}): void {
  if (!ids.tenantId && !ids.userId) return cache.clear();
  for (const key of [...cache.keys()]) {
    const [tenantId, userId] = key.split('|');
    if ((ids.tenantId && tenantId === ids.tenantId) || (ids.userId && userId === ids.userId)) cache.delete(key);
  }
}

export async function metadataSources(auth: AuthContext | undefined, now = Date.now()): Promise<MetadataSources> {
  const defaults = config().metadataDefaults ?? {};
  if (!auth) return { defaults, tenant: {}, user: {} };
  const key = `${auth.tenantId}|${auth.user.id}`;
  let entry = cache.get(key);
  if (!entry || now - entry.at >= METADATA_CACHE_MS) {
    const value = batchGet([{ table: 'identity', keys: [tenantKey(auth.tenantId), userKey(auth.user.id)] }]).then((found) => {
      const tenant = found.get(batchKey('identity', tenantKey(auth.tenantId)));
      const user = found.get(batchKey('identity', userKey(auth.user.id)));
      return {
        tenant: isPlainObject(tenant?.settings) ? (tenant.settings as Record<string, unknown>) : {},
        user: isPlainObject(user?.preferences) ? (user.preferences as Record<string, unknown>) : {},
      };
    });
    entry = { at: now, value };
    cache.set(key, entry);
    value.catch(() => cache.delete(key));
  }
  return { defaults, ...(await entry.value) };
}

/** The metadata a response shows for a record (undefined: none asked for). */
export function metadataView(record: StoredRecord, options: MetadataOptions, sources?: MetadataSources): Record<string, unknown> | undefined {
  if (!options.include) return undefined;
  const base =
    options.merge && sources
      ? mergeSources([sources.defaults, sources.tenant, sources.user, record.metadata], options.strategy)
      : cleanMetadata(record.metadata ?? {});
  if (!options.fields) return base;
  return Object.fromEntries(options.fields.filter((k) => Object.prototype.hasOwnProperty.call(base, k)).map((k) => [k, base[k]]));
}
