/**
 * A record's history (docs/history.md): its revisions, the record as it stood after one, and
 * restoring it to that state. The revisions are written with each write (shared/data/revisions.ts);
 * here they are read and shown to exactly those who may read the record: anyone else gets 404.
 * A deleted record's history (soft or hard) is its owner's and the tenant's admins'.
 */
import {
  createTransaction,
  getRecord,
  readRevision,
  readRevisions,
  recordTables,
  revisionPut,
  readTrash,
  transact,
  trashDelete,
  updateTransaction,
  writeContextOf,
  WriteConflict,
  type Revision,
  type StoredRecord,
  type StoredRevision,
} from '../data/index.js';
import { BadRequestError, ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { checkCreate, type LoadedEntity } from '../registry/index.js';
import { loadLayouts } from '../migrations/index.js';
import { canSee, isAdmin, notFound, requireCaller, requireOperation, requirePermission } from './access.js';
import { changeEvent } from './changes.js';
import { preconditionFailed, recordEtag, satisfied, type Preconditions } from './preconditions.js';
import { present, type PublicRecord } from './present.js';
import { mayUpdate, updateStored, type RecordWithEtag } from './service.js';

export const DEFAULT_REVISIONS_LIMIT = 20;
export const MAX_REVISIONS_LIMIT = 100;

export interface RevisionsPage {
  data: Revision[];
  pagination: { limit: number; hasNext: boolean; nextCursor: string | null };
}

/** Whose history it is: the record (when stored) and its tenant, or 404 for a caller who may not read it. */
async function historyOf(entity: LoadedEntity, id: string, auth: AuthContext | undefined): Promise<{ record?: StoredRecord; tenantId: string }> {
  requireOperation(entity, 'read');
  requirePermission(entity, 'read', auth);
  const layouts = await loadLayouts();
  const record = await getRecord(layouts.of(entity), id, auth?.tenantId);
  if (record && canSee(entity, record, auth)) return { record, tenantId: record.tenantId };
  // Deleted (soft: still stored; hard: gone): the owner's and the tenant's admins' only.
  if (!auth || (record && !record.deletedAt)) throw notFound(entity, id);
  const mine = (tenantId: string, ownerId: string) => tenantId === auth.tenantId && (isAdmin(auth) || ownerId === auth.user.id);
  if (record) {
    if (mine(record.tenantId, record.ownerId)) return { record, tenantId: record.tenantId };
    throw notFound(entity, id);
  }
  const [latest] = (await readRevisions(entity, auth.tenantId, id, 1)).items;
  if (latest && mine(latest.tenantId, latest.ownerId)) return { tenantId: auth.tenantId };
  throw notFound(entity, id);
}

/** The keys a revision may show: the fields READ shows (never protected ones), metadata, metas, deletedAt. */
function shownKeys(entity: LoadedEntity): Set<string> {
  const probe: StoredRecord = { entity: entity.slug, id: '', tenantId: '', ownerId: '', createdAt: '', updatedAt: '', version: 0, data: Object.fromEntries(Object.keys(entity.fields).map((k) => [k, true])) };
  return new Set([...Object.keys(present(entity, probe)), 'metadata', 'metas', 'deletedAt']);
}

function shown(entity: LoadedEntity, revision: StoredRevision): Revision {
  const keys = shownKeys(entity);
  return {
    revision: revision.revision,
    at: revision.at,
    operation: revision.operation,
    actor: revision.actor,
    requestId: revision.requestId ?? null,
    operationId: revision.operationId ?? null,
    changes: Object.fromEntries(Object.entries(revision.changes ?? {}).filter(([k]) => keys.has(k))),
  } as Revision;
}

function cursorOf(revision: number): string {
  return Buffer.from(`rev:${revision}`).toString('base64url');
}

function revisionOfCursor(cursor: string): number {
  const m = /^rev:([1-9][0-9]{0,9})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m) throw new BadRequestError('The cursor is not one this list gave', { cursor: 'is invalid' });
  return Number(m[1]);
}

export function parseRevisionsQuery(query: Record<string, string | undefined>): { limit: number; cursor?: string } {
  const raw = query.limit;
  const limit = raw === undefined ? DEFAULT_REVISIONS_LIMIT : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REVISIONS_LIMIT) throw new ValidationError({ limit: `must be an integer from 1 to ${MAX_REVISIONS_LIMIT}` });
  return { limit, ...(query.cursor ? { cursor: query.cursor } : {}) };
}

/** GET /{entity}/{id}/revisions: newest first. */
export async function listRevisions(entity: LoadedEntity, id: string, auth: AuthContext | undefined, query: { limit: number; cursor?: string }): Promise<RevisionsPage> {
  const below = query.cursor === undefined ? undefined : revisionOfCursor(query.cursor);
  const { tenantId } = await historyOf(entity, id, auth);
  const page = await readRevisions(entity, tenantId, id, query.limit, below);
  const last = page.items[page.items.length - 1];
  return {
    data: page.items.map((r) => shown(entity, r)),
    pagination: { limit: query.limit, hasNext: page.more, nextCursor: page.more && last ? cursorOf(last.revision) : null },
  };
}

export function parseRevisionNumber(raw: unknown, field = 'revision'): number {
  const n = typeof raw === 'string' && /^[0-9]+$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 9_999_999_999) throw new ValidationError({ [field]: 'must be a positive integer' });
  return n;
}

async function keptRevision(entity: LoadedEntity, id: string, tenantId: string, n: number): Promise<StoredRevision> {
  const revision = await readRevision(entity, tenantId, id, n);
  if (!revision) throw new NotFoundError(`${entity.name} '${id}' has no revision ${n}`);
  return revision;
}

function asRecord(entity: LoadedEntity, revision: StoredRevision, id: string): StoredRecord {
  const state = revision.state!;
  return {
    entity: entity.slug,
    id,
    tenantId: revision.tenantId,
    ownerId: revision.ownerId,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    ...(state.deletedAt ? { deletedAt: state.deletedAt } : {}),
    version: revision.revision,
    data: state.data,
    ...(state.metadata ? { metadata: state.metadata } : {}),
    ...(state.metas ? { metas: state.metas } : {}),
  };
}

/** GET /{entity}/{id}/revisions/{n}: the record as it stood after revision n (404 after a hard delete: none stood). */
export async function readRecordAtRevision(entity: LoadedEntity, id: string, auth: AuthContext | undefined, n: number): Promise<{ revision: Revision; record: PublicRecord }> {
  const { tenantId } = await historyOf(entity, id, auth);
  const revision = await keptRevision(entity, id, tenantId, n);
  if (!revision.state) throw new NotFoundError(`${entity.name} '${id}' did not exist after revision ${n} (it was deleted)`);
  return { revision: shown(entity, revision), record: present(entity, asRecord(entity, revision, id), { metadata: true, metas: 'all' }) };
}

/** The writable fields of a past state, as an update body: every field it lacks set to null (removed). */
function restoreBody(entity: LoadedEntity, revision: StoredRevision): Record<string, unknown> {
  const state = revision.state!;
  const body: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(entity.fields)) {
    if (field.generated) continue;
    body[name] = state.data[name] ?? null;
  }
  body.metadata = state.metadata ?? {};
  return body;
}

/**
 * POST /{entity}/{id}/restore {revision}: the record put back as it stood after that revision,
 * as a new revision (operation `restore`). A live record is updated (update's checks: scope,
 * validation, uniqueness, If-Match); a deleted one (soft or hard) is brought back, which needs the
 * delete scope too and passes the checks of a create.
 */
export async function restoreRecord(entity: LoadedEntity, id: string, auth: AuthContext | undefined, body: unknown, preconditions?: Preconditions): Promise<RecordWithEtag> {
  const caller = mayUpdate(entity, auth);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError({ revision: 'is required (a positive integer)' });
  const unknown = Object.keys(body).filter((k) => k !== 'revision');
  if (unknown.length) throw new ValidationError(Object.fromEntries(unknown.map((k) => [k, 'is not accepted (only revision)'])));
  const n = parseRevisionNumber((body as { revision?: unknown }).revision);
  const { record, tenantId } = await historyOf(entity, id, caller);
  const revision = await keptRevision(entity, id, tenantId, n);
  if (!revision.state || revision.state.deletedAt) throw new ValidationError({ revision: `revision ${n} is a deletion; restore a revision where the record existed` });
  const layouts = await loadLayouts();
  if (record && !record.deletedAt) {
    const updated = await updateStored(layouts, entity, id, caller, restoreBody(entity, revision), { replaceMetadata: true, preconditions, operation: 'restore' });
    return { data: present(entity, updated), etag: recordEtag(updated) };
  }
  // Bringing back a deleted record.
  requirePermission(entity, 'delete', requireCaller(caller));
  if (preconditions && (!record || !satisfied(preconditions, record))) throw preconditionFailed(entity.name, id, undefined);
  const input = checkCreate(entity, restoreBody(entity, revision));
  const layout = layouts.of(entity);
  const tables = recordTables();
  const context = writeContextOf(caller, 'restore');
  const now = new Date().toISOString();
  const past = asRecord(entity, revision, id);
  let restored: StoredRecord;
  let items;
  if (record) {
    restored = { ...record, data: { ...record.data, ...input.data }, metadata: past.metadata, metas: past.metas, updatedAt: now, version: record.version + 1 };
    delete restored.deletedAt;
    items = [...updateTransaction(layout, record, restored, changeEvent(layout, 'created', restored, now), tables), ...revisionPut(entity, tables.history, record, restored, context), ...trashDelete(entity, tables.history, restored, record.deletedAt!)];
  } else {
    const [latest] = (await readRevisions(entity, tenantId, id, 1)).items;
    restored = { ...past, data: { ...past.data, ...input.data }, updatedAt: now, version: (latest?.revision ?? n) + 1 };
    delete restored.deletedAt;
    items = [...createTransaction(layout, restored, changeEvent(layout, 'created', restored, now), tables), ...revisionPut(entity, tables.history, undefined, restored, context), ...(latest ? trashDelete(entity, tables.history, restored, latest.at) : [])];
  }
  try {
    await transact(items);
  } catch (error) {
    if (error instanceof WriteConflict) throw new ConflictError(`The ${entity.name} changed while it was being restored; retry`);
    throw error;
  }
  caller.journal?.push({ entity: entity.slug, id, revision: restored.version });
  return { data: present(entity, restored), etag: recordEtag(restored) };
}

export interface TrashPage {
  data: { id: string; deletedAt: string; revision: number }[];
  pagination: { limit: number; hasNext: boolean; nextCursor: string | null };
}

function trashCursorOf(sortKey: string): string {
  return Buffer.from(`trash:${sortKey}`).toString('base64url');
}

function sortKeyOfTrashCursor(cursor: string): string {
  const m = /^trash:(\d{4}-\d\d-\d\dT[0-9:.]+Z#[^#]{1,200})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m) throw new BadRequestError('The cursor is not one this list gave', { cursor: 'is invalid' });
  return m[1];
}

/**
 * GET /{entity}/deleted: the deleted records the caller may bring back (their own; an admin's: the
 * tenant's; a shared entity's: every one of the tenant), newest first, a page at a time.
 */
export async function listDeleted(entity: LoadedEntity, auth: AuthContext | undefined, query: { limit: number; cursor?: string }): Promise<TrashPage> {
  requireOperation(entity, 'read');
  const caller = requireCaller(auth);
  requirePermission(entity, 'read', caller);
  const after = query.cursor === undefined ? undefined : sortKeyOfTrashCursor(query.cursor);
  const everyone = entity.access.shared || isAdmin(caller);
  const page = await readTrash(entity, caller.tenantId, { limit: query.limit, ...(after ? { after } : {}), ...(everyone ? {} : { ownerId: caller.user.id }) });
  return {
    data: page.items.map(({ id, deletedAt, revision }) => ({ id, deletedAt, revision })),
    pagination: { limit: query.limit, hasNext: page.next !== undefined, nextCursor: page.next === undefined ? null : trashCursorOf(page.next) },
  };
}
