/**
 * The revision a record write keeps, in the same transaction as the write (docs/history.md), the
 * bulk calls kept for their undo, and the trash. The items are built by pure functions; the reads
 * and the operation's writes are the I/O below them.
 *
 * History table (its own, without a stream: a revision is not a change to deliver, and the events
 * table's stream feeds webhooks and the SSE stream): `<tenant>#<table>#rev#<id>` / `<revision, 10
 * digits>` — {kind: 'revision', revision, entity, recordId, tenantId, ownerId, at, operation,
 * actor: {type, id}, requestId, operationId, changes: {field: {from, to}}, state (the record after
 * the write; none after a delete), expiresAt}. A write from nothing (a create, a deleted record
 * put back) stores no `changes`: they are its state's fields from null, derived on read, so its
 * revision is not twice the record's size. The revision number is the record's version after the write (a hard
 * delete: the version deleted + 1), and the Put is conditional on its absence: one revision per
 * version, whatever retries. Protected fields (passwords, key hashes, secrets) are never copied.
 * Expired by DynamoDB TTL on `expiresAt`; readers skip expired items too (DynamoDB Local never
 * expires anything, and TTL deletes up to days late).
 */
import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import { historyDaysOf, PROTECTED_FIELDS, type LoadedEntity } from '../registry/index.js';
import type { AuthContext, JournalEntry } from '../caller.js';
import { canonical } from '../canonical-json.js';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import type { StoredRecord, TransactItem } from './record-item.js';

export type RevisionOperation = 'create' | 'update' | 'delete' | 'restore' | 'migration';
export type ActorType = 'session' | 'api_key' | 'oidc' | 'system';

export interface Revision {
  revision: number;
  at: string;
  operation: RevisionOperation;
  actor: { type: ActorType; id: string };
  requestId?: string;
  operationId?: string;
  changes: Record<string, { from: unknown; to: unknown }>;
}

export interface StoredRevision extends Revision {
  entity: string;
  recordId: string;
  tenantId: string;
  ownerId: string;
  /** The record as it stood after this revision (fields, metadata, metas, times); none after a delete. */
  state?: RevisionState;
  expiresAt: number;
}

export interface RevisionState {
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  metas?: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  deletedAt?: string;
}

/** How a write is described in its revision: who, in which request, as part of which bulk operation. */
export interface WriteContext {
  operation: RevisionOperation;
  actor: { type: ActorType; id: string };
  requestId?: string;
  operationId?: string;
}

const PROTECTED = new Set<string>(PROTECTED_FIELDS);
const SK_DIGITS = 10;
const DAY_SECONDS = 86_400;

/** The `expiresAt` (epoch seconds) of an item kept `days` from `fromMs`. */
function expiresAt(days: number, fromMs: number): number {
  return Math.floor(fromMs / 1000) + days * DAY_SECONDS;
}

/** Whether a kept item is past its `expiresAt` (TTL deletes up to days late; DynamoDB Local never). */
function expired(item: Record<string, unknown>, nowMs = Date.now()): boolean {
  return Number(item.expiresAt) <= Math.floor(nowMs / 1000);
}

/** The write context of a caller's request (the key's id for an API key, else the user's). */
export function writeContextOf(auth: AuthContext, operation: RevisionOperation): WriteContext {
  return {
    operation,
    actor: { type: auth.type, id: auth.type === 'api_key' && auth.keyId ? auth.keyId : auth.user.id },
    ...(auth.requestId ? { requestId: auth.requestId } : {}),
    ...(auth.operationId ? { operationId: auth.operationId } : {}),
  };
}

export function revisionPartition(tenantId: string, entity: Pick<LoadedEntity, 'tableName'>, id: string): string {
  return `${tenantId}#${entity.tableName}#rev#${id}`;
}

export function revisionSortKey(revision: number): string {
  return String(revision).padStart(SK_DIGITS, '0');
}

function withoutProtected(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([k]) => !PROTECTED.has(k)));
}

function stateOf(record: StoredRecord): RevisionState {
  return {
    data: withoutProtected(record.data),
    ...(record.metadata ? { metadata: record.metadata } : {}),
    ...(record.metas ? { metas: record.metas } : {}),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.deletedAt ? { deletedAt: record.deletedAt } : {}),
  };
}

/** The fields that differ between two states (null for absent), protected fields left out. */
export function changesBetween(before: StoredRecord | undefined, after: StoredRecord | undefined): Record<string, { from: unknown; to: unknown }> {
  const from = before ? { ...withoutProtected(before.data), metadata: before.metadata, metas: before.metas, deletedAt: before.deletedAt } : {};
  const to = after ? { ...withoutProtected(after.data), metadata: after.metadata, metas: after.metas, deletedAt: after.deletedAt } : {};
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
    const a = (from as Record<string, unknown>)[key] ?? null;
    const b = (to as Record<string, unknown>)[key] ?? null;
    if (canonical(a) !== canonical(b)) out[key] = { from: a, to: b };
  }
  return out;
}

/**
 * The revision Put of a write from `before` to `after` (none before: a create; none after: a hard
 * delete), or none when the entity keeps no history.
 */
export function revisionPut(entity: LoadedEntity, historyTable: string, before: StoredRecord | undefined, after: StoredRecord | undefined, context: WriteContext, now = new Date()): TransactItem[] {
  const days = historyDaysOf(entity);
  if (days === 0) return [];
  const record = (after ?? before)!;
  const revision = after ? after.version : before!.version + 1;
  const item: Omit<StoredRevision, 'changes'> & { changes?: StoredRevision['changes'] } = {
    revision,
    entity: entity.slug,
    recordId: record.id,
    tenantId: record.tenantId,
    ownerId: record.ownerId,
    // A migration leaves updatedAt as it was (listings sort by it): its revision is dated now.
    at: context.operation === 'migration' ? now.toISOString() : (after?.updatedAt ?? now.toISOString()),
    operation: context.operation,
    actor: context.actor,
    ...(context.requestId ? { requestId: context.requestId } : {}),
    ...(context.operationId ? { operationId: context.operationId } : {}),
    ...(before ? { changes: changesBetween(before, after) } : {}),
    ...(after ? { state: stateOf(after) } : {}),
    expiresAt: expiresAt(days, now.getTime()),
  };
  return [
    {
      Put: {
        TableName: historyTable,
        Item: { pk: revisionPartition(record.tenantId, entity, record.id), sk: revisionSortKey(revision), kind: 'revision', ...item } as Record<string, NativeAttributeValue>,
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

/** A revision's state in the shape changesBetween compares (only the fields it reads). */
function asRecord(state: RevisionState): StoredRecord {
  return { data: state.data, metadata: state.metadata, metas: state.metas, deletedAt: state.deletedAt } as StoredRecord;
}

function live(item: Record<string, unknown> | undefined): StoredRevision | undefined {
  if (!item || item.kind !== 'revision' || expired(item)) return undefined;
  const { pk: _pk, sk: _sk, kind: _kind, ...rest } = item as Record<string, unknown> & StoredRevision;
  return rest.changes ? rest : { ...rest, changes: changesBetween(undefined, rest.state && asRecord(rest.state)) };
}

/** A page of a record's revisions, newest first, from before revision `below` (exclusive) when given. */
export async function readRevisions(entity: LoadedEntity, tenantId: string, id: string, limit: number, below?: number): Promise<{ items: StoredRevision[]; more: boolean }> {
  const items: StoredRevision[] = [];
  let start: Record<string, NativeAttributeValue> | undefined;
  do {
    const out = await db().send(new QueryCommand({
      TableName: tableName('history'),
      KeyConditionExpression: below === undefined ? 'pk = :pk' : 'pk = :pk AND sk < :below',
      ExpressionAttributeValues: { ':pk': revisionPartition(tenantId, entity, id), ...(below === undefined ? {} : { ':below': revisionSortKey(below) }) },
      ScanIndexForward: false,
      Limit: limit + 1 - items.length,
      ExclusiveStartKey: start,
    }));
    for (const raw of out.Items ?? []) {
      const rev = live(raw);
      if (rev) items.push(rev);
    }
    start = out.LastEvaluatedKey;
  } while (start && items.length <= limit);
  return { items: items.slice(0, limit), more: items.length > limit };
}

/** One revision of a record, if kept and not expired. */
export async function readRevision(entity: LoadedEntity, tenantId: string, id: string, revision: number): Promise<StoredRevision | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName('history'), Key: { pk: revisionPartition(tenantId, entity, id), sk: revisionSortKey(revision) } }));
  return live(out.Item);
}

/**
 * The records a bulk call wrote, kept for its undo: `<tenant>#op#<operationId>` / `op` —
 * {records: [{entity, id, revision}], expiresAt}; `undoneAt` once undone. Written after the
 * call's writes (shared/entities/operation.ts; a crash in between leaves a call that cannot be
 * undone; its revisions stay).
 */
export interface OperationRecord {
  operationId: string;
  tenantId: string;
  records: JournalEntry[];
  undoneAt?: string;
}

function operationKey(tenantId: string, operationId: string): { pk: string; sk: string } {
  return { pk: `${tenantId}#op#${operationId}`, sk: 'op' };
}

/** Keeps a bulk call for its undo as long as the longest-kept of the entities it wrote keeps its revisions. */
export async function saveOperation(entities: readonly LoadedEntity[], operation: OperationRecord): Promise<void> {
  const days = Math.max(0, ...entities.map(historyDaysOf));
  if (days === 0 || operation.records.length === 0) return;
  await db().send(
    new PutCommand({
      TableName: tableName('history'),
      Item: { ...operationKey(operation.tenantId, operation.operationId), kind: 'operation', ...operation, expiresAt: expiresAt(days, Date.now()) },
    }),
  );
}

export async function readOperation(tenantId: string, operationId: string): Promise<OperationRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName('history'), Key: operationKey(tenantId, operationId) }));
  const item = out.Item;
  if (!item || item.kind !== 'operation' || expired(item)) return undefined;
  return { operationId: item.operationId, tenantId: item.tenantId, records: item.records, ...(item.undoneAt ? { undoneAt: item.undoneAt } : {}) };
}

/** Marks the call undone; false when it already was (a second undo reverts nothing). */
export async function claimUndo(tenantId: string, operationId: string, now: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName('history'),
        Key: operationKey(tenantId, operationId),
        UpdateExpression: 'SET undoneAt = :now',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(undoneAt)',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * The trash: one item per deleted record, `<tenant>#<table>#deleted` / `<deletedAt>#<id>` — {id,
 * ownerId, deletedAt, revision, expiresAt}, Put in the delete's transaction and Deleted in the
 * restore's, so `GET /{entity}/deleted` is a Query of one partition, newest first, page by page.
 */
export function trashPartition(tenantId: string, entity: Pick<LoadedEntity, 'tableName'>): string {
  return `${tenantId}#${entity.tableName}#deleted`;
}

function trashSortKey(deletedAt: string, id: string): string {
  return `${deletedAt}#${id}`;
}

/** The trash entry of a delete at `deletedAt` (the deletion's revision time). */
export function trashPut(entity: LoadedEntity, historyTable: string, before: StoredRecord, deletedAt: string): TransactItem[] {
  const days = historyDaysOf(entity);
  if (days === 0) return [];
  return [
    {
      Put: {
        TableName: historyTable,
        Item: {
          pk: trashPartition(before.tenantId, entity),
          sk: trashSortKey(deletedAt, before.id),
          kind: 'trash',
          id: before.id,
          ownerId: before.ownerId,
          deletedAt,
          revision: before.version + 1,
          expiresAt: expiresAt(days, Date.parse(deletedAt)),
        },
      },
    },
  ];
}

export function trashDelete(entity: LoadedEntity, historyTable: string, record: Pick<StoredRecord, 'tenantId' | 'id'>, deletedAt: string): TransactItem[] {
  if (historyDaysOf(entity) === 0) return [];
  return [{ Delete: { TableName: historyTable, Key: { pk: trashPartition(record.tenantId, entity), sk: trashSortKey(deletedAt, record.id) } } }];
}

export interface TrashEntry {
  id: string;
  ownerId: string;
  deletedAt: string;
  revision: number;
}

/**
 * A page of a tenant's trash for an entity, newest first: `limit` unexpired entries (of `ownerId`
 * only, when given) after the entry whose sort key is `after`, and the sort key to go on from.
 */
export async function readTrash(
  entity: LoadedEntity,
  tenantId: string,
  options: { limit: number; after?: string; ownerId?: string },
): Promise<{ items: TrashEntry[]; next?: string }> {
  const pk = trashPartition(tenantId, entity);
  const items: TrashEntry[] = [];
  let start: Record<string, NativeAttributeValue> | undefined = options.after === undefined ? undefined : { pk, sk: options.after };
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName('history'),
        KeyConditionExpression: 'pk = :pk',
        ...(options.ownerId === undefined ? {} : { FilterExpression: 'ownerId = :owner' }),
        ExpressionAttributeValues: { ':pk': pk, ...(options.ownerId === undefined ? {} : { ':owner': options.ownerId }) },
        ScanIndexForward: false,
        Limit: options.limit - items.length,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      if (item.kind === 'trash' && !expired(item)) items.push({ id: item.id, ownerId: item.ownerId, deletedAt: item.deletedAt, revision: item.revision });
    }
    start = page.LastEvaluatedKey;
  } while (start && items.length < options.limit);
  // A Query that stopped at its Limit names where it stopped: more may follow (or none, found on the next page).
  return { items, ...(start ? { next: String(start.sk) } : {}) };
}
