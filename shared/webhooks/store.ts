/**
 * The webhooks table (pk / sk):
 * - registration: `TENANT#<tenantId>` / `WEBHOOK#<id>` — {kind: 'webhook', id, tenantId, url, events,
 *   secret (encrypted, secrets.ts), status: active|disabled, createdBy, creatorRole, createdAt,
 *   updatedAt, failingSince?, disabledAt?}
 * - delivery: `WEBHOOK#<webhookId>` / `DELIVERY#<deliveryId>` — {kind: 'delivery', id, webhookId,
 *   tenantId, eventId, eventType, payload, status: pending|succeeded|failed, attempts, responseCode,
 *   responseTimeMs, error, responseBody (≤ 1 KB), lastAttemptAt, nextAttemptAt, createdAt,
 *   expiresAt (TTL, 30 days)}. Delivery ids start with the event's time, so a descending Query
 *   is newest first.
 * - inbound provider event: `INBOUND#<provider>` / `EVENT#<provider's event id>` — {provider,
 *   eventId, type, payload, receivedAt, expiresAt (TTL, 30 days)}
 */
import { createHash } from 'node:crypto';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type BatchGetCommandOutput,
  type BatchWriteCommandOutput,
  type DeleteCommandOutput,
  type GetCommandOutput,
  type PutCommandOutput,
  type QueryCommandOutput,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { busyDelay, BUSY_ATTEMPTS, db, whileBusy } from '../data/index.js';
import { BadRequestError } from '../errors.js';

export const DELIVERY_TTL_SECONDS = 30 * 24 * 3600;
export type WebhookStatus = 'active' | 'disabled';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface StoredWebhook {
  id: string;
  tenantId: string;
  url: string;
  events: string[];
  secret: string;
  status: WebhookStatus;
  createdBy: string;
  creatorRole: 'admin' | 'user';
  createdAt: string;
  updatedAt: string;
  failingSince?: string;
  disabledAt?: string;
}

export interface StoredDelivery {
  id: string;
  webhookId: string;
  tenantId: string;
  eventId: string;
  eventType: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  responseCode: number | null;
  responseTimeMs: number | null;
  error: string | null;
  responseBody?: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  expiresAt: number;
}

const table = () => config().tables.webhooks;
const webhookKey = (tenantId: string, id: string) => ({ pk: `TENANT#${tenantId}`, sk: `WEBHOOK#${id}` });
const deliveryKey = (webhookId: string, id: string) => ({ pk: `WEBHOOK#${webhookId}`, sk: `DELIVERY#${id}` });

function strip<T>(item: Record<string, unknown> | undefined): T | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, kind: _kind, ...rest } = item;
  return rest as T;
}

/** A delivery's id: the event's time (sortable) and a digest of webhook and event (the same event is one delivery). */
export function deliveryIdFor(webhookId: string, eventId: string, eventTime: string): string {
  const ms = Date.parse(eventTime);
  const time = (Number.isNaN(ms) ? Date.now() : ms).toString(16).padStart(12, '0');
  return `dlv_${time}${createHash('sha256').update(`${webhookId}\n${eventId}`).digest('hex').slice(0, 20)}`;
}

/** A delivery not attempted yet, of one event to one webhook; kept DELIVERY_TTL_SECONDS. */
export function pendingDelivery(
  target: { webhookId: string; tenantId: string },
  event: { id: string; type: string; createdAt: string; payload: string },
  nextAttemptAt: string | null,
  nowMs = Date.now(),
): StoredDelivery {
  return {
    id: deliveryIdFor(target.webhookId, event.id, event.createdAt),
    ...target,
    eventId: event.id,
    eventType: event.type,
    payload: event.payload,
    status: 'pending',
    attempts: 0,
    responseCode: null,
    responseTimeMs: null,
    error: null,
    lastAttemptAt: null,
    nextAttemptAt,
    createdAt: new Date(nowMs).toISOString(),
    expiresAt: Math.floor(nowMs / 1000) + DELIVERY_TTL_SECONDS,
  };
}

/**
 * Every call of the store: an engine-busy answer (throttling, DynamoDB Local's lock timeout) is
 * retried here, in place, with jitter (shared/data/busy.ts), so that a busy engine delays a
 * fan-out or a delivery by moments instead of failing it and costing a delivery attempt.
 */
function send(command: GetCommand): Promise<GetCommandOutput>;
function send(command: PutCommand): Promise<PutCommandOutput>;
function send(command: UpdateCommand): Promise<UpdateCommandOutput>;
function send(command: DeleteCommand): Promise<DeleteCommandOutput>;
function send(command: QueryCommand): Promise<QueryCommandOutput>;
function send(command: BatchGetCommand): Promise<BatchGetCommandOutput>;
function send(command: BatchWriteCommand): Promise<BatchWriteCommandOutput>;
function send(command: GetCommand | PutCommand | UpdateCommand | DeleteCommand | QueryCommand | BatchGetCommand | BatchWriteCommand): Promise<unknown> {
  return whileBusy(() => db().send(command as never));
}

export async function putWebhook(webhook: StoredWebhook): Promise<void> {
  await send(new PutCommand({ TableName: table(), Item: { ...webhookKey(webhook.tenantId, webhook.id), kind: 'webhook', ...webhook }, ConditionExpression: 'attribute_not_exists(pk)' }));
}

export async function getWebhook(tenantId: string, id: string): Promise<StoredWebhook | undefined> {
  const { Item } = await send(new GetCommand({ TableName: table(), Key: webhookKey(tenantId, id), ConsistentRead: true }));
  return strip<StoredWebhook>(Item);
}

export async function listWebhooks(tenantId: string): Promise<StoredWebhook[]> {
  const items: StoredWebhook[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': `TENANT#${tenantId}`, ':prefix': 'WEBHOOK#' },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) items.push(strip<StoredWebhook>(item)!);
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Sets the given attributes of an existing webhook (and removes those given as undefined); undefined when it is gone. */
export async function updateWebhook(tenantId: string, id: string, changes: Partial<StoredWebhook>): Promise<StoredWebhook | undefined> {
  const sets: string[] = [];
  const removes: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  Object.entries(changes).forEach(([name, value], i) => {
    names[`#a${i}`] = name;
    if (value === undefined) removes.push(`#a${i}`);
    else {
      sets.push(`#a${i} = :v${i}`);
      values[`:v${i}`] = value;
    }
  });
  try {
    const { Attributes } = await send(
      new UpdateCommand({
        TableName: table(),
        Key: webhookKey(tenantId, id),
        UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : ''].join(' ').trim(),
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip<StoredWebhook>(Attributes);
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

/** Starts (or keeps) the webhook's failing period; returns the webhook as stored now. */
export async function markFailing(tenantId: string, id: string, now: string): Promise<StoredWebhook | undefined> {
  try {
    const { Attributes } = await send(
      new UpdateCommand({
        TableName: table(),
        Key: webhookKey(tenantId, id),
        UpdateExpression: 'SET failingSince = if_not_exists(failingSince, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip<StoredWebhook>(Attributes);
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

export async function deleteWebhook(tenantId: string, id: string): Promise<boolean> {
  const { Attributes } = await send(new DeleteCommand({ TableName: table(), Key: webhookKey(tenantId, id), ReturnValues: 'ALL_OLD' }));
  return Attributes !== undefined;
}

/** Stores a new delivery; false when it exists already (the same event fanned out again). */
export async function createDelivery(delivery: StoredDelivery): Promise<boolean> {
  try {
    await send(
      new PutCommand({
        TableName: table(),
        Item: { ...deliveryKey(delivery.webhookId, delivery.id), kind: 'delivery', ...delivery },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** DynamoDB's per-request ceilings: BatchGetItem reads 100 keys, BatchWriteItem writes 25 items. */
const BATCH_GET = 100;
const BATCH_WRITE = 25;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Items by key, read consistently 100 keys a request, with what the engine left unprocessed read again. */
async function batchGet(keys: readonly { pk: string; sk: string }[], projection?: string): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < keys.length; i += BATCH_GET) {
    let pending: Record<string, unknown>[] | undefined = keys.slice(i, i + BATCH_GET);
    for (let attempt = 1; pending?.length; attempt++) {
      if (attempt > BUSY_ATTEMPTS) throw new Error(`${pending.length} webhook items could not be read (the engine kept them unprocessed)`);
      // Unprocessed keys are DynamoDB's way of saying "busy": back off as for a throttled request.
      if (attempt > 1) await sleep(busyDelay(attempt));
      const out: BatchGetCommandOutput = await send(
        new BatchGetCommand({ RequestItems: { [table()]: { Keys: pending, ConsistentRead: true, ...(projection ? { ProjectionExpression: projection } : {}) } } }),
      );
      for (const item of out.Responses?.[table()] ?? []) found.set(`${item.pk as string}|${item.sk as string}`, item);
      pending = out.UnprocessedKeys?.[table()]?.Keys;
    }
  }
  return found;
}

const keyString = (key: { pk: string; sk: string }) => `${key.pk}|${key.sk}`;

/** Which of these deliveries are already logged, by id (a delivery's id names its webhook and event). */
export async function loggedDeliveries(keys: readonly { webhookId: string; id: string }[]): Promise<Set<string>> {
  const found = await batchGet(
    keys.map((k) => deliveryKey(k.webhookId, k.id)),
    'pk, sk',
  );
  return new Set(keys.filter((k) => found.has(keyString(deliveryKey(k.webhookId, k.id)))).map((k) => k.id));
}

/** The webhooks and deliveries of a batch of queue messages, read together (one request for up to 50 messages). */
export async function webhooksAndDeliveries(
  messages: readonly { tenantId: string; webhookId: string; deliveryId: string }[],
): Promise<{ webhook(tenantId: string, id: string): StoredWebhook | undefined; delivery(webhookId: string, id: string): StoredDelivery | undefined }> {
  const keys = new Map<string, { pk: string; sk: string }>();
  for (const m of messages) {
    for (const key of [webhookKey(m.tenantId, m.webhookId), deliveryKey(m.webhookId, m.deliveryId)]) keys.set(keyString(key), key);
  }
  const found = await batchGet([...keys.values()]);
  return {
    webhook: (tenantId, id) => strip<StoredWebhook>(found.get(keyString(webhookKey(tenantId, id)))),
    delivery: (webhookId, id) => strip<StoredDelivery>(found.get(keyString(deliveryKey(webhookId, id)))),
  };
}

/**
 * Logs new deliveries, 25 to a request: one engine request for many deliveries, where a busy
 * engine would make each single write wait its turn. Unconditional: the caller writes only
 * deliveries it found not logged (loggedDeliveries), one fan-out per stream record at a time.
 */
export async function createDeliveries(deliveries: readonly StoredDelivery[]): Promise<void> {
  for (let i = 0; i < deliveries.length; i += BATCH_WRITE) {
    let pending: NonNullable<BatchWriteCommandOutput['UnprocessedItems']>[string] | undefined = deliveries
      .slice(i, i + BATCH_WRITE)
      .map((d) => ({ PutRequest: { Item: { ...deliveryKey(d.webhookId, d.id), kind: 'delivery', ...d } } }));
    for (let attempt = 1; pending?.length; attempt++) {
      if (attempt > BUSY_ATTEMPTS) throw new Error(`${pending.length} delivery log entries could not be written (the engine kept them unprocessed)`);
      // Unprocessed items are DynamoDB's way of saying "busy": back off as for a throttled request.
      if (attempt > 1) await sleep(busyDelay(attempt));
      const out: BatchWriteCommandOutput = await send(new BatchWriteCommand({ RequestItems: { [table()]: pending } }));
      pending = out.UnprocessedItems?.[table()];
    }
  }
}

export async function getDelivery(webhookId: string, id: string): Promise<StoredDelivery | undefined> {
  const { Item } = await send(new GetCommand({ TableName: table(), Key: deliveryKey(webhookId, id), ConsistentRead: true }));
  return strip<StoredDelivery>(Item);
}

export interface AttemptRecord {
  status: DeliveryStatus;
  responseCode: number | null;
  responseTimeMs: number;
  error: string | null;
  responseBody?: string;
  lastAttemptAt: string;
  nextAttemptAt: string | null;
}

export interface RecordOptions {
  /** A delivery not logged yet (carried in its queue message): the entry is written if it is missing. */
  create?: StoredDelivery;
  /**
   * Not over a logged success (the queue's attempts): a copy of the delivery handled elsewhere
   * at the same time, whose attempt failed, cannot turn a success back into pending (which would
   * send it again). An API replay records over anything.
   */
  keepSuccess?: boolean;
}

/**
 * Records one attempt: attempts + 1 and its outcome. With `create`, the entry is written if it is
 * missing; otherwise an entry gone meanwhile (expired, its webhook deleted) is left gone.
 * Undefined when nothing was recorded (the entry is gone, or, with `keepSuccess`, succeeded).
 */
export async function recordAttempt(webhookId: string, id: string, attempt: AttemptRecord, options: RecordOptions = {}): Promise<StoredDelivery | undefined> {
  const { create, keepSuccess } = options;
  const outcome = 'SET #status = :status, responseCode = :code, responseTimeMs = :time, #error = :error, responseBody = :body, lastAttemptAt = :last, nextAttemptAt = :next';
  const values: Record<string, unknown> = {
    ':status': attempt.status,
    ':code': attempt.responseCode,
    ':time': attempt.responseTimeMs,
    ':error': attempt.error,
    ':body': attempt.responseBody ?? null,
    ':last': attempt.lastAttemptAt,
    ':next': attempt.nextAttemptAt,
    ':one': 1,
  };
  const names: Record<string, string> = { '#status': 'status', '#error': 'error' };
  let created = '';
  if (create) {
    // The fields the fan-out would have logged, each kept if another attempt logged it first.
    const fields = { kind: 'delivery', id: create.id, webhookId: create.webhookId, tenantId: create.tenantId, eventId: create.eventId, eventType: create.eventType, payload: create.payload, createdAt: create.createdAt, expiresAt: create.expiresAt };
    Object.entries(fields).forEach(([field, value], i) => {
      names[`#c${i}`] = field;
      values[`:c${i}`] = value;
      created += `, #c${i} = if_not_exists(#c${i}, :c${i})`;
    });
  }
  const conditions: string[] = create ? [] : ['attribute_exists(pk)'];
  if (keepSuccess) {
    values[':succeeded'] = 'succeeded';
    conditions.push(create ? '(attribute_not_exists(pk) OR #status <> :succeeded)' : '#status <> :succeeded');
  }
  const conditionExpression = conditions.join(' AND ');
  try {
    const { Attributes } = await send(
      new UpdateCommand({
        TableName: table(),
        Key: deliveryKey(webhookId, id),
        UpdateExpression: `${outcome}${created} ADD attempts :one`,
        ...(conditionExpression ? { ConditionExpression: conditionExpression } : {}),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip<StoredDelivery>(Attributes);
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

function encodeCursor(sk: string): string {
  return Buffer.from(sk, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const sk = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^DELIVERY#dlv_[0-9a-f]{32}$/.test(sk)) throw new BadRequestError('cursor is not valid', { cursor: 'not a cursor this endpoint issued' });
  return sk;
}

export async function listDeliveries(webhookId: string, limit: number, cursor?: string): Promise<{ deliveries: StoredDelivery[]; nextCursor: string | null }> {
  const pk = `WEBHOOK#${webhookId}`;
  const page = await send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': 'DELIVERY#' },
      ScanIndexForward: false,
      Limit: limit,
      ...(cursor ? { ExclusiveStartKey: { pk, sk: decodeCursor(cursor) } } : {}),
    }),
  );
  const deliveries = (page.Items ?? []).map((item) => strip<StoredDelivery>(item)!);
  const last = page.LastEvaluatedKey?.sk;
  return { deliveries, nextCursor: typeof last === 'string' && deliveries.length === limit ? encodeCursor(last) : null };
}

/** Stores an inbound provider event once; false when its id was seen before. */
export async function storeInboundEvent(provider: string, eventId: string, type: string | undefined, payload: string): Promise<boolean> {
  const now = new Date();
  try {
    await send(
      new PutCommand({
        TableName: table(),
        Item: {
          pk: `INBOUND#${provider}`,
          sk: `EVENT#${eventId}`,
          kind: 'inbound',
          provider,
          eventId,
          ...(type ? { type } : {}),
          payload,
          receivedAt: now.toISOString(),
          expiresAt: Math.floor(now.getTime() / 1000) + DELIVERY_TTL_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * Marks a delivery that never finished an attempt as failed (its message reached the dead-letter
 * queue: the delivery function crashed or timed out on every receive); undefined when it was not
 * pending any more (an attempt recorded its own outcome).
 */
export async function markDeliveryFailed(webhookId: string, id: string, error: string, now: string): Promise<StoredDelivery | undefined> {
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: deliveryKey(webhookId, id),
        UpdateExpression: 'SET #status = :failed, #error = :error, nextAttemptAt = :null, lastAttemptAt = if_not_exists(lastAttemptAt, :now)',
        ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
        ExpressionAttributeValues: { ':failed': 'failed', ':pending': 'pending', ':error': error, ':null': null, ':now': now },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip<StoredDelivery>(Attributes);
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

/** Makes a failed delivery pending again, to be queued for a replay; undefined when it is not failed (or gone). */
export async function reopenDelivery(webhookId: string, id: string): Promise<StoredDelivery | undefined> {
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: deliveryKey(webhookId, id),
        UpdateExpression: 'SET #status = :pending, nextAttemptAt = :null',
        ConditionExpression: 'attribute_exists(pk) AND #status = :failed',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':failed': 'failed', ':pending': 'pending', ':null': null },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip<StoredDelivery>(Attributes);
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}
