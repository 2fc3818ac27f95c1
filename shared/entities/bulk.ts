/**
 * Bulk update `PATCH /api/v1/{entity}` `{updates: [{id, ...fields}]}` → 200
 * `{updated, failed, items, failures: [{index, id, error, code, details?}]}` and bulk delete
 * `DELETE /api/v1/{entity}` `{ids}` → 200 `{deleted, failed, failures}` (CONTRACT.md). At most 100
 * each. Every item goes through the single operation of shared/entities/service.ts
 * (updateStored / removeStored, with the layout loaded once for the request), so validation, references, row-level security (another user's
 * id fails with NOT_FOUND and nothing of theirs changes), soft delete, the version guard and the
 * change event are exactly those of PATCH/DELETE /api/v1/{entity}/{id}: one TransactWriteItems
 * per item, atomic per item, not across items. Disabled operations (405) and missing scopes
 * (403) refuse the whole request before any item runs. Items run in order, a few at a time;
 * an id repeated in one request is refused (422) rather than written twice.
 *
 * Each item may carry `ifMatch` (an ETag of READ, or `*`), as If-Match does for one record: an
 * update item `{id, ifMatch, ...fields}`, a delete item `{id, ifMatch}` in place of a bare id.
 * An item whose record moved on fails alone with PRECONDITION_FAILED (and `etag`, the current one).
 */
import type { AuthContext } from '../caller.js';
import { BadRequestError, toApiError, ValidationError } from '../errors.js';
import type { LoadedEntity } from '../registry/index.js';
import { loadLayouts } from '../migrations/index.js';
import { preconditionsOfValue } from './preconditions.js';
import { present } from './present.js';
import { mayDelete, mayUpdate, removeStored, updateStored } from './service.js';
import { startOperation } from './operation.js';

export const MAX_BULK_ITEMS = 100;
const IN_FLIGHT = 4;

export interface BulkFailure {
  index: number;
  id: unknown;
  error: string;
  code: string;
  details?: Record<string, unknown>;
  /** The record's current ETag, when an ifMatch failed. */
  etag?: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function listOf(body: unknown, name: string): unknown[] {
  const value = isPlainObject(body) ? body[name] : undefined;
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_BULK_ITEMS) {
    throw new ValidationError({ [name]: `must be an array of 1 to ${MAX_BULK_ITEMS} items` });
  }
  const extra = Object.keys(body as Record<string, unknown>).filter((k) => k !== name);
  if (extra.length) throw new ValidationError(Object.fromEntries(extra.map((k) => [k, 'is not accepted here'])));
  return value;
}

function duplicates(ids: unknown[], name: string): void {
  const seen = new Map<string, number>();
  const details: Record<string, string> = {};
  ids.forEach((id, i) => {
    if (typeof id !== 'string') return;
    if (seen.has(id)) details[`${name}[${i}]`] = `repeats the id of ${name}[${seen.get(id)}]`;
    else seen.set(id, i);
  });
  if (Object.keys(details).length) throw new ValidationError(details);
}

/** Runs `work` for each index, IN_FLIGHT at a time, results in index order. */
async function each<T>(count: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(IN_FLIGHT, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await work(i);
      }
    }),
  );
  return out;
}

function failureOf(index: number, id: unknown, error: unknown): BulkFailure {
  const e = toApiError(error);
  return { index, id, error: e.message, code: e.code, ...(e.details ? { details: e.details } : {}), ...(e.headers.ETag ? { etag: e.headers.ETag } : {}) };
}

const BAD_ID = (value: unknown) => typeof value !== 'string' || value.length === 0;

export interface BulkUpdateResult {
  /** The bulk call's id, kept in the revision of every record it changed. */
  operationId: string;
  updated: number;
  failed: number;
  items: unknown[];
  failures: BulkFailure[];
}

export interface BulkDeleteResult {
  operationId: string;
  deleted: number;
  failed: number;
  ids: string[];
  failures: BulkFailure[];
}

/** `body` is `{updates: [{id, ifMatch?, ...fields}]}`; `replaceMetadata` as for one record's update. */
export async function bulkUpdate(entity: LoadedEntity, caller: AuthContext | undefined, body: unknown, options: { replaceMetadata?: boolean } = {}): Promise<BulkUpdateResult> {
  const { operationId, auth, finish } = startOperation(mayUpdate(entity, caller));
  const updates = listOf(body, 'updates');
  duplicates(updates.map((u) => (isPlainObject(u) ? u.id : undefined)), 'updates');
  const replaceMetadata = options.replaceMetadata === true;
  // Every item with the layout loaded once, for the request.
  const layouts = await loadLayouts();
  const results = await each(updates.length, async (i) => {
    const update = updates[i];
    if (!isPlainObject(update) || BAD_ID(update.id)) {
      return { failure: failureOf(i, isPlainObject(update) ? update.id : undefined, new ValidationError({ id: 'is required (a string)' })) };
    }
    const { id, ifMatch, ...fields } = update;
    try {
      const stored = await updateStored(layouts, entity, id as string, auth, fields, { replaceMetadata, preconditions: preconditionsOfValue(ifMatch) });
      return { record: present(entity, stored) };
    } catch (error) {
      return { failure: failureOf(i, id, error) };
    }
  });
  const items = results.flatMap((r) => (r.record ? [r.record] : []));
  const failures = results.flatMap((r) => (r.failure ? [r.failure] : []));
  await finish();
  return { operationId, updated: items.length, failed: failures.length, items, failures };
}

/** `body` is `{ids: [id | {id, ifMatch}]}` (undefined: the request had no body). */
export async function bulkDelete(entity: LoadedEntity, caller: AuthContext | undefined, body: unknown): Promise<BulkDeleteResult> {
  const { operationId, auth, finish } = startOperation(mayDelete(entity, caller));
  if (body === undefined) throw new BadRequestError('A bulk delete needs a JSON body {ids: [...]}', { ids: 'is required' });
  const entries = listOf(body, 'ids');
  // An entry is an id, or {id, ifMatch}.
  const ids = entries.map((entry) => (isPlainObject(entry) ? entry.id : entry));
  duplicates(ids, 'ids');
  const layouts = await loadLayouts();
  const results = await each(ids.length, async (i) => {
    const id = ids[i];
    const entry = entries[i];
    if (BAD_ID(id)) return { failure: failureOf(i, id, new ValidationError({ id: 'must be a non-empty string' })) };
    if (isPlainObject(entry) && Object.keys(entry).some((k) => k !== 'id' && k !== 'ifMatch')) {
      return { failure: failureOf(i, id, new ValidationError({ [`ids[${i}]`]: 'takes only id and ifMatch' })) };
    }
    try {
      await removeStored(layouts, entity, id as string, auth, isPlainObject(entry) ? preconditionsOfValue(entry.ifMatch) : undefined);
      return { id: id as string };
    } catch (error) {
      return { failure: failureOf(i, id, error) };
    }
  });
  const deleted = results.flatMap((r) => (r.id ? [r.id] : []));
  const failures = results.flatMap((r) => (r.failure ? [r.failure] : []));
  await finish();
  return { operationId, deleted: deleted.length, failed: failures.length, ids: deleted, failures };
}
