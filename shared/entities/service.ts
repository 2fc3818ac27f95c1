/**
 * The entity service behind /api/v1/{entity}: list, create, read, update, delete (the child
 * collections /api/v1/{entity}/{id}/{child} are children.ts'). It takes the caller and typed values
 * (a parsed query, shared/entities/query.ts; ids; a body) and returns data; the HTTP adapter
 * (shared/http/operations/entities.ts) builds the replies and their headers. Every check
 * (operation enabled, definition permissions, row-level security, validation, references) happens
 * here or below, never in a handler. Every write is ONE TransactWriteItems: the record, its
 * listing copies, their counters and a change event.
 *
 * Each operation is a request's edge for the layout: once the caller may ask it (operation and
 * scope checked), it loads the live layouts ONCE (shared/migrations loadLayouts) and passes that
 * value to everything it reads and writes, related records and included children too.
 */
import {
  createTransaction,
  deleteTransaction,
  getRecord,
  recordTables,
  revisionPut,
  transact,
  trashPut,
  updateTransaction,
  writeContextOf,
  WriteConflict,
  type RevisionOperation,
  type StoredRecord,
  type TransactItem,
} from '../data/index.js';
import { ConflictError, ValidationError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { checkCreate, checkUpdate, unvalidatedReferences, type LoadedEntity, type WriteInput } from '../registry/index.js';
import { loadLayouts, type LiveLayouts } from '../migrations/index.js';
import type { Pagination } from '../pagination.js';
import { canSee, changeableOr404, requireCaller, requireOperation, requirePermission, viewerOf, visibleOr404 } from './access.js';
import { after, applyUpdate, changedReferences, changeEvent, checkMerged, isPlainObject, newRecord, refuseOversizedUniques } from './changes.js';
import { executeList, planList } from './list.js';
import { metadataSources, metadataView } from './metadata.js';
import { pick, present, type PublicRecord } from './present.js';
import { preconditionFailed, recordEtag, satisfied, type Preconditions } from './preconditions.js';
import { checkReferences } from './references.js';
import { parseReadQueryString, type ListQuery, type ReadQuery, type RecordView } from './query.js';
import { attachRelations } from './relations.js';
import { refuseWhileUniqueBuilt } from './uniqueness.js';

export const WRITE_ATTEMPTS = 3;

/** How records are shown: fields, metas, metadata, included relations (LIST and READ). */
async function render(layouts: LiveLayouts, entity: LoadedEntity, records: StoredRecord[], view: RecordView, auth: AuthContext | undefined): Promise<PublicRecord[]> {
  const sources = view.metadata.merge && records.length ? await metadataSources(auth) : undefined;
  const out = records.map((r) => {
    const full = present(entity, r, { metas: view.metas });
    const shown = (view.fields ? pick(full, view.fields) : full) as PublicRecord;
    if (view.metas) shown.metas = full.metas;
    const metadata = metadataView(r, view.metadata, sources);
    if (metadata) shown.metadata = metadata;
    return shown;
  });
  await attachRelations(layouts, entity, records, out, view.includes, auth);
  return out;
}

/** A page of a list: the records the caller may see (or the distinct values asked for) and where the page stands. */
export interface ListResult {
  data: unknown[];
  pagination: Pagination;
}

/** A record as written or read, and its version's ETag (the one writes return and If-Match takes). */
export interface RecordWithEtag {
  data: PublicRecord;
  etag: string;
}

/** A page of `entity`'s records, planned and read with one layout (the plan reads only its complete indexes). */
export async function listPage(
  layouts: LiveLayouts,
  entity: LoadedEntity,
  auth: AuthContext | undefined,
  query: ListQuery,
  parent?: { field: string; value: unknown },
  linked?: string[],
): Promise<ListResult> {
  const layout = layouts.of(entity);
  const spec = linked ? { ...query.spec, ids: query.spec.ids ? query.spec.ids.filter((id) => linked.includes(id)) : linked } : query.spec;
  const result = await executeList(layout, planList(layout, viewerOf(auth), spec, parent), (r) => canSee(entity, r, auth));
  const data = result.distinct ?? (await render(layouts, entity, result.records, query.view, auth));
  return { data, pagination: result.pagination };
}

/** A page of `entity`'s records (`query`: shared/entities/query.ts parses it from a query string or builds it). */
export async function listRecords(entity: LoadedEntity, auth: AuthContext | undefined, query: ListQuery): Promise<ListResult> {
  requireOperation(entity, 'list');
  requirePermission(entity, 'read', auth);
  return listPage(await loadLayouts(), entity, auth, query);
}

export async function readRecord(entity: LoadedEntity, id: string, auth: AuthContext | undefined, query: ReadQuery = parseReadQueryString(entity)): Promise<RecordWithEtag> {
  requireOperation(entity, 'read');
  requirePermission(entity, 'read', auth);
  const layouts = await loadLayouts();
  const record = visibleOr404(entity, await getRecord(layouts.of(entity), id, auth?.tenantId), id, auth);
  const [data] = await render(layouts, entity, [record], query.view, auth);
  // The version's ETag (the one writes return and If-Match takes), whatever the view.
  return { data, etag: recordEtag(record) };
}

export interface CreateOptions {
  /** Values set by the path (a child's foreign key); they win over the body. */
  forced?: Record<string, unknown>;
  /** Reference fields already checked (the parent of a child collection). */
  checked?: string[];
  /** More items for the same transaction (linking a new tag to its task). */
  alongside?: (record: StoredRecord) => TransactItem[];
}

/**
 * The schema check; when it fails, the references the schema did not object to are checked too,
 * so that one 422 names every failing field.
 */
async function validated(layouts: LiveLayouts, entity: LoadedEntity, payload: unknown, auth: AuthContext, check: () => WriteInput, skip?: string[]): Promise<WriteInput> {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const details = { ...(error.details ?? {}) };
    try {
      await checkReferences(layouts, entity, unvalidatedReferences(entity, payload, details), auth, skip);
    } catch (more) {
      if (!(more instanceof ValidationError)) throw more;
      Object.assign(details, more.details);
    }
    throw new ValidationError(details);
  }
}

/** CREATE's checks (the operation, a caller, the definition's scope): the caller. */
export function mayCreate(entity: LoadedEntity, auth: AuthContext | undefined): AuthContext {
  requireOperation(entity, 'create');
  const caller = requireCaller(auth);
  requirePermission(entity, 'create', caller);
  return caller;
}

/** Validates and writes a new record: ONE TransactWriteItems. */
export async function createRecord(entity: LoadedEntity, auth: AuthContext | undefined, payload: unknown, options: CreateOptions = {}): Promise<PublicRecord> {
  const caller = mayCreate(entity, auth);
  return present(entity, await insertRecord(await loadLayouts(), entity, caller, payload, options));
}

/** CREATE with the new record's ETag. */
export async function createRecordWithEtag(entity: LoadedEntity, auth: AuthContext | undefined, payload: unknown): Promise<RecordWithEtag> {
  const caller = mayCreate(entity, auth);
  const record = await insertRecord(await loadLayouts(), entity, caller, payload);
  return { data: present(entity, record), etag: recordEtag(record) };
}

/** A new record of `entity` by a caller mayCreate let through: validated, its references checked, written. */
export async function insertRecord(layouts: LiveLayouts, entity: LoadedEntity, caller: AuthContext, payload: unknown, options: CreateOptions = {}): Promise<StoredRecord> {
  const withForced = options.forced && isPlainObject(payload) ? { ...payload, ...options.forced } : payload;
  const input = await validated(layouts, entity, withForced, caller, () => checkCreate(entity, withForced), options.checked);
  await checkReferences(layouts, entity, input.data, caller, options.checked);
  const record = newRecord(entity, caller, input, options.forced);
  refuseOversizedUniques(entity, undefined, record);
  const layout = layouts.of(entity);
  await refuseWhileUniqueBuilt(layout, undefined, record);
  const tables = recordTables();
  const items = [
    ...createTransaction(layout, record, changeEvent(layout, 'created', record, record.createdAt), tables),
    ...revisionPut(entity, tables.history, undefined, record, writeContextOf(caller, 'create')),
    ...(options.alongside?.(record) ?? []),
  ];
  await transact(items);
  caller.journal?.push({ entity: entity.slug, id: record.id, revision: record.version });
  return record;
}

/**
 * Reads, changes and writes one record, retrying when it changed in between (the write is
 * conditional on the version read). `build` returns the new state (none for a hard delete) and
 * the transaction, planned on the same layout as the read.
 *
 * With preconditions (If-Match / If-Unmodified-Since), the version read must satisfy them and
 * the write is conditional on exactly that version: a change in between fails the write itself,
 * which is then 412 (never retried onto a version the caller did not see). A record the caller
 * cannot see (none, deleted, another's) is 412 too, without an ETag, so existence is not revealed.
 */
async function rewrite(
  layouts: LiveLayouts,
  entity: LoadedEntity,
  id: string,
  auth: AuthContext,
  build: (before: StoredRecord) => Promise<{ after?: StoredRecord; items: TransactItem[] }>,
  preconditions?: Preconditions,
): Promise<{ before: StoredRecord; after?: StoredRecord }> {
  const layout = layouts.of(entity);
  const visible = (record: StoredRecord | undefined) => (record && canSee(entity, record, auth) ? record : undefined);
  for (let attempt = 1; ; attempt++) {
    const current = await getRecord(layout, id, auth.tenantId);
    if (preconditions) {
      if (!visible(current)) throw preconditionFailed(entity.name, id, undefined);
      changeableOr404(entity, current, id, auth);
      if (!satisfied(preconditions, current)) throw preconditionFailed(entity.name, id, current);
    }
    const before = changeableOr404(entity, current, id, auth);
    const { after: next, items } = await build(before);
    try {
      await transact(items);
      return { before, after: next };
    } catch (error) {
      if (!(error instanceof WriteConflict)) throw error;
      if (preconditions) throw preconditionFailed(entity.name, id, visible(await getRecord(layout, id, auth.tenantId)));
      if (attempt >= WRITE_ATTEMPTS) throw new ConflictError(`The ${entity.name} changed while it was being written; retry`);
    }
  }
}

export interface UpdateOptions {
  replaceMetadata?: boolean;
  preconditions?: Preconditions;
  /** How the write is recorded in the record's history (default `update`). */
  operation?: RevisionOperation;
}

/** UPDATE's checks (the operation, a caller, the definition's scope): the caller. */
export function mayUpdate(entity: LoadedEntity, auth: AuthContext | undefined): AuthContext {
  requireOperation(entity, 'update');
  const caller = requireCaller(auth);
  requirePermission(entity, 'update', caller);
  return caller;
}

export async function updateRecord(entity: LoadedEntity, id: string, auth: AuthContext | undefined, payload: unknown, options: UpdateOptions = {}): Promise<PublicRecord> {
  const caller = mayUpdate(entity, auth);
  return present(entity, await updateStored(await loadLayouts(), entity, id, caller, payload, options));
}

/** UPDATE with the new version's ETag. */
export async function updateRecordWithEtag(entity: LoadedEntity, id: string, auth: AuthContext | undefined, payload: unknown, options: UpdateOptions = {}): Promise<RecordWithEtag> {
  const caller = mayUpdate(entity, auth);
  const record = await updateStored(await loadLayouts(), entity, id, caller, payload, options);
  return { data: present(entity, record), etag: recordEtag(record) };
}

/** An update of record `id` by a caller mayUpdate let through: the new version. */
export async function updateStored(layouts: LiveLayouts, entity: LoadedEntity, id: string, caller: AuthContext, payload: unknown, options: UpdateOptions): Promise<StoredRecord> {
  const layout = layouts.of(entity);
  const input = await validated(layouts, entity, payload, caller, () => checkUpdate(entity, payload));
  const { after: updated } = await rewrite(layouts, entity, id, caller, async (before) => {
    await checkReferences(layouts, entity, changedReferences(before, input), caller);
    const next = applyUpdate(entity, before, input, options);
    checkMerged(entity, next);
    refuseOversizedUniques(entity, before, next);
    await refuseWhileUniqueBuilt(layout, before, next);
    const tables = recordTables();
    return {
      after: next,
      items: [...updateTransaction(layout, before, next, changeEvent(layout, 'updated', next, next.updatedAt), tables), ...revisionPut(entity, tables.history, before, next, writeContextOf(caller, options.operation ?? 'update'))],
    };
  }, options.preconditions);
  caller.journal?.push({ entity: entity.slug, id, revision: updated!.version });
  return updated!;
}

/** DELETE's checks (the operation, a caller, the definition's scope): the caller. */
export function mayDelete(entity: LoadedEntity, auth: AuthContext | undefined): AuthContext {
  requireOperation(entity, 'delete');
  const caller = requireCaller(auth);
  requirePermission(entity, 'delete', caller);
  return caller;
}

/** DELETE: a soft-deleted record comes back (with its ETag); a hard-deleted one is gone (undefined). */
export async function deleteRecord(entity: LoadedEntity, id: string, auth: AuthContext | undefined, preconditions?: Preconditions): Promise<RecordWithEtag | undefined> {
  const caller = mayDelete(entity, auth);
  const deleted = await removeStored(await loadLayouts(), entity, id, caller, preconditions);
  return deleted ? { data: present(entity, deleted), etag: recordEtag(deleted) } : undefined;
}

/** A delete of record `id` by a caller mayDelete let through: the soft-deleted version, or undefined once gone. */
export async function removeStored(
  layouts: LiveLayouts,
  entity: LoadedEntity,
  id: string,
  caller: AuthContext,
  preconditions?: Preconditions,
): Promise<StoredRecord | undefined> {
  const layout = layouts.of(entity);
  const tables = recordTables();
  const context = writeContextOf(caller, 'delete');
  const { before: removed, after: deleted } = await rewrite(layouts, entity, id, caller, async (before) => {
    if (entity.softDelete) {
      const now = after(before.updatedAt);
      const next: StoredRecord = { ...before, deletedAt: now, updatedAt: now, version: before.version + 1 };
      return { after: next, items: [...updateTransaction(layout, before, next, changeEvent(layout, 'deleted', next, now), tables), ...revisionPut(entity, tables.history, before, next, context), ...trashPut(entity, tables.history, before, now)] };
    }
    // The deletion's revision and its trash entry carry the same time: a restore finds the entry by it.
    const at = new Date();
    return { items: [...deleteTransaction(layout, before, changeEvent(layout, 'deleted', before, at.toISOString()), tables), ...revisionPut(entity, tables.history, before, undefined, context, at), ...trashPut(entity, tables.history, before, at.toISOString())] };
  }, preconditions);
  caller.journal?.push({ entity: entity.slug, id, revision: removed.version + 1 });
  return deleted;
}
