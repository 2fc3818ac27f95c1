/**
 * The text/event-stream wire format (pure): each message is `id:` / `event:` / `data:` lines and
 * a blank line; a line starting with ':' is a comment (the heartbeat).
 *
 * Messages of SPEC.md: `{type: 'connected'}` first; then `<entity>.created|updated|deleted` with
 * the record in `record` (`{id}` for deletes), and for tasks also `task` / `taskId`.
 */
import type { LoadedEntity } from '../registry/index.js';
import type { StreamEvent } from './events.js';

export const STREAM_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  // Tells nginx-style proxies not to buffer the stream.
  'X-Accel-Buffering': 'no',
};

export function sseMessage(data: unknown, options: { id?: string; event?: string } = {}): string {
  let text = '';
  if (options.id) text += `id: ${options.id}\n`;
  if (options.event) text += `event: ${options.event}\n`;
  // JSON.stringify never emits a raw newline, so the data is one line.
  return `${text}data: ${JSON.stringify(data)}\n\n`;
}

export function retryHint(ms: number): string {
  return `retry: ${ms}\n`;
}

export const HEARTBEAT = ': ping\n\n';

/** The first message; its id is where a reconnect without any other message resumes. */
export function connectedMessage(position: string): string {
  return sseMessage({ type: 'connected' }, { id: position });
}

/** Sent when the client's Last-Event-ID is older than the retention: it must reload. */
export function resetMessage(position: string): string {
  return sseMessage({ type: 'reset', reason: 'Events after the given Last-Event-ID are no longer kept; reload the data' }, { id: position, event: 'reset' });
}

const LAST_KEYS = ['createdAt', 'updatedAt', 'deletedAt'];

/** The record's keys in READ's order (a stored map keeps none): id, the fields, links, then the times. */
export function inReadOrder(entity: Pick<LoadedEntity, 'fields'>, record: Record<string, unknown>): Record<string, unknown> {
  const first = ['id', ...Object.keys(entity.fields)];
  const keys = [...first, ...Object.keys(record).filter((k) => !first.includes(k) && !LAST_KEYS.includes(k)).sort(), ...LAST_KEYS];
  const out: Record<string, unknown> = {};
  for (const key of keys) if (Object.prototype.hasOwnProperty.call(record, key)) out[key] = record[key];
  return out;
}

export function changePayload(entity: Pick<LoadedEntity, 'slug' | 'fields'>, event: StreamEvent): Record<string, unknown> {
  const payload: Record<string, unknown> = { type: event.type };
  if (event.change === 'deleted') {
    payload.record = { id: event.recordId };
    if (entity.slug === 'tasks') payload.taskId = event.recordId;
  } else {
    const record = inReadOrder(entity, event.data);
    payload.record = record;
    if (entity.slug === 'tasks') payload.task = record;
  }
  return payload;
}

/**
 * A change, with its position as `id:`; a late one (committed behind the stream's position) has
 * no `id:` line, so the client's resume position stays where the stream's is.
 */
export function changeMessage(entity: Pick<LoadedEntity, 'slug' | 'fields'>, event: StreamEvent, options: { late?: boolean } = {}): string {
  return sseMessage(changePayload(entity, event), options.late ? {} : { id: event.position });
}
