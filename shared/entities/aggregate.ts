/**
 * Aggregates: GET /api/v1/{entity}/aggregate (CONTRACT.md "Aggregates"). count, sum, avg, min
 * and max, grouped by up to two fields and a time bucket, over the records the caller could LIST:
 * the query's filters are parsed by LIST's parser (parseListQuery) and planned by LIST's planner
 * with the caller's viewer, so tenancy, row-level security and soft delete are LIST's, and the
 * rows are read by LIST's read path (list.ts readMatches).
 *
 * Two paths, both exact:
 * - `meta.source: "counters"`: a count, and sums and averages of fields the entity declares summed
 *   (aggregates.sum), alone or grouped by one enum or boolean field, with no filter or one
 *   equality on an indexed field, are read from the counters LIST keeps per listing partition
 *   (written in the same transaction as the record): one Query per counter partition, whatever
 *   the number of records. Only complete indexes and sums count (one a migration still builds
 *   is not read): until then the same question takes the scan.
 * - `meta.source: "scan"`: anything else. The narrowest listing partition is read to its end, and
 *   a read that examines more than AGGREGATE_SCAN_LIMIT items stops with 400 AGGREGATE_TOO_LARGE
 *   (never a partial answer).
 * Either way the cost is the request's X-Request-Cost.
 */
import type { AuthContext } from '../caller.js';
import { config } from '../config.js';
import { decimalSum, fewValues, readCounterTotals, readDayCounts, totalSource, utcDay, type CounterTotals, type LiveLayout, type StoredRecord, type TotalSource } from '../data/index.js';
import { ApiError, BadRequestError } from '../errors.js';
import { loadLayouts } from '../migrations/index.js';
import { compareValues, list, parseListQuery, valueAt, type ListPlan, type QuerySpec } from '../query/index.js';
import { PROTECTED_FIELDS, type LoadedEntity } from '../registry/index.js';
import { canSee, requireOperation, requirePermission, viewerOf } from './access.js';
import { planList, readMatches } from './list.js';

export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/** A string field at most this long may be grouped on (longer text makes a group per record). */
export const MAX_GROUP_TEXT_LENGTH = 200;
export const MAX_GROUP_FIELDS = 2;

/** The aggregate's own parameters; the others are LIST's filters. */
export const AGGREGATE_PARAMETERS = new Set(['count', 'sum', 'avg', 'min', 'max', 'groupBy', 'interval']);

/** LIST parameters about pages and presentation, which an aggregate does not take. */
const PAGE_PARAMETERS = new Set([
  'page', 'limit', 'cursor', 'sort', 'sortBy', 'order', 'sortOrder', 'fields', 'include', 'distinct', 'ids', 'metas', 'child',
  'includeMetadata', 'metadataFields', 'mergeMetadata', 'mergeStrategy', 'replaceMetadata',
]);

type FieldKind = 'number' | 'date' | 'datetime' | 'group';

interface AggregateField {
  name: string;
  path: string[];
  type: string;
}

/** An aggregate's query, parsed against the entity. */
export interface AggregateQuery {
  count: boolean;
  sum: AggregateField[];
  avg: AggregateField[];
  min: AggregateField[];
  max: AggregateField[];
  groupBy: AggregateField[];
  interval?: Interval;
  /** The field the interval buckets (createdAt unless dateField names another). */
  dateField: AggregateField;
  /** LIST's reading of the filters (filter, equality shorthands, search, date range). */
  spec: QuerySpec;
}

export interface AggregateGroup {
  key: Record<string, unknown>;
  count?: number;
  sum?: Record<string, number>;
  avg?: Record<string, number | null>;
  min?: Record<string, unknown>;
  max?: Record<string, unknown>;
}

export interface AggregateResult {
  data: AggregateGroup[];
  meta: { groups: number; source: 'counters' | 'scan' };
}

/** The record's own attributes an aggregate may name, beside the entity's fields. */
const TOP: Record<string, string> = { createdAt: 'datetime', updatedAt: 'datetime' };

function fieldOf(entity: LoadedEntity, name: string): AggregateField | undefined {
  if (Object.prototype.hasOwnProperty.call(TOP, name)) return { name, path: [name], type: TOP[name] };
  const field = Object.prototype.hasOwnProperty.call(entity.fields, name) ? entity.fields[name] : undefined;
  if (!field || (PROTECTED_FIELDS as readonly string[]).includes(name)) return undefined;
  return { name, path: ['data', name], type: field.type };
}

/** Whether a field may be used as `kind`; the reason it may not otherwise. */
function unfit(entity: LoadedEntity, field: AggregateField, kind: FieldKind | 'orderable'): string | undefined {
  if (kind === 'number') return field.type === 'number' ? undefined : 'is not a number field';
  if (kind === 'orderable') return ['number', 'date', 'datetime'].includes(field.type) ? undefined : 'is not a number, date or date-time field';
  if (kind === 'date' || kind === 'datetime') return ['date', 'datetime'].includes(field.type) ? undefined : 'is not a date or date-time field';
  const definition = entity.fields[field.name];
  if (field.type === 'enum' || field.type === 'boolean' || field.type === 'uuid') return undefined;
  if (field.type === 'string' && definition && (definition.references || (definition.maxLength ?? Infinity) <= MAX_GROUP_TEXT_LENGTH)) return undefined;
  return `cannot be grouped on (enum, boolean, reference and string fields of at most ${MAX_GROUP_TEXT_LENGTH} characters can)`;
}

/** The fields of `entity` each use may name: grouped, summed and averaged, bucketed and bounded (min/max take numbers and dates). */
export function aggregatableFields(entity: LoadedEntity): { group: string[]; number: string[]; date: string[] } {
  const names = [...Object.keys(entity.fields), ...Object.keys(TOP)];
  const fit = (kind: FieldKind) => names.filter((name) => { const field = fieldOf(entity, name); return field !== undefined && unfit(entity, field, kind) === undefined; });
  return { group: fit('group'), number: fit('number'), date: fit('date') };
}

function fieldsOf(entity: LoadedEntity, query: Record<string, string>, param: string, kind: FieldKind | 'orderable', details: Record<string, string>): AggregateField[] {
  const out: AggregateField[] = [];
  for (const name of list(query[param])) {
    const field = fieldOf(entity, name);
    const reason = field ? unfit(entity, field, kind) : 'is not a field of this entity';
    if (reason) details[param] = `'${name}' ${reason}`;
    else out.push(field!);
  }
  return out;
}

/**
 * An aggregate query string of `entity` (CONTRACT.md "Aggregates"); 400 INVALID_REQUEST naming
 * the parameter and field that cannot be aggregated that way, LIST's errors for its filters.
 */
export function parseAggregateQuery(entity: LoadedEntity, query: Readonly<Record<string, string>>): AggregateQuery {
  const details: Record<string, string> = {};
  for (const name of Object.keys(query)) {
    if (PAGE_PARAMETERS.has(name) || name.startsWith('includeFields[')) details[name] = 'is not an aggregate parameter (an aggregate answers groups, not pages of records)';
  }
  const countText = query.count;
  if (countText !== undefined && countText !== '' && countText !== '*') details.count = "takes no field: 'count', 'count=' or 'count=*'";
  const sum = fieldsOf(entity, query, 'sum', 'number', details);
  const avg = fieldsOf(entity, query, 'avg', 'number', details);
  const min = fieldsOf(entity, query, 'min', 'orderable', details);
  const max = fieldsOf(entity, query, 'max', 'orderable', details);
  const groupBy = fieldsOf(entity, query, 'groupBy', 'group', details);
  if (list(query.groupBy).length > MAX_GROUP_FIELDS) details.groupBy = `at most ${MAX_GROUP_FIELDS} fields`;
  const interval = query.interval === undefined || query.interval === '' ? undefined : (query.interval as Interval);
  if (interval !== undefined && !INTERVALS.includes(interval)) details.interval = `must be one of ${INTERVALS.join(', ')}`;
  const dateFieldName = query.dateField === undefined || query.dateField === '' ? 'createdAt' : query.dateField;
  const dateField = fieldOf(entity, dateFieldName);
  const dateReason = dateField ? unfit(entity, dateField, 'datetime') : 'is not a field of this entity';
  if (dateReason) details.dateField = `'${dateFieldName}' ${dateReason}`;
  if (Object.keys(details).length) throw new BadRequestError(`Invalid aggregate: ${Object.keys(details).join(', ')}`, details);

  const filters = Object.fromEntries(Object.entries(query).filter(([name]) => !AGGREGATE_PARAMETERS.has(name)));
  const spec = parseListQuery(entity, filters);
  const asked = sum.length + avg.length + min.length + max.length > 0;
  return { count: countText !== undefined || !asked, sum, avg, min, max, groupBy, interval, dateField: dateField!, spec };
}

/** What a GraphQL aggregate asks for, as typed arguments (the REST parameters' values). */
export interface AggregateInput {
  count?: boolean;
  sum?: readonly string[];
  avg?: readonly string[];
  min?: readonly string[];
  max?: readonly string[];
  groupBy?: readonly string[];
  interval?: string;
  dateField?: string;
  /** Field → value; each must equal (LIST's GraphQL filter). */
  filter?: Readonly<Record<string, unknown>>;
  search?: string;
  startDate?: string;
  endDate?: string;
}

/**
 * The aggregate query of typed arguments (GraphQL's): written as the query string REST would
 * take and read by parseAggregateQuery, so both are checked by the same rules and answer the
 * same errors.
 */
export function aggregateQueryOf(entity: LoadedEntity, input: AggregateInput): AggregateQuery {
  const params: Record<string, string> = {};
  if (input.count) params.count = '';
  for (const name of ['sum', 'avg', 'min', 'max', 'groupBy'] as const) {
    if (input[name]?.length) params[name] = input[name].join(',');
  }
  for (const name of ['interval', 'dateField', 'search', 'startDate', 'endDate'] as const) {
    if (input[name] !== undefined) params[name] = input[name];
  }
  const conditions = Object.fromEntries(Object.entries(input.filter ?? {}).filter(([, v]) => v !== undefined));
  if (Object.keys(conditions).length) params.filter = JSON.stringify(conditions);
  return parseAggregateQuery(entity, params);
}

const DAY_MS = 86_400_000;

/** The UTC bucket (YYYY-MM-DD: the day, the ISO week's Monday, the month's first day) of a date or date-time value; null without one. Pure. */
export function bucketOf(value: unknown, interval: Interval): string | null {
  const day = utcDay(value);
  if (day === undefined) return null;
  if (interval === 'day') return day;
  if (interval === 'month') return `${day.slice(0, 7)}-01`;
  const ms = Date.parse(`${day}T00:00:00Z`);
  const sinceMonday = (new Date(ms).getUTCDay() + 6) % 7;
  return new Date(ms - sinceMonday * DAY_MS).toISOString().slice(0, 10);
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

/** Counter partitions an aggregate reads: the total's, and one per value of the grouped field. */
interface CounterPlan {
  total: TotalSource;
  /** Field → the token its sums are kept under: the fields summed or averaged. */
  sums: Map<string, string>;
  /** groupBy: the field and, per value, where its count is read (the records without one: the rest of the total). */
  group?: { field: string; values: { value: unknown; source: TotalSource }[] };
}

/**
 * Where the counters answer `query` exactly (pure), undefined when they cannot: `count`, and
 * `sum` and `avg` of fields whose complete sums the counters keep, no min, max, interval, search
 * or date range; either no grouping, with no condition or one equality a complete index answers
 * (the listing LIST reads, whose total is its counter), or a grouping by one enum or boolean
 * field whose complete index is counted in the base partition, with no condition.
 */
export function counterPlan(layout: LiveLayout, plan: ListPlan, query: AggregateQuery): CounterPlan | undefined {
  if (plan.kind === 'empty' || plan.kind === 'ids') return undefined;
  if (query.min.length + query.max.length > 0 || query.interval) return undefined;
  const sums = new Map<string, string>();
  for (const field of [...query.sum, ...query.avg]) {
    const token = layout.readableSums.get(field.name);
    if (token === undefined) return undefined;
    sums.set(field.name, token);
  }
  if (plan.spec.words.length > 0 || plan.spec.dateRange) return undefined;
  if (query.groupBy.length === 0) {
    if (plan.conditions.length === 0 && plan.candidates.length === 0) return { total: totalSource(layout, plan.base), sums };
    const [candidate] = plan.candidates;
    if (plan.conditions.length === 1 && plan.candidates.length === 1 && candidate.condition === plan.conditions[0]) return { total: totalSource(layout, plan.base, candidate), sums };
    return undefined;
  }
  if (query.groupBy.length !== 1 || plan.conditions.length > 0) return undefined;
  const [field] = query.groupBy;
  const token = layout.readable.get(field.name);
  const index = layout.indexes.find((i) => i.token === token);
  const definition = layout.entity.fields[field.name];
  if (token === undefined || !index?.consolidated || !definition) return undefined;
  const values = fewValues(definition);
  if (!values?.length) return undefined;
  return {
    total: totalSource(layout, plan.base),
    sums,
    group: { field: field.name, values: values.map((value) => ({ value, source: totalSource(layout, plan.base, { field: field.name, value, token }) })) },
  };
}

/** A group as `query` asks it, from its counters' totals (what aggregate() would make of its records). */
function groupOf(key: Record<string, unknown>, totals: CounterTotals, sums: Map<string, string>, query: AggregateQuery): AggregateGroup {
  const out: AggregateGroup = { key };
  const of = (name: string) => totals.sums.get(sums.get(name)!) ?? { sum: 0, n: 0 };
  if (query.count) out.count = totals.count;
  if (query.sum.length) out.sum = Object.fromEntries(query.sum.map((f) => [f.name, of(f.name).sum]));
  if (query.avg.length) out.avg = Object.fromEntries(query.avg.map((f) => { const s = of(f.name); return [f.name, s.n ? s.sum / s.n : null]; }));
  return out;
}

/** `all` less each of `parts`: the counts and sums of the records in none of them. */
function remainder(all: CounterTotals, parts: readonly CounterTotals[]): CounterTotals {
  const less = (whole: number, of: (p: CounterTotals) => number) => decimalSum([whole, ...parts.map((p) => -of(p))]);
  const sums = new Map([...all.sums].map(([token, s]) => [token, { sum: less(s.sum, (p) => p.sums.get(token)?.sum ?? 0), n: less(s.n, (p) => p.sums.get(token)?.n ?? 0) }]));
  return { count: parts.reduce((n, p) => n - p.count, all.count), sums };
}

/**
 * The groups a counter plan reads (groups without records left out, as a scan finds none), sorted
 * by key; undefined when they do not add up to what a scan would show: records of a required field
 * outside its values (kept from an earlier definition) would appear as `null`.
 */
async function fromCounters(entity: LoadedEntity, counters: CounterPlan, query: AggregateQuery): Promise<AggregateGroup[] | undefined> {
  const { total, group, sums } = counters;
  const tokens = [...new Set(sums.values())];
  const read = await readCounterTotals([total, ...(group?.values.map((v) => v.source) ?? [])], tokens);
  const none: CounterTotals = { count: 0, sums: new Map() };
  const all = read.get(total.partition) ?? none;
  if (!group) return [groupOf({}, all, sums, query)];
  const counted = group.values.map(({ value, source }) => ({ key: { [group.field]: value } as Record<string, unknown>, totals: read.get(source.partition) ?? none }));
  const rest = remainder(all, counted.map((g) => g.totals));
  if (rest.count < 0 || (rest.count > 0 && entity.fields[group.field].required)) return undefined;
  return [{ key: { [group.field]: null }, totals: rest }, ...counted]
    .filter((g) => g.totals.count > 0)
    .sort((a, b) => compareValues(a.key[group.field], b.key[group.field]))
    .map((g) => groupOf(g.key, g.totals, sums, query));
}

/** Where a count per day, week or month of a field counted per day is read (dayPlan). */
interface DayPlan {
  /** The caller's base partition (LIST's), read on the layout's read shards. */
  base: string;
  shards: number;
  /** The day counts' token (layout.readableDays). */
  token: string;
  /** The days asked, inclusive (YYYY-MM-DD; absent: unbounded). */
  from?: string;
  to?: string;
  /** Without a date range, records without a value form the `null` bucket: the base's total less those counted per day. */
  total?: TotalSource;
}

/** The day a date range's bound falls on when it is a whole day's edge (00:00:00.000 for a start, 23:59:59.999 for an end; a date field's bounds are days), else undefined. */
function wholeDay(bound: string, edge: 'start' | 'end'): string | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(bound)) return bound;
  return bound.slice(10) === (edge === 'start' ? 'T00:00:00.000Z' : 'T23:59:59.999Z') ? bound.slice(0, 10) : undefined;
}

/**
 * Where the day counters answer `query` exactly (pure), undefined when they cannot: a count alone
 * (what an aggregate asking nothing else counts) per `interval` of a field whose complete day counts the layout keeps (readableDays), no grouping,
 * search or condition but a date range on that field made of whole UTC days.
 */
export function dayPlan(layout: LiveLayout, plan: ListPlan, query: AggregateQuery): DayPlan | undefined {
  if (plan.kind === 'empty' || plan.kind === 'ids' || !query.interval || query.groupBy.length > 0) return undefined;
  if (query.sum.length + query.avg.length + query.min.length + query.max.length > 0 || plan.spec.words.length > 0 || plan.spec.conditions.length > 0) return undefined;
  const token = layout.readableDays.get(query.dateField.name);
  if (token === undefined) return undefined;
  const shards = layout.shards.read;
  const range = plan.spec.dateRange;
  // createdAt and updatedAt are on every record: no `null` bucket to find.
  if (!range) return { base: plan.base, shards, token, ...(Object.prototype.hasOwnProperty.call(TOP, query.dateField.name) ? {} : { total: totalSource(layout, plan.base) }) };
  if (range.field.name !== query.dateField.name) return undefined;
  const from = range.start === undefined ? undefined : wholeDay(range.start, 'start');
  const to = range.end === undefined ? undefined : wholeDay(range.end, 'end');
  if ((range.start !== undefined && from === undefined) || (range.end !== undefined && to === undefined)) return undefined;
  return { base: plan.base, shards, token, from, to };
}

/**
 * The buckets a day plan reads (buckets without records left out, as a scan finds none), sorted by
 * key; undefined when they do not add up (more records counted per day than the base holds).
 */
async function fromDayCounters(daily: DayPlan, query: AggregateQuery): Promise<AggregateGroup[] | undefined> {
  const field = query.dateField.name;
  const [days, totals] = await Promise.all([
    readDayCounts(daily.base, daily.shards, daily.token, { from: daily.from?.slice(0, 7), to: daily.to?.slice(0, 7) }),
    daily.total ? readCounterTotals([daily.total], []) : undefined,
  ]);
  const buckets = new Map<string | null, number>();
  let counted = 0;
  for (const [day, n] of days) {
    if ((daily.from !== undefined && day < daily.from) || (daily.to !== undefined && day > daily.to) || n <= 0) continue;
    const bucket = bucketOf(day, query.interval!);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + n);
    counted += n;
  }
  if (daily.total) {
    const rest = totals!.get(daily.total.partition)!.count - counted;
    if (rest < 0) return undefined;
    if (rest > 0) buckets.set(null, rest);
  }
  return [...buckets]
    .sort(([a], [b]) => compareValues(a, b))
    .map(([bucket, count]) => ({ key: { [field]: bucket }, count }));
}

/**
 * The aggregate of the records of `entity` the caller could LIST, planned by LIST's planner: from
 * the counters when they answer it (counterPlan), else read by LIST's read path, stopping with 400
 * AGGREGATE_TOO_LARGE over AGGREGATE_SCAN_LIMIT items examined.
 */
export async function aggregateRecords(entity: LoadedEntity, auth: AuthContext | undefined, query: AggregateQuery): Promise<AggregateResult> {
  requireOperation(entity, 'list');
  requirePermission(entity, 'read', auth);
  const layout = (await loadLayouts()).of(entity);
  const plan = planList(layout, viewerOf(auth), query.spec);
  const counters = counterPlan(layout, plan, query);
  const counted = counters && (await fromCounters(entity, counters, query));
  if (counted) return { data: counted, meta: { groups: counted.length, source: 'counters' } };
  const daily = dayPlan(layout, plan, query);
  const perDay = daily && (await fromDayCounters(daily, query));
  if (perDay) return { data: perDay, meta: { groups: perDay.length, source: 'counters' } };
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
