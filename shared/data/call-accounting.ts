/**
 * Accounting for every DynamoDB call of a client: one middleware asks DynamoDB for the consumed
 * capacity (ReturnConsumedCapacity TOTAL, unless REQUEST_COST_HEADER is off and nobody listens)
 * and adds calls, time and read/write units to the current request's usage (usage.ts). Imports
 * the SDK's types only, so a function that loads the SDK lazily (health) can use it too.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { config } from '../config.js';
import { currentUsage, foregroundCallEnded } from './usage.js';

/** The operations that take ReturnConsumedCapacity, and which units they consume. */
const CAPACITY_KIND: Record<string, 'read' | 'write'> = {
  GetItem: 'read',
  Query: 'read',
  Scan: 'read',
  BatchGetItem: 'read',
  TransactGetItems: 'read',
  PutItem: 'write',
  UpdateItem: 'write',
  DeleteItem: 'write',
  BatchWriteItem: 'write',
  TransactWriteItems: 'write',
};

/** The document client's names (GetCommand) and the low-level ones (GetItemCommand), as operations. */
const DOCUMENT_NAMES: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  TransactGet: 'TransactGetItems',
  TransactWrite: 'TransactWriteItems',
};

export function operationOf(commandName: string | undefined): string {
  const bare = (commandName ?? '').replace(/Command$/, '');
  return DOCUMENT_NAMES[bare] ?? bare;
}

interface CapacityEntry {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/** Read and write units of a ConsumedCapacity (one entry, or one per table of a batch/transaction). */
export function unitsOf(consumed: CapacityEntry | CapacityEntry[] | undefined, kind: 'read' | 'write' | undefined): { rcu: number; wcu: number } {
  const entries = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
  let rcu = 0;
  let wcu = 0;
  for (const entry of entries) {
    if (entry.ReadCapacityUnits !== undefined || entry.WriteCapacityUnits !== undefined) {
      rcu += entry.ReadCapacityUnits ?? 0;
      wcu += entry.WriteCapacityUnits ?? 0;
    } else if (kind === 'read') rcu += entry.CapacityUnits ?? 0;
    else wcu += entry.CapacityUnits ?? 0;
  }
  return { rcu, wcu };
}

/** One DynamoDB call as a capacity listener sees it. */
export interface CapacityReport {
  /** GetItem, Query, TransactWriteItems, ... */
  operation: string;
  input: Record<string, unknown>;
  rcu: number;
  wcu: number;
  /** ConsumedCapacity as DynamoDB returned it. */
  consumed: unknown;
}

type CapacityListener = (report: CapacityReport) => void;
const listeners = new Set<CapacityListener>();

/** Calls `listener` after every successful call (benchmarks); returns the function that stops it. */
export function onConsumedCapacity(listener: CapacityListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function wantsCapacity(): boolean {
  return config().requestCostHeader || listeners.size > 0;
}

/** Puts the accounting middleware on `client` (every client of the app gets it). */
export function accountCalls(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) =>
      async function accountForCall(args) {
        const operation = operationOf(context.commandName);
        const kind = CAPACITY_KIND[operation];
        const input = args.input as Record<string, unknown>;
        if (kind && input.ReturnConsumedCapacity === undefined && wantsCapacity()) input.ReturnConsumedCapacity = 'TOTAL';
        const usage = currentUsage();
        const startedAt = performance.now();
        usage?.callStarted();
        let units = { rcu: 0, wcu: 0 };
        try {
          const result = await next(args);
          const consumed = (result.output as { ConsumedCapacity?: CapacityEntry | CapacityEntry[] }).ConsumedCapacity;
          units = unitsOf(consumed, kind);
          for (const listener of listeners) listener({ operation, input, ...units, consumed });
          return result;
        } finally {
          usage?.callEnded(units);
          if (usage) foregroundCallEnded(operation, performance.now() - startedAt);
        }
      },
    // Outside the retries: one call with its retries is one call, its time is the caller's wait.
    { step: 'initialize', name: 'requestUsage', priority: 'high' },
  );
}
