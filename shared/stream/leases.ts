/**
 * At most N open streams per user, counted across every container: each open stream holds one of
 * the user's N slots in the limits table, as a lease that the stream renews while it runs and
 * deletes when it ends. A container that dies without deleting its lease frees the slot when the
 * lease expires (LEASE_SECONDS), so a crash never locks a user out for long.
 *
 * Items: pk `STREAMS#<userId>`, sk `slot#<n>` — {leaseId, expiresAt (epoch seconds; also the
 * table's TTL attribute), openedAt}. Taking a slot is a conditional Put (free or expired), so two
 * streams opening at once never share one.
 */
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { db, tableName } from '../data/index.js';
import { ApiError } from '../errors.js';

/** A lease lives this long without renewal. */
export const LEASE_SECONDS = 60;
/** How often an open stream renews its lease. */
export const LEASE_RENEW_MS = 20_000;

export interface StreamLease {
  userId: string;
  slot: number;
  leaseId: string;
}

export function leasePartition(userId: string): string {
  return `STREAMS#${userId}`;
}

export function slotKey(userId: string, slot: number): { pk: string; sk: string } {
  return { pk: leasePartition(userId), sk: `slot#${slot}` };
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export class TooManyStreamsError extends ApiError {
  constructor(limit: number) {
    super(429, 'TOO_MANY_STREAMS', `At most ${limit} event streams may be open per user; close one first`, {
      headers: { 'Retry-After': String(LEASE_SECONDS) },
      details: { limit },
    });
  }
}

/** Slot numbers below `limit` that no live lease holds, lowest first. */
export function freeSlots(items: readonly Record<string, unknown>[], limit: number, now: number): number[] {
  const taken = new Set(items.filter((i) => Number(i.expiresAt) > now).map((i) => Number(String(i.sk).slice('slot#'.length))));
  const free: number[] = [];
  for (let slot = 0; slot < limit; slot++) if (!taken.has(slot)) free.push(slot);
  return free;
}

function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** Takes a free slot for the user, or throws 429 TOO_MANY_STREAMS. */
export async function acquireLease(userId: string, limit: number): Promise<StreamLease> {
  const table = tableName('limits');
  const now = nowSeconds();
  const held = await db().send(
    new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': leasePartition(userId) }, ConsistentRead: true }),
  );
  const leaseId = randomUUID();
  for (const slot of freeSlots(held.Items ?? [], limit, now)) {
    try {
      await db().send(
        new PutCommand({
          TableName: table,
          Item: { ...slotKey(userId, slot), leaseId, expiresAt: now + LEASE_SECONDS, openedAt: new Date().toISOString() },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
          ExpressionAttributeValues: { ':now': now },
        }),
      );
      return { userId, slot, leaseId };
    } catch (error) {
      // Another stream took this slot a moment ago: try the next.
      if (!isConditionFailure(error)) throw error;
    }
  }
  throw new TooManyStreamsError(limit);
}

/** Extends the lease; false when it is no longer ours (it expired and another stream took it). */
export async function renewLease(lease: StreamLease): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName('limits'),
        Key: slotKey(lease.userId, lease.slot),
        UpdateExpression: 'SET expiresAt = :until',
        ConditionExpression: 'leaseId = :lease',
        ExpressionAttributeValues: { ':until': nowSeconds() + LEASE_SECONDS, ':lease': lease.leaseId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

export async function releaseLease(lease: StreamLease): Promise<void> {
  try {
    await db().send(
      new DeleteCommand({
        TableName: tableName('limits'),
        Key: slotKey(lease.userId, lease.slot),
        ConditionExpression: 'leaseId = :lease',
        ExpressionAttributeValues: { ':lease': lease.leaseId },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
