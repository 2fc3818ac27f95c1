/**
 * Sending a record's transaction (transactions.ts builds it): ONE TransactWriteItems, its change
 * events stamped just before each attempt, resent safely when its outcome is unknown, retried on
 * another counter shard when it collided with another writer, and its failures told apart (the
 * record changed: WriteConflict; a unique value taken: 409 UNIQUE_VIOLATION).
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { ServiceUnavailableError, UniqueViolationError } from '../errors.js';
import { isEngineBusy, whileBusy } from './busy.js';
import { restampEvents } from './change-events.js';
import { dbOnce, tableName } from './client.js';
import { randomShard, reshard } from './counters.js';
import type { TableNames, TransactItem } from './record-item.js';
import { uniquePutField } from './unique-keys.js';

export function recordTables(): TableNames {
  return { records: tableName('records'), events: tableName('events'), history: tableName('history') };
}


/** The record's version changed (or it vanished) between our read and our write. */
export class WriteConflict extends Error {
  constructor() {
    super('The record changed while it was being written');
    this.name = 'WriteConflict';
  }
}

/**
 * Attempts of a transaction cancelled by TransactionConflict. With jittered exponential back-off
 * (cap 1 s) and a fresh counter shard each time, 10 attempts wait up to about 5 s in all.
 */
export const CONFLICT_ATTEMPTS = 10;

/** Full jitter: a random wait up to min(1 s, 10 ms × 2^attempt). */
export function conflictBackoff(attempt: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.random() * Math.min(1000, 10 * 2 ** attempt)));
}


/** Resends of a transaction whose outcome is unknown (a network error, a 5xx other than busy). */
const AMBIGUOUS_RESENDS = 2;

function mayHaveCommitted(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  if (isEngineBusy(error)) return false;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500;
  // No HTTP answer: a socket error or a timeout.
  return ['TimeoutError', 'RequestTimeout', 'AbortError'].includes(e.name ?? '') || /ECONNRESET|EPIPE|ETIMEDOUT|socket hang up/i.test(String((error as Error)?.message));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends ONE TransactWriteItems, its change events stamped immediately before each attempt
 * (change-events.ts restampEvents), so that an event's position trails its commit by at most one
 * request's time. The SDK's own retries would resend the old stamp, so the client used retries
 * nothing itself:
 * - engine busy (throttling, DynamoDB Local's lock timeout; nothing written): retried in place
 *   with jitter (busy.ts), restamped, under a new request token;
 * - outcome unknown (network error, other 5xx): resent unchanged with the SAME
 *   ClientRequestToken, so DynamoDB applies it at most once (its stamp is the first attempt's,
 *   when it was first sent);
 * - anything else (TransactionCanceledException included) is the caller's to handle.
 */
export async function sendTransaction(items: readonly TransactItem[]): Promise<void> {
  const events = tableName('events');
  await whileBusy(async () => {
    const input = { TransactItems: restampEvents(items, events, new Date().toISOString()), ClientRequestToken: randomUUID() };
    for (let resend = 0; ; resend++) {
      try {
        await dbOnce().send(new TransactWriteCommand(input));
        return;
      } catch (error) {
        if (resend >= AMBIGUOUS_RESENDS || !mayHaveCommitted(error)) throw error;
        await sleep(50 + Math.random() * 100 * 2 ** resend);
      }
    }
  });
}

/**
 * ONE TransactWriteItems. A failed condition on the first item (the record) is a WriteConflict;
 * on a uniqueness item (shared/data/unique-keys.ts), 409 UNIQUE_VIOLATION naming the field(s).
 * Another transaction on the same items at the same moment (two writes adding to one counter
 * item) cancels with TransactionConflict and nothing written: that is retried with jittered
 * back-off, the counters moved to another shard each time (CONFLICT_ATTEMPTS in all), then 503.
 */
export async function transact(sent: TransactItem[]): Promise<void> {
  let items = sent;
  for (let attempt = 1; ; attempt++) {
    try {
      await sendTransaction(items);
      return;
    } catch (error) {
      const e = error as { name?: string; CancellationReasons?: { Code?: string }[] };
      if (e.name !== 'TransactionCanceledException') throw error;
      const reasons = e.CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') throw new WriteConflict();
      // A uniqueness item's condition: another record holds the value (409, not a version conflict).
      const taken = uniqueClashes(items, reasons);
      if (taken.fields.length) throw new UniqueViolationError(taken.entity, taken.fields);
      const conflict = reasons.some((r) => r.Code === 'TransactionConflict') && !reasons.some((r) => r.Code === 'ConditionalCheckFailed');
      if (!conflict) throw error;
      if (attempt >= CONFLICT_ATTEMPTS) throw new ServiceUnavailableError('The records are busy; retry shortly');
      await conflictBackoff(attempt);
      items = reshard(items, randomShard());
    }
  }
}

/**
 * The unique fields whose uniqueness Put failed its condition in a cancelled transaction (the
 * reasons are in the order of the items), and the entity's slug.
 */
export function uniqueClashes(items: readonly TransactItem[], reasons: readonly { Code?: string }[]): { entity: string; fields: string[] } {
  const fields: string[] = [];
  let slug = '';
  items.forEach((item, i) => {
    const field = uniquePutField(item);
    if (field === undefined || reasons[i]?.Code !== 'ConditionalCheckFailed') return;
    if (!fields.includes(field)) fields.push(field);
    slug = String(item.Put!.Item!.entity);
  });
  return { entity: slug, fields };
}
