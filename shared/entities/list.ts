/**
 * LIST: request parameters (shared/query/params.ts) → a plan (shared/query/plan.ts) → DynamoDB.
 *
 * Cost per access path (items read; see README "Query language"):
 * - partition, page 1: ONE Query returning the partition's counter and the page (limit + 1 items);
 * - partition, page N: keys-only Query(s) over the (N-1)·limit entries before the page (1 MB per
 *   call), then ONE Query for the page;
 * - partition, cursor: ONE Query for the page (after the cursor's key) + ONE GetItem (the total);
 * - read-all: every copy of the narrowest partition (in the key range), filter pushed down;
 * - ids: ONE BatchGetItem.
 */
import { recordKey, fromItem, type StoredRecord, type Viewer } from '../data/records-keys.js';
import { batchGet, batchKey, firstPage, MAX_ID_LENGTH, pageAfter, queryAll, readCounter, readCounters, skipEntries } from '../data/records.js';
import { BadRequestError } from '../errors.js';
import type { Pagination } from '../http/types.js';
import { encodeQueryCursor } from '../query/cursor.js';
import { buildFilterExpression } from '../query/expression.js';
import { searchableFields, valueAt } from '../query/fields.js';
import { matchesAll, matchesSearch } from '../query/filter.js';
import { parsePagination, type QuerySpec } from '../query/params.js';
import { planQuery, type ListPlan } from '../query/plan.js';
import { comparator } from '../query/sort.js';
import type { LoadedEntity } from '../registry/types.js';

export { DEFAULT_LIMIT, MAX_LIMIT } from '../query/params.js';

/** Pagination parameters only (child collections of manyToMany, early answers). */
export function parseListParams(query: Record<string, string>): { page: number; limit: number } {
  const { page, limit } = parsePagination(query);
  return { page, limit };
}

export function planList(entity: LoadedEntity, viewer: Viewer, spec: QuerySpec, parent?: { field: string; value: unknown }): ListPlan {
  return planQuery(entity, viewer, spec, parent);
}

export interface DistinctValue {
  value: string;
  label: string;
  entityType: string;
}

export interface ListResult {
  records: StoredRecord[];
  pagination: Pagination;
  /** distinct=true: the values of the page. */
  distinct?: DistinctValue[];
}

export function paginationOf(page: number, limit: number, total: number, next: { hash: string; sk?: string } | undefined, returned: number): Pagination {
  const totalPages = Math.ceil(total / limit);
  const hasNext = page * limit < total && returned === limit;
  return {
    page,
    limit,
    total,
    totalPages,
    hasNext,
    hasPrev: page > 1,
    nextCursor: hasNext && next ? encodeQueryCursor({ h: next.hash, p: page + 1, ...(next.sk ? { s: next.sk } : {}) }) : null,
  };
}

function checkCursor(plan: ListPlan): void {
  const cursor = plan.spec.cursor;
  if (cursor && cursor.h !== plan.hash) {
    throw new BadRequestError('The cursor belongs to another query', { cursor: 'was returned for another query (filter, sort, search, limit or caller differ)' });
  }
}

async function readPartition(plan: ListPlan): Promise<ListResult> {
  const { partition } = plan;
  const { page, limit, cursor } = plan.spec;
  if (cursor?.s) {
    const [result, total] = await Promise.all([pageAfter(partition, cursor.s, limit), readCounter(partition)]);
    return { records: result.records, pagination: paginationOf(page, limit, total, { hash: plan.hash, sk: result.lastSk }, result.records.length) };
  }
  if (page === 1) {
    const result = await firstPage(partition, limit);
    return { records: result.records, pagination: paginationOf(1, limit, result.total ?? 0, { hash: plan.hash, sk: result.lastSk }, result.records.length) };
  }
  const skipped = await skipEntries(partition, (page - 1) * limit);
  if (!skipped.lastSk) return { records: [], pagination: paginationOf(page, limit, skipped.total, undefined, 0) };
  const result = await pageAfter(partition, skipped.lastSk, limit);
  return { records: result.records, pagination: paginationOf(page, limit, skipped.total, { hash: plan.hash, sk: result.lastSk }, result.records.length) };
}

/** With several indexed equalities, the partition with the fewest copies (ONE BatchGetItem of counters). */
async function narrowest(plan: ListPlan): Promise<{ partition: string; answered?: ListPlan['candidates'][number] }> {
  if (plan.candidates.length === 0) return { partition: plan.base };
  if (plan.candidates.length === 1) return { partition: plan.candidates[0].partition, answered: plan.candidates[0] };
  const counts = await readCounters(plan.candidates.map((c) => c.partition));
  const best = [...plan.candidates].sort((a, b) => (counts.get(a.partition) ?? 0) - (counts.get(b.partition) ?? 0))[0];
  return { partition: best.partition, answered: best };
}

function finish(entity: LoadedEntity, plan: ListPlan, matches: StoredRecord[]): ListResult {
  const { page, limit, distinct } = plan.spec;
  // ids= (and a manyToMany child collection) keep the order of the ids unless sort is given.
  const sorted = plan.kind === 'ids' && plan.spec.sort.length === 0 ? matches : [...matches].sort(comparator(plan.spec.sort));
  const start = (page - 1) * limit;
  if (distinct) {
    const field = distinct === 'id' || distinct === 'createdAt' || distinct === 'updatedAt' || distinct === 'deletedAt' ? [distinct] : ['data', distinct];
    const seen = new Map<string, DistinctValue>();
    for (const r of sorted) {
      const v = valueAt(r, field);
      if (v === undefined || v === null || v === '') continue;
      const text = Array.isArray(v) ? v.join(',') : String(v);
      if (!seen.has(text)) seen.set(text, { value: text, label: text, entityType: entity.name });
    }
    const values = [...seen.values()].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    const slice = values.slice(start, start + limit);
    return { records: [], distinct: slice, pagination: paginationOf(page, limit, values.length, { hash: plan.hash }, slice.length) };
  }
  const slice = sorted.slice(start, start + limit);
  return { records: slice, pagination: paginationOf(page, limit, sorted.length, { hash: plan.hash }, slice.length) };
}

function inMemory(entity: LoadedEntity, plan: ListPlan): (r: StoredRecord) => boolean {
  const searchable = searchableFields(entity);
  return (r) => matchesAll(r, plan.conditions) && matchesSearch(r.data, searchable, plan.spec.words);
}

export async function executeList(entity: LoadedEntity, plan: ListPlan, visible: (r: StoredRecord) => boolean): Promise<ListResult> {
  checkCursor(plan);
  if (plan.kind === 'partition') return readPartition(plan);
  if (plan.kind === 'ids') {
    // No record has an id longer than MAX_ID_LENGTH (and DynamoDB refuses such keys).
    const ids = (plan.spec.ids ?? []).filter((id) => id.length <= MAX_ID_LENGTH);
    const found = ids.length ? await batchGet([{ table: 'records', keys: ids.map((id) => recordKey(entity, id)) }]) : new Map();
    const records = ids
      .map((id) => found.get(batchKey('records', recordKey(entity, id))))
      .filter((item): item is Record<string, unknown> => item !== undefined)
      .map(fromItem)
      .filter(visible)
      .filter((r) => (plan.candidates.length ? plan.candidates.every((c) => c.condition || r.data[c.field] === c.value) : true));
    const unique = [...new Map(records.map((r) => [r.id, r])).values()];
    return finish(entity, plan, unique.filter(inMemory(entity, plan)));
  }
  const { partition, answered } = await narrowest(plan);
  const pushed = buildFilterExpression(
    plan.conditions.filter((c) => c !== answered?.condition),
    plan.spec.words,
  ).pushed;
  const records = await queryAll(partition, { range: plan.keyRange, filter: pushed });
  return finish(entity, plan, records.filter(inMemory(entity, plan)));
}
