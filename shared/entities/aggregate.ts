/**
 * Aggregates: GET /api/v1/{entity}/aggregate (CONTRACT.md "Aggregates"). count, sum, avg, min
 * and max, grouped by up to two fields and a time bucket, over the records the caller could LIST:
 * the query's filters are parsed by LIST's parser (parseListQuery) and planned by LIST's planner
 * with the caller's viewer, so tenancy, row-level security and soft delete are LIST's, and the
 * rows are read by LIST's read path (list.ts readMatches).
 *
 * The query is parsed in aggregate-query.ts. Two paths, both exact:
 * - `meta.source: "counters"`: counts, sums and averages, and counts per day, that the counters
 *   written with every record answer (aggregate-counters.ts): one Query per counter partition,
 *   whatever the number of records.
 * - `meta.source: "index"`: the min and max of createdAt, from the ends of the caller's listing
 *   (or of each value's, grouped by one enum or boolean field), which is sorted by it
 *   (aggregate-index.ts): one item read per end and write shard.
 * - `meta.source: "scan"`: anything else. The narrowest listing partition is read to its end, and
 *   a read that examines more than AGGREGATE_SCAN_LIMIT items stops with 400 AGGREGATE_TOO_LARGE
 *   (never a partial answer).
 * Either way the cost is the request's X-Request-Cost.
 */
import type { AuthContext } from '../caller.js';
import { config } from '../config.js';
import type { StoredRecord } from '../data/index.js';
import { ApiError } from '../errors.js';
import { loadLayouts } from '../migrations/index.js';
import { compareValues, valueAt } from '../query/index.js';
import type { LoadedEntity } from '../registry/index.js';
import { canSee, requireOperation, requirePermission, viewerOf } from './access.js';
import { fromCounterItems } from './aggregate-counters.js';
import { fromListingOrder } from './aggregate-index.js';
import { bucketOf, type AggregateField, type AggregateGroup, type AggregateQuery } from './aggregate-query.js';
import { planList, readMatches } from './list.js';

export interface AggregateResult {
  data: AggregateGroup[];
  meta: { groups: number; source: 'counters' | 'index' | 'scan' };
}

/** A group value as the answer shows it: the field's value, null when absent. */
function groupValue(record: StoredRecord, field: AggregateField): unknown {
  const value = valueAt(record, field.path);
  return value === undefined || value === '' ? null : value;
}

/** A date-time compares by the instant it names (values may carry offsets), others as they are. */
function orderKey(field: AggregateField, value: unknown): unknown {
  return field.type === 'datetime' && typeof value === 'string' ? Date.parse(value) : value;
}

interface Accumulator {
  key: Record<string, unknown>;
  order: unknown[];
  count: number;
  sums: Map<string, { total: number; n: number }>;
  min: Map<string, unknown>;
  max: Map<string, unknown>;
}

/** The groups of `records` as `query` asks, sorted by key ascending (null first). Pure. */
export function aggregate(records: readonly StoredRecord[], query: AggregateQuery): AggregateGroup[] {
  const groups = new Map<string, Accumulator>();
  const numeric = [...new Map([...query.sum, ...query.avg].map((f) => [f.name, f])).values()];
  for (const record of records) {
    const order = query.groupBy.map((f) => groupValue(record, f));
    const key: Record<string, unknown> = Object.fromEntries(query.groupBy.map((f, i) => [f.name, order[i]]));
    if (query.interval) {
      const bucket = bucketOf(valueAt(record, query.dateField.path), query.interval);
      key[query.dateField.name] = bucket;
      order.push(bucket);
    }
    const id = JSON.stringify(order);
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { key, order, count: 0, sums: new Map(), min: new Map(), max: new Map() }));
    group.count += 1;
    for (const f of numeric) {
      const v = valueAt(record, f.path);
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      const s = group.sums.get(f.name) ?? { total: 0, n: 0 };
      group.sums.set(f.name, { total: s.total + v, n: s.n + 1 });
    }
    for (const [fields, held, sign] of [[query.min, group.min, -1], [query.max, group.max, 1]] as const) {
      for (const f of fields) {
        const v = valueAt(record, f.path);
        if (v === undefined || v === null || v === '') continue;
        const current = held.get(f.name);
        if (current === undefined || Math.sign(compareValues(orderKey(f, v), orderKey(f, current))) === sign) held.set(f.name, v);
      }
    }
  }
  if (groups.size === 0 && query.groupBy.length === 0 && !query.interval) groups.set('[]', { key: {}, order: [], count: 0, sums: new Map(), min: new Map(), max: new Map() });
  const sorted = [...groups.values()].sort((a, b) => {
    for (let i = 0; i < a.order.length; i++) {
      const c = compareValues(a.order[i], b.order[i]);
      if (c !== 0) return c;
    }
    return 0;
  });
  return sorted.map((g) => {
    const out: AggregateGroup = { key: g.key };
    if (query.count) out.count = g.count;
    if (query.sum.length) out.sum = Object.fromEntries(query.sum.map((f) => [f.name, g.sums.get(f.name)?.total ?? 0]));
    if (query.avg.length) out.avg = Object.fromEntries(query.avg.map((f) => { const s = g.sums.get(f.name); return [f.name, s && s.n ? s.total / s.n : null]; }));
    if (query.min.length) out.min = Object.fromEntries(query.min.map((f) => [f.name, g.min.get(f.name) ?? null]));
    if (query.max.length) out.max = Object.fromEntries(query.max.map((f) => [f.name, g.max.get(f.name) ?? null]));
    return out;
  });
}

function tooLarge(limit: number): ApiError {
  return ApiError.of('AGGREGATE_TOO_LARGE', `The aggregate would read more than ${limit} records; narrow it with filters`, {
    details: {
      limit,
      hint: 'narrow the records read: an equality on an indexed field (its own listing is read) or a createdAt date range (startDate, endDate); or ask a count (and sums or averages of the fields the entity declares summed) alone, grouped by at most one indexed enum or boolean field, with no filter or one equality on an indexed field: it is read from counters, whatever the number of records; AGGREGATE_SCAN_LIMIT sets the limit',
    },
  });
}
/**
 * The aggregate of the records of `entity` the caller could LIST, planned by LIST's planner: from
 * the counters when they answer it (aggregate-counters.ts), else from the listing order
 * (aggregate-index.ts), else read by LIST's read path, stopping with 400
 * AGGREGATE_TOO_LARGE over AGGREGATE_SCAN_LIMIT items examined.
 */
export async function aggregateRecords(entity: LoadedEntity, auth: AuthContext | undefined, query: AggregateQuery): Promise<AggregateResult> {
  requireOperation(entity, 'list');
  requirePermission(entity, 'read', auth);
  const layout = (await loadLayouts()).of(entity);
  const plan = planList(layout, viewerOf(auth), query.spec);
  const counted = await fromCounterItems(entity, layout, plan, query);
  if (counted) return { data: counted, meta: { groups: counted.length, source: 'counters' } };
  const ended = await fromListingOrder(layout, plan, query);
  if (ended) return { data: ended, meta: { groups: ended.length, source: 'index' } };
  const limit = config().aggregateScanLimit;
  let scanned = 0;
  const count = (n: number) => {
    scanned += n;
    if (scanned > limit) throw tooLarge(limit);
  };
  const matches = plan.kind === 'empty' ? [] : await readMatches(layout, plan, count);
  // The listing the plan read holds only what the caller may see; checked again on each row.
  const data = aggregate(matches.filter((r) => canSee(entity, r, auth)), query);
  return { data, meta: { groups: data.length, source: 'scan' } };
}
