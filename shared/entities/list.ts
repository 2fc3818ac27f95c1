/**
 * LIST: request parameters → a plan → DynamoDB. This issue serves page, limit and cursor in the
 * default order (createdAt desc, then id asc) from one listing partition; the query language
 * (filters, search, sort, fields, dates, metadata: issue 5) extends `parseListParams` and
 * `planList` — a plan names the partition to read, and anything that partition cannot answer
 * becomes a filter/sort step executed after the read.
 *
 * Cost per page (items read; every read is one Query unless noted):
 * - page 1: ONE Query returning the partition's counter and the page (limit + 1 items);
 * - page N: keys-only Query(s) over the (N-1)·limit entries before the page (1 MB per call),
 *   then ONE Query for the page;
 * - cursor: ONE Query for the page (starting after the cursor's key) + ONE GetItem for the total.
 */
import {
  decodeCursor,
  encodeCursor,
  listingPartitionFor,
  type Cursor,
  type StoredRecord,
  type Viewer,
} from '../data/records-keys.js';
import { firstPage, pageAfter, readCounter, skipEntries } from '../data/records.js';
import { BadRequestError } from '../errors.js';
import type { Pagination } from '../http/types.js';
import type { LoadedEntity } from '../registry/types.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface ListParams {
  page: number;
  limit: number;
  cursor?: Cursor;
}

function positiveInt(value: string | undefined, name: string, details: Record<string, string>): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    details[name] = 'must be a positive integer';
    return undefined;
  }
  return Number(value);
}

/** page (default 1), limit (default 20, capped at 100), cursor; 400 INVALID_REQUEST with details otherwise. */
export function parseListParams(query: Record<string, string>): ListParams {
  const details: Record<string, string> = {};
  const page = positiveInt(query.page, 'page', details);
  const limit = positiveInt(query.limit, 'limit', details);
  let cursor: Cursor | undefined;
  if (query.cursor !== undefined && query.cursor !== '') {
    cursor = decodeCursor(query.cursor);
    if (!cursor) details.cursor = 'is not a cursor returned by this API';
  }
  if (Object.keys(details).length) throw new BadRequestError('Invalid pagination parameters', details);
  return { page: cursor?.page ?? page ?? 1, limit: Math.min(limit ?? DEFAULT_LIMIT, MAX_LIMIT), cursor };
}

export interface ListPlan {
  /** The listing partition read. */
  partition: string;
  page: number;
  limit: number;
  cursor?: Cursor;
}

/** Which partition serves the request: the narrowest the caller may read (see records-keys.ts). */
export function planList(entity: LoadedEntity, viewer: Viewer, params: ListParams, narrow?: { field: string; value: unknown }): ListPlan {
  return { partition: listingPartitionFor(entity, viewer, narrow), page: params.page, limit: params.limit, cursor: params.cursor };
}

export interface ListResult {
  records: StoredRecord[];
  pagination: Pagination;
}

export function paginationOf(page: number, limit: number, total: number, lastSk: string | undefined, returned: number): Pagination {
  const totalPages = Math.ceil(total / limit);
  const hasNext = page * limit < total && returned === limit;
  return {
    page,
    limit,
    total,
    totalPages,
    hasNext,
    hasPrev: page > 1,
    nextCursor: hasNext && lastSk ? encodeCursor({ sk: lastSk, page: page + 1 }) : null,
  };
}

export async function executeList(plan: ListPlan): Promise<ListResult> {
  const { partition, page, limit, cursor } = plan;
  if (cursor) {
    const [result, total] = await Promise.all([pageAfter(partition, cursor.sk, limit), readCounter(partition)]);
    return { records: result.records, pagination: paginationOf(page, limit, total, result.lastSk, result.records.length) };
  }
  if (page === 1) {
    const result = await firstPage(partition, limit);
    return { records: result.records, pagination: paginationOf(1, limit, result.total ?? 0, result.lastSk, result.records.length) };
  }
  const skipped = await skipEntries(partition, (page - 1) * limit);
  if (!skipped.lastSk) return { records: [], pagination: paginationOf(page, limit, skipped.total, undefined, 0) };
  const result = await pageAfter(partition, skipped.lastSk, limit);
  return { records: result.records, pagination: paginationOf(page, limit, skipped.total, result.lastSk, result.records.length) };
}
