/**
 * Upload records in the uploads table (shared/tables.ts):
 *
 *   UPLOAD#<id> / UPLOAD                         the record {id, key, filename, size, type, ownerId, tenantId, createdAt}
 *   OWNER#<tenant>#<owner> / <createdAt>#<id>    its copy in the owner's listing (newest first by a descending Query)
 *   OWNER#<tenant>#<owner> / #count              the owner's number of uploads (LIST's total)
 *   PENDING#<uuid> / PENDING                     a presigned upload: what was signed {key, filename, type, size, ownerId, tenantId}, expiring
 *
 * A create or delete writes all three in one transaction. Parameters are built by pure functions;
 * the functions at the end do the I/O.
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, type NativeAttributeValue, type QueryCommandInput, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { db } from '../data/index.js';
import type { AllowedType } from './limits.js';

export interface UploadRecord {
  id: string;
  key: string;
  filename: string;
  size: number;
  type: AllowedType;
  ownerId: string;
  tenantId: string;
  createdAt: string;
}

export interface Owner {
  tenantId: string;
  ownerId: string;
}

const RECORD_SK = 'UPLOAD';
const PENDING_SK = 'PENDING';

/** What a presigned POST allowed, kept until the upload is completed (or the item expires). */
export interface PendingUpload {
  uuid: string;
  key: string;
  filename: string;
  type: AllowedType;
  /** The largest size the policy allowed. */
  size: number;
  ownerId: string;
  tenantId: string;
  /** Epoch seconds (TTL). */
  expiresAt: number;
}
const COUNT_SK = '#count';

function table(): string {
  return config().tables.uploads;
}

export function recordKey(id: string): { pk: string; sk: string } {
  return { pk: `UPLOAD#${id}`, sk: RECORD_SK };
}

export function ownerPartition(owner: Owner): string {
  return `OWNER#${owner.tenantId}#${owner.ownerId}`;
}

export function listingSk(record: Pick<UploadRecord, 'createdAt' | 'id'>): string {
  return `${record.createdAt}#${record.id}`;
}

/** The record's own fields of a stored item (its keys and listing attributes left out). */
function pick(item: Record<string, NativeAttributeValue>): UploadRecord {
  const { id, key, filename, size, type, ownerId, tenantId, createdAt } = item;
  return { id, key, filename, size, type, ownerId, tenantId, createdAt };
}

export function pendingKey(uuid: string): { pk: string; sk: string } {
  return { pk: `PENDING#${uuid}`, sk: PENDING_SK };
}

/**
 * The records (all of one owner), their listing copies and one counter change, atomically; with
 * `completes`, the pending upload is consumed in the same transaction (a second completion fails).
 */
export function createRecordsInput(records: readonly UploadRecord[], completes?: PendingUpload): TransactWriteCommandInput {
  const owner = records[0];
  const partition = ownerPartition(owner);
  return {
    TransactItems: [
      ...(completes
        ? [
            {
              Delete: {
                TableName: table(),
                Key: pendingKey(completes.uuid),
                ConditionExpression: 'attribute_exists(pk) AND ownerId = :owner AND tenantId = :tenant',
                ExpressionAttributeValues: { ':owner': completes.ownerId, ':tenant': completes.tenantId },
              },
            },
          ]
        : []),
      ...records.map((r) => ({
        Put: { TableName: table(), Item: { ...recordKey(r.id), ...r }, ConditionExpression: 'attribute_not_exists(pk)' },
      })),
      ...records.map((r) => ({ Put: { TableName: table(), Item: { pk: partition, sk: listingSk(r), ...r } } })),
      {
        Update: {
          TableName: table(),
          Key: { pk: partition, sk: COUNT_SK },
          UpdateExpression: 'ADD #count :n',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':n': records.length },
        },
      },
    ],
  };
}

/** Removes the record only if it is still the owner's, with its listing copy and the count. */
export function deleteRecordInput(record: UploadRecord): TransactWriteCommandInput {
  const partition = ownerPartition(record);
  return {
    TransactItems: [
      {
        Delete: {
          TableName: table(),
          Key: recordKey(record.id),
          ConditionExpression: 'attribute_exists(pk) AND ownerId = :owner AND tenantId = :tenant',
          ExpressionAttributeValues: { ':owner': record.ownerId, ':tenant': record.tenantId },
        },
      },
      { Delete: { TableName: table(), Key: { pk: partition, sk: listingSk(record) } } },
      {
        Update: {
          TableName: table(),
          Key: { pk: partition, sk: COUNT_SK },
          UpdateExpression: 'ADD #count :n',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':n': -1 },
        },
      },
    ],
  };
}

/** One page of the owner's listing, newest first, after `afterSk` when given. */
export function listingQueryInput(owner: Owner, limit: number, afterSk?: string): QueryCommandInput {
  return {
    TableName: table(),
    KeyConditionExpression: 'pk = :pk AND sk > :count',
    ExpressionAttributeValues: { ':pk': ownerPartition(owner), ':count': COUNT_SK },
    ScanIndexForward: false,
    Limit: limit,
    ...(afterSk ? { ExclusiveStartKey: { pk: ownerPartition(owner), sk: afterSk } } : {}),
  };
}

export async function putRecords(records: readonly UploadRecord[], completes?: PendingUpload): Promise<void> {
  await db().send(new TransactWriteCommand(createRecordsInput(records, completes)));
}

export async function putPending(pending: PendingUpload): Promise<void> {
  await db().send(new PutCommand({ TableName: table(), Item: { ...pendingKey(pending.uuid), ...pending }, ConditionExpression: 'attribute_not_exists(pk)' }));
}

/** The pending upload, unless it expired (TTL deletion runs late, so the time is checked too). */
export async function getPending(uuid: string): Promise<PendingUpload | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: pendingKey(uuid), ConsistentRead: true }));
  if (!Item || Number(Item.expiresAt) * 1000 < Date.now()) return undefined;
  const { pk: _pk, sk: _sk, ...pending } = Item;
  return pending as PendingUpload;
}

export async function deletePending(uuid: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: table(), Key: pendingKey(uuid) }));
}

export async function getRecord(id: string): Promise<UploadRecord | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: recordKey(id), ConsistentRead: true }));
  return Item ? pick(Item) : undefined;
}

export async function deleteRecord(record: UploadRecord): Promise<void> {
  await db().send(new TransactWriteCommand(deleteRecordInput(record)));
}

export async function countOf(owner: Owner): Promise<number> {
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: { pk: ownerPartition(owner), sk: COUNT_SK } }));
  return Math.max(0, Number(Item?.count ?? 0));
}

/** `limit` records after `afterSk` (or skipping `skip` from the start), reading no more than needed. */
export async function listRecords(owner: Owner, limit: number, position: { afterSk?: string; skip?: number }): Promise<UploadRecord[]> {
  let afterSk = position.afterSk;
  let skip = position.skip ?? 0;
  const out: UploadRecord[] = [];
  for (;;) {
    const want = skip + limit - out.length;
    const page = await db().send(new QueryCommand(listingQueryInput(owner, Math.min(want, 1000), afterSk)));
    for (const item of page.Items ?? []) {
      if (skip > 0) skip--;
      else out.push(pick(item));
    }
    if (out.length >= limit || !page.LastEvaluatedKey) return out.slice(0, limit);
    afterSk = page.LastEvaluatedKey.sk as string;
  }
}
