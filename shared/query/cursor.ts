/**
 * Cursors (CONTRACT.md: `pagination.nextCursor` on every LIST, `cursor=` continues).
 *
 * A cursor is a POSITION, never a page number: the next page is what lies strictly after the
 * last item returned, in the query's order. So a walk neither repeats nor skips a record that
 * stays put while others are created or deleted, whatever the order.
 * - listing partition (default order): the last listing sort key (`s`);
 * - any other order: the last record's sort values (`v`) and id (`i`), ties being broken by id;
 * - ids= in the order given: the last id (`i`); distinct=true: the last value (`v`, typed; its
 *   text in `i`).
 * A listing partition split over write shards also carries the total its walk's first page read
 * (`t`), so that a page after a cursor reads no counters (N Queries fewer); on one shard the
 * counters are read again with the page (one Query), so the total stays exact at every page.
 *
 * A cursor is bound to the query that produced it (`h`: a hash of the query's shape: entity,
 * view, conditions, search, sort, date range, ids, distinct, limit) and signed with HMAC-SHA256
 * under the deployment's `cursor` key: an edited, truncated or foreign cursor is refused (400
 * INVALID_REQUEST, details.cursor). Form: base64url(JSON) "." base64url(MAC). Pure.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface QueryCursor {
  /** Shape hash. */
  h: string;
  /** Page number of the page the cursor starts (reported, never used to find the page). */
  p: number;
  /** Listing sort key to continue after (partition reads in listing order). */
  s?: string;
  /** Sort values of the last item (in-memory orders; missing values as null). */
  v?: unknown[];
  /** Id of the last item (or the last distinct value). */
  i?: string;
  /** The total the walk's first page read (listing partitions on write shards): later pages show it instead of reading N shards' counters again. */
  t?: number;
}

const MAC_BYTES = 20;

export function shapeHash(shape: unknown): string {
  return createHash('sha256').update(JSON.stringify(shape)).digest('base64url').slice(0, 16);
}

function mac(payload: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
}

export function encodeQueryCursor(cursor: QueryCursor, key: Buffer): string {
  const payload = Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
  return `${payload}.${mac(payload, key).toString('base64url')}`;
}

/** The cursor when its signature is ours and its content well formed; undefined otherwise. */
export function decodeQueryCursor(value: string, key: Buffer): QueryCursor | undefined {
  const dot = value.indexOf('.');
  if (dot < 1 || value.length > 16_384) return undefined;
  const payload = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), 'base64url');
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(payload, key))) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<QueryCursor>;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    if (typeof parsed.h !== 'string' || typeof parsed.p !== 'number' || !Number.isSafeInteger(parsed.p) || parsed.p < 2) return undefined;
    if (parsed.s !== undefined && (typeof parsed.s !== 'string' || !/^\d{13}#/.test(parsed.s))) return undefined;
    if (parsed.v !== undefined && !Array.isArray(parsed.v)) return undefined;
    if (parsed.i !== undefined && typeof parsed.i !== 'string') return undefined;
    if (parsed.t !== undefined && (typeof parsed.t !== 'number' || !Number.isSafeInteger(parsed.t) || parsed.t < 0)) return undefined;
    return {
      h: parsed.h,
      p: parsed.p,
      ...(parsed.s !== undefined ? { s: parsed.s } : {}),
      ...(parsed.v !== undefined ? { v: parsed.v } : {}),
      ...(parsed.i !== undefined ? { i: parsed.i } : {}),
      ...(parsed.t !== undefined ? { t: parsed.t } : {}),
    };
  } catch {
    return undefined;
  }
}
