/**
 * Consumed capacity of the DynamoDB calls this process makes, as DynamoDB bills them, for the
 * scenarios that run the handlers in the bench's own process (capacity, write-scale).
 *
 * DynamoDB Local under-reports transactional writes, so a TransactWriteItems is billed here as
 * DynamoDB bills it: 2 WRU per KB (rounded up, at least 1) of each item, the item's size being the
 * larger of its stored form (looked up before the call with an uninstrumented client) and its
 * written form (a Put's item). A BatchWriteItem is billed the same way at 1 WRU per KB (DynamoDB
 * Local reports one total per table, and the write-scale scenario needs each item's share).
 * PutItem, UpdateItem and DeleteItem keep the units DynamoDB Local reports for them. Every write
 * is also split per item, by table and partition key.
 *
 * The recording sits on both of the app's clients: db(), and dbOnce(), which sends the record
 * transactions (shared/data/transact.ts sendTransaction).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { db, dbOnce, onConsumedCapacity } from '../shared/data/client.js';
import { itemSize } from '../shared/data/items.js';

/** One item written by a call: its table, its partition key and the WRU it was billed. */
export interface ItemWrite {
  table: string;
  pk: string;
  wru: number;
}

/** One DynamoDB call as billed. */
export interface BilledCall {
  /** GetItem, Query, TransactWriteItems, ... */
  operation: string;
  rcu: number;
  wcu: number;
  /** The call's items written (none for a read). */
  writes: ItemWrite[];
}

/** WRU of one item: `perKb` per started KB of the larger of its stored and written size, at least 1 KB. */
export function itemWru(storedBytes: number, writtenBytes: number, perKb: 1 | 2): number {
  return perKb * Math.max(1, Math.ceil(Math.max(storedBytes, writtenBytes) / 1024));
}

type Item = Record<string, unknown>;
/** The stored item at a key, or undefined (looked up without recording). */
export type StoredItemLookup = (table: string, key: Item) => Promise<Item | undefined>;

/** An item's write of a transaction or batch: where it goes, and the item written (Put) if any. */
interface PendingWrite {
  table: string;
  key: Item | undefined;
  written: Item | undefined;
}

function keyOf(op: { Key?: Item; Item?: Item }): Item | undefined {
  return op.Key ?? (op.Item ? { pk: op.Item.pk, sk: op.Item.sk } : undefined);
}

async function billed(pending: PendingWrite[], perKb: 1 | 2, stored: StoredItemLookup): Promise<ItemWrite[]> {
  return Promise.all(
    pending.map(async ({ table, key, written }) => {
      const before = key ? await stored(table, key) : undefined;
      return { table, pk: String(key?.pk ?? ''), wru: itemWru(itemSize(before), itemSize(written), perKb) };
    }),
  );
}

/** The items of a TransactWriteItems (document form), billed 2 WRU per KB each. */
export function billTransaction(items: readonly Item[], stored: StoredItemLookup): Promise<ItemWrite[]> {
  const pending = items.map((entry) => {
    const [kind, op] = Object.entries(entry)[0] as [string, { TableName: string; Key?: Item; Item?: Item }];
    return { table: op.TableName, key: keyOf(op), written: kind === 'Put' ? op.Item : undefined };
  });
  return billed(pending, 2, stored);
}

/** The items of a BatchWriteItem (document form), billed 1 WRU per KB each. */
export function billBatchWrite(requestItems: Record<string, readonly Item[]>, stored: StoredItemLookup): Promise<ItemWrite[]> {
  const pending: PendingWrite[] = [];
  for (const [table, requests] of Object.entries(requestItems)) {
    for (const request of requests as { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]) {
      if (request.PutRequest) pending.push({ table, key: keyOf(request.PutRequest), written: request.PutRequest.Item });
      else if (request.DeleteRequest) pending.push({ table, key: request.DeleteRequest.Key, written: undefined });
    }
  }
  return billed(pending, 1, stored);
}

/** An uninstrumented client of the engine at `endpoint`: its lookups are not recorded. */
export function storedItemLookup(endpoint: string): StoredItemLookup {
  const raw = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
  return async (table, key) => (await raw.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
}

const SINGLE_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

/**
 * Calls `onCall` after every successful DynamoDB call of this process's clients, billed as
 * described above; returns the function that stops the recording.
 */
export function recordCapacity(stored: StoredItemLookup, onCall: (call: BilledCall) => void): () => void {
  const billedWrites = new WeakMap<object, ItemWrite[]>();
  const name = `benchBilling${randomBytes(4).toString('hex')}`;
  const stacks = [...new Set([db().middlewareStack, dbOnce().middlewareStack])];
  for (const stack of stacks) {
    stack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? '';
        const input = args.input as { TransactItems?: Item[]; RequestItems?: Record<string, Item[]> };
        if (command.startsWith('TransactWrite') && input.TransactItems) billedWrites.set(input, await billTransaction(input.TransactItems, stored));
        else if (command.startsWith('BatchWrite') && input.RequestItems) billedWrites.set(input, await billBatchWrite(input.RequestItems, stored));
        return next(args);
      },
      { step: 'initialize', name },
    );
  }
  const stopListening = onConsumedCapacity((report) => {
    const input = report.input as { TableName?: string; Key?: Item; Item?: Item };
    let writes = billedWrites.get(report.input);
    if (!writes && SINGLE_WRITES.has(report.operation)) writes = [{ table: String(input.TableName), pk: String(keyOf(input)?.pk ?? ''), wru: report.wcu }];
    onCall({
      operation: report.operation,
      rcu: report.rcu,
      wcu: writes ? writes.reduce((n, w) => n + w.wru, 0) : report.wcu,
      writes: writes ?? [],
    });
  });
  return () => {
    stopListening();
    for (const stack of stacks) stack.remove(name);
  };
}

/**
 * Runs `work` with every call recorded (recordCapacity), then waits a moment so that writes a
 * request left running (a key's usage) land before the recording closes.
 */
export async function whileRecording(stored: StoredItemLookup, onCall: (call: BilledCall) => void, work: () => Promise<void>): Promise<void> {
  const stop = recordCapacity(stored, onCall);
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    stop();
  }
}
