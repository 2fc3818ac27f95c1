/**
 * LIST: request parameters (shared/query/params.ts) → a plan (shared/query/plan.ts) → DynamoDB.
 *
 * Cost per access path (items read; see docs/query-language.md):
 * - partition, page 1: ONE Query returning the partition's counter items, the page and one item
 *   more (whether a next page exists); more Queries only when the page passes 1 MB; on an indexed
 *   field's partition, ONE more Query (in parallel): the base partition's counter items, which
 *   hold the counts of low-cardinality fields;
 * - partition, page N: keys-only Query(s) over the (N-1)·limit entries before the page (1 MB per
 *   call), then the page as above;
 * - partition, cursor: the page after the cursor's key (as above) + ONE Query of the counter
 *   items (two on a field partition) for the total;
 * - read-all: every copy of the narrowest partition (in the key range), filter pushed down,
 *   search words matched as each Query's copies arrive;
 * - on every path, the records of the partial copies read (records over 1 KB) with ONE
 *   BatchGetItem per 100 (shared/data/read-records.ts resolveCopies); on read-all, only those whose
 *   copy does not already rule them out;
 * - ids: ONE BatchGetItem.
 * On an entity with write shards, each Query of a partition above is one per shard, in parallel,
 * merged in the listing order (shared/data/merge.ts); a cursor's position (the last listing key)
 * continues every shard.
 */
import {
  firstPage,
  LAGGING_ATTRIBUTES,
  listingSortKey,
  MAX_ID_LENGTH,
  pageAfter,
  queryAll,
  readCounter,
  readCounters,
  readRecords,
  skipEntries,
  totalSource,
  uninvertedMs,
  type LiveLayout,
  type PartitionPage,
  type StoredRecord,
  type Viewer,
} from '../data/index.js';
import { deploymentKey } from '../deployment-secret.js';
import { BadRequestError } from '../errors.js';
import type { Pagination } from '../pagination.js';
import {
  buildFilterExpression,
  comparePositions,
  compareValues,
  decodeQueryCursor,
  encodeQueryCursor,
  isDefaultOrder,
  type ListPlan,
  matchesAll,
  matchesSearch,
  planQuery,
  type Position,
  positionOf,
  type QueryCursor,
  type QuerySpec,
  searchableFields,
  valueAt,
} from '../query/index.js';
import type { LoadedEntity } from '../registry/index.js';

export { DEFAULT_LIMIT, MAX_LIMIT } from '../query/index.js';

export function planList(layout: LiveLayout, viewer: Viewer, spec: QuerySpec, parent?: { field: string; value: unknown }): ListPlan {
  return planQuery(layout, viewer, spec, parent);
}

export interface DistinctValue {
  /** A number field's values are numbers; any other field's, text (a list joined with commas). */
  value: string | number;
  label: string;
  entityType: string;
}

const RECORD_KEYS = new Set(['id', 'createdAt', 'updatedAt', 'deletedAt']);

/**
 * The distinct values of `field` among `records` (null, absent and '' left out), in the order
 * `sort` gives them: numbers numerically, text in UTF-8 byte order. Pure.
 */
export function distinctValues(entity: LoadedEntity, records: readonly StoredRecord[], field: string): DistinctValue[] {
  const path = RECORD_KEYS.has(field) ? [field] : ['data', field];
  const seen = new Map<string, DistinctValue>();
  for (const r of records) {
    const v = valueAt(r, path);
    if (v === undefined || v === null || v === '') continue;
    const value = typeof v === 'number' ? v : Array.isArray(v) ? v.join(',') : String(v);
    // Keyed by type too: a number and its text are different values.
    const key = `${typeof value}:${value}`;
    if (!seen.has(key)) seen.set(key, { value, label: String(value), entityType: entity.name });
  }
  return [...seen.values()].sort((a, b) => compareValues(a.value, b.value));
}

export interface ListResult {
  records: StoredRecord[];
  pagination: Pagination;
  /** distinct=true: the values of the page. */
  distinct?: DistinctValue[];
}

/**
 * The pagination block. `hasNext` and `nextCursor` come from what lies after the page's last
 * item (read, never computed from page × limit against a total that concurrent writes change).
 */
export function paginationOf(page: number, limit: number, total: number, nextCursor?: string | null): Pagination {
  return {
    page,
    limit,
    total,
    totalPages: Math.ceil(total / limit),
    hasNext: Boolean(nextCursor),
    hasPrev: page > 1,
    nextCursor: nextCursor ?? null,
  };
}

/** The cursor the request brought, verified (signature, then shape); undefined on a first page. */
async function cursorOf(plan: ListPlan, key: Buffer): Promise<QueryCursor | undefined> {
  const text = plan.spec.cursor;
  if (!text) return undefined;
  const cursor = decodeQueryCursor(text, key);
  if (!cursor) throw new BadRequestError('Invalid pagination parameters', { cursor: 'is not a cursor returned by this API (unknown, edited or truncated)' });
  if (cursor.h !== plan.hash) {
    throw new BadRequestError('The cursor belongs to another query', { cursor: 'was returned for another query (filter, sort, search, limit or caller differ)' });
  }
  const expected = plan.kind === 'partition' ? cursor.s !== undefined : cursor.i !== undefined && cursor.s === undefined;
  if (expected) return cursor;
  // The same query may be answered by another path than the page before (an index completed or
  // dropped by a migration meanwhile): in the default order both positions are (createdAt, id).
  const translated = translateCursor(plan, cursor);
  if (!translated) throw new BadRequestError('Invalid pagination parameters', { cursor: 'is not a cursor returned by this API (unknown, edited or truncated)' });
  return translated;
}

/** A cursor of the other path, in default order, as this plan's path continues it; undefined when it is not one. */
function translateCursor(plan: ListPlan, cursor: QueryCursor): QueryCursor | undefined {
  if (!isDefaultOrder(plan.spec.sort) || plan.spec.distinct || plan.kind === 'ids') return undefined;
  if (plan.kind === 'partition' && cursor.i !== undefined && cursor.v?.length === 1 && typeof cursor.v[0] === 'string' && !Number.isNaN(Date.parse(cursor.v[0]))) {
    return { h: cursor.h, p: cursor.p, s: listingSortKey({ createdAt: cursor.v[0], id: cursor.i }) };
  }
  if (plan.kind === 'read-all' && cursor.s !== undefined) {
    const match = /^(\d{13})#(.+)$/.exec(cursor.s);
    if (!match) return undefined;
    return { h: cursor.h, p: cursor.p, v: [new Date(uninvertedMs(match[1])).toISOString()], i: match[2] };
  }
  return undefined;
}

interface Paging {
  plan: ListPlan;
  key: Buffer;
  cursor?: QueryCursor;
  /** Page number of this page. */
  page: number;
}

function nextOf(paging: Paging, position: Omit<QueryCursor, 'h' | 'p'> | undefined): string | null {
  return position ? encodeQueryCursor({ h: paging.plan.hash, p: paging.page + 1, ...position }, paging.key) : null;
}

async function readPartition(layout: LiveLayout, paging: Paging): Promise<ListResult> {
  const { partition } = paging.plan;
  const source = totalSource(layout, paging.plan.base, paging.plan.candidates[0]);
  const { limit } = paging.plan.spec;
  const { page, cursor } = paging;
  let result: PartitionPage;
  let total: number;
  if (cursor?.s) {
    // On write shards the total travels in the cursor from the walk's first page (N Queries saved);
    // on one shard it is read again (one Query beside the page's), exact at every page.
    [result, total] = await Promise.all([pageAfter(layout, partition, cursor.s, limit), cursor.t ?? readCounter(source)]);
  } else if (page === 1) {
    result = await firstPage(layout, source, limit);
    total = result.total ?? 0;
  } else {
    const skipped = await skipEntries(source, (page - 1) * limit);
    total = skipped.total;
    result = skipped.lastSk ? await pageAfter(layout, partition, skipped.lastSk, limit) : { records: [], more: false };
  }
  const next = result.more && result.lastSk ? nextOf(paging, { s: result.lastSk, ...((source.shards ?? 1) > 1 ? { t: total } : {}) }) : null;
  return { records: result.records, pagination: paginationOf(page, limit, total, next) };
}

/** With several indexed equalities, the partition with the fewest copies (their counters read in parallel). */
async function narrowest(layout: LiveLayout, plan: ListPlan): Promise<{ partition: string; answered?: ListPlan['candidates'][number] }> {
  if (plan.candidates.length === 0) return { partition: plan.base };
  if (plan.candidates.length === 1) return { partition: plan.candidates[0].partition, answered: plan.candidates[0] };
  const counts = await readCounters(plan.candidates.map((c) => totalSource(layout, plan.base, c)));
  const best = [...plan.candidates].sort((a, b) => (counts.get(a.partition) ?? 0) - (counts.get(b.partition) ?? 0))[0];
  return { partition: best.partition, answered: best };
}

/**
 * One page of an ordered list held in memory: after the cursor's position (everything strictly
 * after it), else at the page's offset; the next cursor is the position of the page's last item
 * when anything follows it.
 */
function pageOfList<T>(paging: Paging, items: readonly T[], after: (item: T) => boolean, positionOf: (item: T) => Omit<QueryCursor, 'h' | 'p'>): { slice: T[]; next: string | null } {
  const { limit } = paging.plan.spec;
  const start = paging.cursor ? items.findIndex(after) : (paging.page - 1) * limit;
  if (start < 0) return { slice: [], next: null };
  const slice = items.slice(start, start + limit);
  const next = start + limit < items.length && slice.length ? nextOf(paging, positionOf(slice[slice.length - 1])) : null;
  return { slice, next };
}

function finish(entity: LoadedEntity, paging: Paging, matches: StoredRecord[]): ListResult {
  const { plan, cursor, page } = paging;
  const { limit, distinct, sort } = plan.spec;
  if (distinct) {
    const values = distinctValues(entity, matches, distinct);
    // The last value, typed (`v`); a cursor of an earlier version holds its text only (`i`).
    const last = cursor?.v?.length === 1 ? cursor.v[0] : (cursor?.i ?? '');
    const { slice, next } = pageOfList(paging, values, (v) => compareValues(v.value, last) > 0, (v) => ({ v: [v.value], i: v.label }));
    return { records: [], distinct: slice, pagination: paginationOf(page, limit, values.length, next) };
  }
  if (plan.kind === 'ids' && sort.length === 0) {
    // ids= (and a manyToMany child collection) keep the order of the ids unless sort is given.
    const order = new Map((plan.spec.ids ?? []).map((id, i) => [id, i]));
    const lastIndex = cursor?.i !== undefined ? (order.get(cursor.i) ?? -1) : -1;
    const { slice, next } = pageOfList(paging, matches, (r) => (order.get(r.id) ?? -1) > lastIndex, (r) => ({ i: r.id }));
    return { records: slice, pagination: paginationOf(page, limit, matches.length, next) };
  }
  const positioned = matches.map((r) => ({ r, at: positionOf(r, sort) }));
  positioned.sort((a, b) => comparePositions(a.at, b.at, sort));
  const from: Position | undefined = cursor ? { values: cursor.v ?? [], id: cursor.i ?? '' } : undefined;
  const { slice, next } = pageOfList(
    paging,
    positioned,
    (x) => comparePositions(x.at, from!, sort) > 0,
    (x) => ({ v: x.at.values, i: x.at.id }),
  );
  return { records: slice.map((x) => x.r), pagination: paginationOf(page, limit, matches.length, next) };
}

function inMemory(entity: LoadedEntity, plan: ListPlan): (r: StoredRecord) => boolean {
  const searchable = searchableFields(entity);
  return (r) => matchesAll(r, plan.conditions) && matchesSearch(r.data, searchable, plan.spec.words);
}

/**
 * Whether a partial listing copy holds the value at a path: data fields and metadata may be left
 * out, and updatedAt may lag behind the record's (shared/data/items.ts unchangedCopy).
 */
function holds(copy: StoredRecord, path: readonly string[]): boolean {
  if (path[0] === 'data') return Object.prototype.hasOwnProperty.call(copy.data ?? {}, path[1]);
  if (path[0] === 'metadata' || path[0] === 'metas') return copy[path[0]] !== undefined;
  return !(LAGGING_ATTRIBUTES as readonly string[]).includes(path[0]);
}

/**
 * Whether a partial copy's record may match, judged on the values the copy holds: a condition on a
 * value it holds, or the search when it holds every searchable field, can rule it out without
 * fetching the record (copies are written with their record, so they agree).
 */
function mayMatch(entity: LoadedEntity, plan: ListPlan): (copy: StoredRecord) => boolean {
  const searchable = searchableFields(entity);
  return (copy) => {
    if (!matchesAll(copy, plan.conditions.filter((c) => holds(copy, c.field.path)))) return false;
    if (searchable.every((f) => holds(copy, ['data', f])) && !matchesSearch(copy.data, searchable, plan.spec.words)) return false;
    return true;
  };
}

/**
 * Whether DynamoDB may test a condition: not one on a field with a default while a migration
 * still writes defaults into records stored before the field existed (those records hold no
 * value yet, and read as the default: the condition is checked in memory on what they read as).
 */
function pushable(layout: LiveLayout, condition: ListPlan['conditions'][number]): boolean {
  if (layout.settled) return true;
  const path = condition.field.path;
  return !(path.length === 2 && path[0] === 'data' && path[1] in layout.defaults);
}

/** The page a plan answers, read with the layout it was planned on. */
export async function executeList(layout: LiveLayout, plan: ListPlan, visible: (r: StoredRecord) => boolean): Promise<ListResult> {
  const { entity } = layout;
  const key = await deploymentKey('cursor');
  const cursor = await cursorOf(plan, key);
  const paging: Paging = { plan, key, cursor, page: cursor?.p ?? plan.spec.page };
  if (plan.kind === 'empty') return { records: [], ...(plan.spec.distinct ? { distinct: [] } : {}), pagination: paginationOf(paging.page, plan.spec.limit, 0, null) };
  if (plan.kind === 'partition') return readPartition(layout, paging);
  if (plan.kind === 'ids') {
    // No record has an id longer than MAX_ID_LENGTH (and DynamoDB refuses such keys).
    const ids = (plan.spec.ids ?? []).filter((id) => id.length <= MAX_ID_LENGTH);
    const found = await readRecords(layout, ids.map((id) => ({ id, tenantId: plan.tenantId })));
    const records = ids
      .map((id) => found.get(id))
      .filter((record): record is StoredRecord => record !== undefined)
      .filter(visible)
      .filter((r) => (plan.candidates.length ? plan.candidates.every((c) => c.condition || r.data[c.field] === c.value) : true));
    const unique = [...new Map(records.map((r) => [r.id, r])).values()];
    return finish(entity, paging, unique.filter(inMemory(entity, plan)));
  }
  return finish(entity, paging, await readMatches(layout, plan));
}

/**
 * Every record a `partition` or `read-all` plan matches, in listing order: the narrowest partition
 * read to its end (in the key range), the rest of the filter pushed down. `scanned` is told what
 * each Query examined (a bounded read throws from it). The aggregates read their rows with it.
 */
export async function readMatches(layout: LiveLayout, plan: ListPlan, scanned?: (count: number) => void): Promise<StoredRecord[]> {
  const { entity } = layout;
  const { partition, answered } = await narrowest(layout, plan);
  // Search words are matched in memory, page by page as the Queries come back (copies carry no
  // folded text: shared/data/items.ts); only the matches are kept. Partial copies pass the
  // pushed-down filter and are judged on their records (queryAll), so filters, search and sorts on
  // values they left out see the whole record.
  const pushed = buildFilterExpression(plan.conditions.filter((c) => c !== answered?.condition && pushable(layout, c))).pushed;
  return queryAll(layout, partition, { range: plan.keyRange, filter: pushed, keep: inMemory(entity, plan), mayKeep: mayMatch(entity, plan), scanned });
}
