/**
 * Reading change events for the SSE stream: the items every record write puts in the events
 * table in its own transaction (shared/data/change-events.ts describes the item). A stream reads
 * its tenant's partition of one entity, `<tenant>#<table>`, by Query after the last sort key it
 * sent; that sort key (`<ISO time>#<suffix>`) is the SSE `id:` and what `Last-Event-ID` resumes
 * from. Parameters are built by pure functions; `readEventsAfter` is the only I/O.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, EVENT_TTL_SECONDS, mergeSorted, shardKeys, tableName } from '../data/index.js';

export { eventPartition } from '../data/index.js';

/** What the stream needs of a change event, whatever the stored item looks like. */
export interface StreamEvent {
  /** The sort key: sortable by time, unique; sent as the SSE id. */
  position: string;
  /** `<entity name>.created|updated|deleted`. */
  type: string;
  change: 'created' | 'updated' | 'deleted';
  recordId: string;
  tenantId: string;
  ownerId: string;
  /** The record as READ shows it ({id} for deletes). */
  data: Record<string, unknown>;
  createdAt: string;
}

/** The one place that knows the stored item's format. */
export function toStreamEvent(item: Record<string, unknown>): StreamEvent {
  const type = String(item.type ?? '');
  const change = type.slice(type.lastIndexOf('.') + 1) as StreamEvent['change'];
  return {
    position: String(item.sk),
    type,
    change,
    recordId: String(item.recordId ?? ''),
    tenantId: String(item.tenantId ?? ''),
    ownerId: String(item.ownerId ?? ''),
    data: (item.data as Record<string, unknown> | undefined) ?? { id: item.recordId },
    createdAt: String(item.createdAt ?? ''),
  };
}


/** An SSE id we sent: `<ISO time with ms>` optionally followed by `#<suffix>`. */
const POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z(#[A-Za-z0-9_-]{1,64})?$/;

export function isPosition(value: string): boolean {
  return POSITION.test(value) && !Number.isNaN(Date.parse(value.slice(0, 24)));
}

/** The position "everything after this instant". */
export function positionAt(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export function positionTime(position: string): number {
  return Date.parse(position.slice(0, 24));
}

/** True when events after `position` may already have expired (older than the retention). */
export function beyondRetention(position: string, nowMs: number): boolean {
  return positionTime(position) < nowMs - EVENT_TTL_SECONDS * 1000;
}

export const EVENTS_PAGE = 100;

/**
 * Events of one partition after `after`, oldest first. Strongly consistent, so that an event
 * committed before a later one we already read cannot be missing from a replica.
 */
export function eventsQuery(table: string, partition: string, after: string, exclusiveStartKey?: Record<string, unknown>): QueryCommandInput {
  return {
    TableName: table,
    KeyConditionExpression: 'pk = :pk AND sk > :after',
    ExpressionAttributeValues: { ':pk': partition, ':after': after },
    ScanIndexForward: true,
    ConsistentRead: true,
    Limit: EVENTS_PAGE,
    ...(exclusiveStartKey ? { ExclusiveStartKey: exclusiveStartKey } : {}),
  };
}

export interface EventPage {
  events: StreamEvent[];
  /** True when the partition holds more after the last event returned. */
  more: boolean;
}

export async function readEventsAfter(partition: string, after: string, shards: number | readonly number[] = 1): Promise<EventPage> {
  const keys = (typeof shards === 'number' ? [shards] : shards).flatMap((n) => shardKeys(partition, n));
  if (keys.length > 1) return mergeEventPages(await Promise.all(keys.map((key) => readEventsAfter(key, after))));
  const result = await db().send(new QueryCommand(eventsQuery(tableName('events'), partition, after)));
  return { events: (result.Items ?? []).map(toStreamEvent), more: result.LastEvaluatedKey !== undefined };
}

/**
 * Pages of the write shards of one partition, read after the same position, as one page in
 * position order: a shard with more beyond its page bounds what may be returned (its unread
 * events may come before the other shards' later ones), so the page stops at the earliest such
 * shard's last event, and says more follow.
 */
export function mergeEventPages(pages: readonly EventPage[]): EventPage {
  const bounds = pages.filter((p) => p.more && p.events.length).map((p) => p.events[p.events.length - 1].position);
  const bound = bounds.length ? bounds.reduce((a, b) => (b < a ? b : a)) : undefined;
  const events = mergeSorted(
    pages.map((p) => p.events),
    (e) => e.position,
  ).filter((e) => bound === undefined || e.position <= bound);
  return { events, more: pages.some((p) => p.more) };
}
