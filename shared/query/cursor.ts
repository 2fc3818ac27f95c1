/**
 * Cursors (CONTRACT.md: `pagination.nextCursor` on every LIST, `cursor=` continues). A cursor is
 * bound to the query that produced it: it carries a hash of the query's shape (entity, view,
 * conditions, search, sort, date range, ids, distinct, limit), and a cursor presented with another
 * query is refused (400 INVALID_REQUEST, details.cursor). Opaque base64url JSON. Pure.
 */
import { createHash } from 'node:crypto';

export interface QueryCursor {
  /** Shape hash. */
  h: string;
  /** Page number of the page the cursor starts. */
  p: number;
  /** Listing sort key to continue after (partition reads in listing order). */
  s?: string;
}

export function shapeHash(shape: unknown): string {
  return createHash('sha256').update(JSON.stringify(shape)).digest('base64url').slice(0, 16);
}

export function encodeQueryCursor(cursor: QueryCursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

export function decodeQueryCursor(value: string): QueryCursor | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<QueryCursor>;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    if (typeof parsed.h !== 'string' || typeof parsed.p !== 'number' || !Number.isSafeInteger(parsed.p) || parsed.p < 2) return undefined;
    if (parsed.s !== undefined && (typeof parsed.s !== 'string' || !/^\d{13}#/.test(parsed.s))) return undefined;
    return { h: parsed.h, p: parsed.p, ...(parsed.s !== undefined ? { s: parsed.s } : {}) };
  } catch {
    return undefined;
  }
}
