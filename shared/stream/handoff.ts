/**
 * The hand-off between two connections of one client: what a stream sent within its look-back
 * window, kept for the connection that resumes from its last id.
 *
 * Why. A stream re-reads the window behind its position for events that commit late
 * (session.ts). A new connection resuming with `Last-Event-ID` finds events in that window and
 * cannot tell those the previous connection sent from those that committed while the client was
 * away. So a stream that ends leaves the positions it sent in its window under its last id; the
 * next connection reads them and sends the window's other events (late commits) at once. Without
 * a hand-off (a container that died, a client that resumes from an earlier id) the window is
 * taken as sent, as before.
 *
 * Item in the limits table: pk `STREAMRESUME#<tenant>#<user>#<table>`, sk `<last id>` —
 * {from: the window's start (positions after it that are not in `sent` were not sent), sent: the
 * positions (a list), expiresAt (epoch seconds, the table's TTL)}. Pure
 * builders; `saveHandoff` and `loadHandoff` are the only I/O.
 */
import { GetCommand, PutCommand, type GetCommandInput, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../data/index.js';

/** A hand-off is kept this long (a client reconnects within seconds; its 24 h replay does not need it). */
export const HANDOFF_SECONDS = 3600;
/** More positions than this (about 160 KB) are not kept: the next connection takes the window as sent. */
export const HANDOFF_MAX_POSITIONS = 4000;

/** What a stream sent: every position after `from` (up to its last id) that is not in `sent` was not sent. */
export interface Handoff {
  from: string;
  sent: Set<string>;
}

export interface HandoffOwner {
  tenantId: string;
  userId: string;
  /** The entity's table: one hand-off per entity stream. */
  table: string;
}

export function handoffKey(owner: HandoffOwner, lastId: string): { pk: string; sk: string } {
  return { pk: `STREAMRESUME#${owner.tenantId}#${owner.userId}#${owner.table}`, sk: lastId };
}

/** The Put, or undefined when there are too many positions to keep. */
export function handoffPut(table: string, owner: HandoffOwner, lastId: string, handoff: Handoff, nowMs: number): PutCommandInput | undefined {
  const sent = [...handoff.sent].filter((p) => p > handoff.from && p <= lastId).sort();
  if (sent.length > HANDOFF_MAX_POSITIONS) return undefined;
  return {
    TableName: table,
    Item: { ...handoffKey(owner, lastId), from: handoff.from, sent, expiresAt: Math.floor(nowMs / 1000) + HANDOFF_SECONDS },
  };
}

export function handoffGet(table: string, owner: HandoffOwner, lastId: string): GetCommandInput {
  return { TableName: table, Key: handoffKey(owner, lastId), ConsistentRead: true };
}

/** A stored hand-off (an expired one the TTL has not removed yet counts as none). */
export function handoffOf(item: Record<string, unknown> | undefined, nowMs: number): Handoff | undefined {
  if (!item || !Array.isArray(item.sent) || typeof item.from !== 'string') return undefined;
  if (Number(item.expiresAt) * 1000 <= nowMs) return undefined;
  return { from: item.from, sent: new Set(item.sent.map(String)) };
}

export async function saveHandoff(owner: HandoffOwner, lastId: string, handoff: Handoff): Promise<void> {
  const put = handoffPut(tableName('limits'), owner, lastId, handoff, Date.now());
  if (put) await db().send(new PutCommand(put));
}

export async function loadHandoff(owner: HandoffOwner, lastId: string): Promise<Handoff | undefined> {
  const { Item } = await db().send(new GetCommand(handoffGet(tableName('limits'), owner, lastId)));
  return handoffOf(Item, Date.now());
}
