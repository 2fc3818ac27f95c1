/**
 * The entity service behind /api/v1/{entity}: list, create, read, update, delete, and the child
 * collections /api/v1/{entity}/{id}/{child}. It takes the caller and typed values (a parsed query,
 * shared/entities/query.ts; ids; a body) and returns data; the HTTP adapter (shared/http/operations/entities.ts) builds the
 * replies and their headers. Every check (operation enabled, definition permissions, row-level
 * security, validation, references) happens here or below, never in a handler. Every write is ONE TransactWriteItems: the record, its listing copies,
 * their counters and a change event.
 */
import { randomBytes } from 'node:crypto';
import {
  createTransaction,
  deleteTransaction,
  eventItem,
  getRecord,
  oversizedUniques,
  recordTables,
  transact,
  updateTransaction,
  WriteConflict,
  type ChangeType,
  type StoredRecord,
  type TransactItem,
} from '../data/index.js';
import { BadRequestError, ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { newId, newRecordId } from '../ids.js';
import {
  checkCreate,
  checkUpdate,
  findEntity,
  mergedProblems,
  METADATA_MAX_CHARS,
  unvalidatedReferences,
  type LoadedEntity,
  type RelationDefinition,
  type WriteInput,
} from '../registry/index.js';
import { canSee, changeableOr404, requireCaller, requireOperation, requirePermission, viewerOf, visibleOr404 } from './access.js';
import { executeList, paginationOf, planList } from './list.js';
import { cleanMetadata, mergeMetadataPatch, metadataSources, metadataView } from './metadata.js';
import { pick, present, type PublicRecord } from './present.js';
import { preconditionFailed, recordEtag, satisfied, type Preconditions } from './preconditions.js';
import { checkReferences } from './references.js';
import { parseReadQueryString, type ListQuery, type ReadQuery, type RecordView } from './query.js';
import { attachRelations } from './relations.js';
import { ensureLayouts } from '../migrations/index.js';
import type { Pagination } from '../pagination.js';

const WRITE_ATTEMPTS = 3;

function changeEvent(entity: LoadedEntity, change: ChangeType, record: StoredRecord, now: string): Record<string, unknown> {
  return eventItem(entity, change, record, present(entity, record), {
    eventId: newId('evt'),
    suffix: randomBytes(6).toString('hex'),
    now,
  });
}

/** A time strictly after `previous` (updatedAt always moves forward, even within one millisecond). */
function after(previous: string, now = new Date()): string {
  const prev = Date.parse(previous);
  return new Date(Math.max(now.getTime(), prev + 1)).toISOString();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge where a null value removes the key. */
export function mergeDeep(current: Record<string, unknown> | undefined, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isPlainObject(value) && isPlainObject(out[key])) out[key] = mergeDeep(out[key] as Record<string, unknown>, value);
    else out[key] = value;
  }
  return out;
}

function mergeMetas(current: Record<string, string> | undefined, patch: Record<string, string | null>): Record<string, string> {
  const out: Record<string, string> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

function newRecord(entity: LoadedEntity, auth: AuthContext, input: WriteInput, forced: Record<string, unknown> = {}): StoredRecord {
  const created = Date.now();
  const now = new Date(created).toISOString();
  const data: Record<string, unknown> = { ...input.data, ...forced };
  for (const [name, field] of Object.entries(entity.fields)) {
    if (field.generated === 'caller') data[name] = auth.user.id;
  }
  const record: StoredRecord = {
    entity: entity.slug,
    id: newRecordId(entity.idFormat, created),
    tenantId: auth.tenantId,
    ownerId: auth.user.id,
    createdAt: now,
    updatedAt: now,
    version: 1,
    data,
  };
  if (input.metadata) record.metadata = cleanMetadata(input.metadata);
  if (input.metas) record.metas = mergeMetas(undefined, input.metas);
  return record;
}

function applyUpdate(entity: LoadedEntity, before: StoredRecord, input: WriteInput, options: { replaceMetadata?: boolean }): StoredRecord {
  const data = { ...before.data, ...input.data };
  // A field with a default set to null keeps the null: an absent value means "stored before the
  // field existed" and reads as the default (shared/data/live-layout.ts), a null reads as null.
  for (const key of input.unset) {
    if (entity.fields[key]?.default !== undefined) data[key] = null;
    else delete data[key];
  }
  const next: StoredRecord = { ...before, data, updatedAt: after(before.updatedAt), version: before.version + 1 };
  if (input.metadata === null) delete next.metadata;
  else if (input.metadata) {
    next.metadata = options.replaceMetadata ? cleanMetadata(input.metadata) : mergeMetadataPatch(before.metadata, input.metadata);
    if (JSON.stringify(next.metadata).length > METADATA_MAX_CHARS) {
      throw new ValidationError({ metadata: `must be at most ${METADATA_MAX_CHARS} characters of serialized JSON (after merging with the current metadata)` });
    }
  }
  if (input.metas === null) delete next.metas;
  else if (input.metas) next.metas = mergeMetas(before.metas, input.metas);
  return next;
}

/** Reference fields whose value changes (only those are checked on update). */
function changedReferences(before: StoredRecord, input: WriteInput): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input.data)) {
    if (JSON.stringify(before.data[key]) === JSON.stringify(value)) continue;
    if (Array.isArray(value) && Array.isArray(before.data[key])) {
      const known = new Set(before.data[key] as string[]);
      changed[key] = (value as string[]).filter((v) => !known.has(v));
    } else changed[key] = value;
  }
  return changed;
}

/** 422 for a unique value too long to be held (its key would pass DynamoDB's limit). */
function refuseOversizedUniques(entity: LoadedEntity, before: StoredRecord | undefined, record: StoredRecord): void {
  const fields = oversizedUniques(entity, before, record);
  if (fields.length) throw new ValidationError(Object.fromEntries(fields.map((f) => [f, 'is too long for a unique field (at most about 1900 bytes once URL-encoded)'])));
}

/**
 * The record an update leaves must satisfy the current definition as a whole, not only in the
 * fields sent: a record written before a rule was tightened (a shorter maxLength, a new required
 * field, a narrower enum) must be made valid by the update that touches it (422 naming each
 * field otherwise). Reading it still works.
 */
function checkMerged(entity: LoadedEntity, record: StoredRecord): void {
  const details = mergedProblems(entity, record.data);
  if (Object.keys(details).length) throw new ValidationError(details);
}

// ---------- operations ----------

/** How records are shown: fields, metas, metadata, included relations (LIST and READ). */
async function render(entity: LoadedEntity, records: StoredRecord[], view: RecordView, auth: AuthContext | undefined): Promise<PublicRecord[]> {
  const sources = view.metadata.merge && records.length ? await metadataSources(auth) : undefined;
  const out = records.map((r) => {
    const full = present(entity, r, { metas: view.metas });
    const shown = (view.fields ? pick(full, view.fields) : full) as PublicRecord;
    if (view.metas) shown.metas = full.metas;
    const metadata = metadataView(r, view.metadata, sources);
    if (metadata) shown.metadata = metadata;
    return shown;
  });
  await attachRelations(entity, records, out, view.includes, auth);
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

async function listPage(entity: LoadedEntity, auth: AuthContext | undefined, query: ListQuery, parent?: { field: string; value: unknown }, linked?: string[]): Promise<ListResult> {
  // The plan reads only complete indexes: those of the layout loaded now.
  await ensureLayouts();
  const spec = linked ? { ...query.spec, ids: query.spec.ids ? query.spec.ids.filter((id) => linked.includes(id)) : linked } : query.spec;
  const result = await executeList(entity, planList(entity, viewerOf(auth), spec, parent), (r) => canSee(entity, r, auth));
  const data = result.distinct ?? (await render(entity, result.records, query.view, auth));
  return { data, pagination: result.pagination };
}

/** A page of `entity`'s records (`query`: shared/entities/query.ts parses it from a query string or builds it). */
export async function listRecords(entity: LoadedEntity, auth: AuthContext | undefined, query: ListQuery): Promise<ListResult> {
  requireOperation(entity, 'list');
  requirePermission(entity, 'read', auth);
  return listPage(entity, auth, query);
}

export async function readRecord(entity: LoadedEntity, id: string, auth: AuthContext | undefined, query: ReadQuery = parseReadQueryString(entity)): Promise<RecordWithEtag> {
  requireOperation(entity, 'read');
  requirePermission(entity, 'read', auth);
  const { view } = query;
  await ensureLayouts();
  const record = visibleOr404(entity, await getRecord(entity, id, auth?.tenantId), id, auth);
  const [data] = await render(entity, [record], view, auth);
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
async function validated(entity: LoadedEntity, payload: unknown, auth: AuthContext, check: () => WriteInput, skip?: string[]): Promise<WriteInput> {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const details = { ...(error.details ?? {}) };
    try {
      await checkReferences(entity, unvalidatedReferences(entity, payload, details), auth, skip);
    } catch (more) {
      if (!(more instanceof ValidationError)) throw more;
      Object.assign(details, more.details);
    }
    throw new ValidationError(details);
  }
}

/** Validates and writes a new record: ONE TransactWriteItems. */
export async function createRecord(entity: LoadedEntity, auth: AuthContext | undefined, payload: unknown, options: CreateOptions = {}): Promise<PublicRecord> {
  return present(entity, await insertRecord(entity, auth, payload, options));
}

/** CREATE with the new record's ETag. */
export async function createRecordWithEtag(entity: LoadedEntity, auth: AuthContext | undefined, payload: unknown): Promise<RecordWithEtag> {
  const record = await insertRecord(entity, auth, payload);
  return { data: present(entity, record), etag: recordEtag(record) };
}

async function insertRecord(entity: LoadedEntity, auth: AuthContext | undefined, payload: unknown, options: CreateOptions = {}): Promise<StoredRecord> {
  requireOperation(entity, 'create');
  const caller = requireCaller(auth);
  requirePermission(entity, 'create', caller);
  const withForced = options.forced && isPlainObject(payload) ? { ...payload, ...options.forced } : payload;
  const input = await validated(entity, withForced, caller, () => checkCreate(entity, withForced), options.checked);
  await checkReferences(entity, input.data, caller, options.checked);
  const record = newRecord(entity, caller, input, options.forced);
  refuseOversizedUniques(entity, undefined, record);
  await ensureLayouts();
  const items = [...createTransaction(entity, record, changeEvent(entity, 'created', record, record.createdAt), recordTables()), ...(options.alongside?.(record) ?? [])];
  await transact(items);
  return record;
}

/**
 * Reads, changes and writes one record, retrying when it changed in between (the write is
 * conditional on the version read). `build` returns the new state (none for a hard delete) and
 * the transaction.
 *
 * With preconditions (If-Match / If-Unmodified-Since), the version read must satisfy them and
 * the write is conditional on exactly that version: a change in between fails the write itself,
 * which is then 412 (never retried onto a version the caller did not see). A record the caller
 * cannot see (none, deleted, another's) is 412 too, without an ETag, so existence is not revealed.
 */
async function rewrite(
  entity: LoadedEntity,
  id: string,
  auth: AuthContext,
  build: (before: StoredRecord) => Promise<{ after?: StoredRecord; items: TransactItem[] }>,
  preconditions?: Preconditions,
): Promise<{ before: StoredRecord; after?: StoredRecord }> {
  const visible = (record: StoredRecord | undefined) => (record && canSee(entity, record, auth) ? record : undefined);
  // Writes plan on the record read here: with the layout they must maintain.
  await ensureLayouts();
  for (let attempt = 1; ; attempt++) {
    const current = await getRecord(entity, id, auth.tenantId);
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
      if (preconditions) throw preconditionFailed(entity.name, id, visible(await getRecord(entity, id, auth.tenantId)));
      if (attempt >= WRITE_ATTEMPTS) throw new ConflictError(`The ${entity.name} changed while it was being written; retry`);
    }
  }
}

export interface UpdateOptions {
  replaceMetadata?: boolean;
  preconditions?: Preconditions;
}

export async function updateRecord(entity: LoadedEntity, id: string, auth: AuthContext | undefined, payload: unknown, options: UpdateOptions = {}): Promise<PublicRecord> {
  return present(entity, await updateStored(entity, id, auth, payload, options));
}

/** UPDATE with the new version's ETag. */
export async function updateRecordWithEtag(entity: LoadedEntity, id: string, auth: AuthContext | undefined, payload: unknown, options: UpdateOptions = {}): Promise<RecordWithEtag> {
  const record = await updateStored(entity, id, auth, payload, options);
  return { data: present(entity, record), etag: recordEtag(record) };
}

async function updateStored(entity: LoadedEntity, id: string, auth: AuthContext | undefined, payload: unknown, options: UpdateOptions): Promise<StoredRecord> {
  requireOperation(entity, 'update');
  const caller = requireCaller(auth);
  requirePermission(entity, 'update', caller);
  const input = await validated(entity, payload, caller, () => checkUpdate(entity, payload));
  const { after: updated } = await rewrite(entity, id, caller, async (before) => {
    await checkReferences(entity, changedReferences(before, input), caller);
    const next = applyUpdate(entity, before, input, options);
    checkMerged(entity, next);
    refuseOversizedUniques(entity, before, next);
    return { after: next, items: updateTransaction(entity, before, next, changeEvent(entity, 'updated', next, next.updatedAt), recordTables()) };
  }, options.preconditions);
  return updated!;
}

/** DELETE: a soft-deleted record comes back (with its ETag); a hard-deleted one is gone (undefined). */
export async function deleteRecord(entity: LoadedEntity, id: string, auth: AuthContext | undefined, preconditions?: Preconditions): Promise<RecordWithEtag | undefined> {
  requireOperation(entity, 'delete');
  const caller = requireCaller(auth);
  requirePermission(entity, 'delete', caller);
  const { after: deleted } = await rewrite(entity, id, caller, async (before) => {
    if (entity.softDelete) {
      const now = after(before.updatedAt);
      const next: StoredRecord = { ...before, deletedAt: now, updatedAt: now, version: before.version + 1 };
      return { after: next, items: updateTransaction(entity, before, next, changeEvent(entity, 'deleted', next, now), recordTables()) };
    }
    return { items: deleteTransaction(entity, before, changeEvent(entity, 'deleted', before, new Date().toISOString()), recordTables()) };
  }, preconditions);
  return deleted ? { data: present(entity, deleted), etag: recordEtag(deleted) } : undefined;
}

// ---------- child collections ----------

/** The relation behind /{entity}/{id}/{child}: by relation name, else by target slug. */
function childRelation(entity: LoadedEntity, child: string): { name: string; relation: RelationDefinition; target: LoadedEntity } {
  const entry =
    Object.entries(entity.relations).find(([name]) => name === child) ?? Object.entries(entity.relations).find(([, r]) => r.entity === child);
  const target = entry && entry[1].type !== 'belongsTo' ? findEntity(entry[1].entity) : undefined;
  if (!entry || !target) throw new NotFoundError(`${entity.slug} has no child collection '${child}'`);
  return { name: entry[0], relation: entry[1], target };
}

async function visibleParent(entity: LoadedEntity, id: string, auth: AuthContext | undefined): Promise<StoredRecord> {
  requireOperation(entity, 'read');
  requirePermission(entity, 'read', auth);
  return visibleOr404(entity, await getRecord(entity, id, auth?.tenantId), id, auth);
}

/** The entity a child collection lists (404 when `entity` has no such collection): what its query is parsed against. */
export function childEntity(entity: LoadedEntity, child: string): LoadedEntity {
  return childRelation(entity, child).target;
}

/** A page of a child collection; `query` is parsed against its entity (childEntity). */
export async function listChildren(entity: LoadedEntity, id: string, child: string, auth: AuthContext | undefined, query: ListQuery): Promise<ListResult> {
  const { relation, target } = childRelation(entity, child);
  requireOperation(target, 'list');
  requirePermission(target, 'read', auth);
  const parent = await visibleParent(entity, id, auth);
  if (relation.type === 'hasMany') {
    if (!target.access.public && !auth) return { data: [], pagination: paginationOf(query.spec.page, query.spec.limit, 0, null) };
    return listPage(target, auth, query, { field: relation.foreignKey, value: parent.id });
  }
  // manyToMany: the ids stored on the parent (at most 100): ONE BatchGetItem, then filter/sort/page.
  return listPage(target, auth, query, undefined, (parent.data[relation.foreignKey] as string[] | undefined) ?? []);
}

/** A new record in a child collection (a hasMany child, or a manyToMany target linked to the parent). */
export async function createChild(entity: LoadedEntity, id: string, child: string, auth: AuthContext | undefined, payload: unknown): Promise<PublicRecord> {
  const { relation, target } = childRelation(entity, child);
  const caller = requireCaller(auth);
  const parent = await visibleParent(entity, id, caller);
  if (relation.type === 'hasMany') {
    return createRecord(target, caller, payload, { forced: { [relation.foreignKey]: parent.id }, checked: [relation.foreignKey] });
  }
  // manyToMany: a new target record linked to the parent, in the same transaction.
  requireOperation(entity, 'update');
  requirePermission(entity, 'update', caller);
  changeableOr404(entity, parent, id, caller);
  const links = (parent.data[relation.foreignKey] as string[] | undefined) ?? [];
  if (links.length >= 100) throw new BadRequestError(`A ${entity.name} links at most 100 ${target.slug}`, { [relation.foreignKey]: 'at most 100 ids' });
  for (let attempt = 1; ; attempt++) {
    const current = attempt === 1 ? parent : changeableOr404(entity, await getRecord(entity, id, caller.tenantId), id, caller);
    try {
      return await createRecord(target, caller, payload, {
        alongside: (created) => {
          const next: StoredRecord = {
            ...current,
            data: { ...current.data, [relation.foreignKey]: [...((current.data[relation.foreignKey] as string[] | undefined) ?? []), created.id] },
            updatedAt: after(current.updatedAt),
            version: current.version + 1,
          };
          return updateTransaction(entity, current, next, changeEvent(entity, 'updated', next, next.updatedAt), recordTables());
        },
      });
    } catch (error) {
      // The new record's condition is first; a conflict on the parent shows as a cancelled transaction.
      if (!isParentConflict(error) || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}

function isParentConflict(error: unknown): boolean {
  const e = error as { name?: string; CancellationReasons?: { Code?: string }[] };
  return e.name === 'TransactionCanceledException' && (e.CancellationReasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed');
}
