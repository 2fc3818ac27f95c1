/**
 * Aggregates answered from counters (`meta.source: "counters"`), exact and in time independent of
 * the number of records: which counter items answer a query (pure plans), and reading them.
 * - counterPlan: a count, and sums and averages of fields the entity declares summed
 *   (aggregates.sum), alone or grouped by one enum or boolean field, with no filter or one
 *   equality on an indexed field, from the counters LIST keeps per listing partition.
 * - dayPlan: a count alone per day, week or month of a field counted per day (aggregates.days),
 *   with no filter but a range of whole days, from the day counters of the caller's base partition.
 * Only complete indexes, sums and day counts are read (one a migration still builds is not):
 * until then the same question takes the scan (aggregate.ts).
 */
import { decimalSum, fewValues, readCounterTotals, readDayCounts, totalSource, type CounterTotals, type LiveLayout, type TotalSource } from '../data/index.js';
import { compareValues, type ListPlan } from '../query/index.js';
import type { LoadedEntity } from '../registry/index.js';
import { bucketOf, TOP, type AggregateGroup, type AggregateQuery } from './aggregate-query.js';

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
  const group = countedGroups(layout, plan.base, query.groupBy[0].name);
  return group && { total: totalSource(layout, plan.base), sums, group };
}

/**
 * The groups of an enum or boolean field whose complete index is counted in base partition
 * `base`'s counter items: each value and where its count is read (its listing partition), in the
 * definition's order; undefined for any other field.
 */
export function countedGroups(layout: LiveLayout, base: string, field: string): { field: string; values: { value: unknown; source: TotalSource }[] } | undefined {
  const token = layout.readable.get(field);
  const index = layout.indexes.find((i) => i.token === token);
  const definition = layout.entity.fields[field];
  if (token === undefined || !index?.consolidated || !definition) return undefined;
  const values = fewValues(definition);
  if (!values?.length) return undefined;
  return { field, values: values.map((value) => ({ value, source: totalSource(layout, base, { field, value, token }) })) };
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

/**
 * The day a date range's bound falls on when it is a whole day's edge (00:00:00.000 for a start,
 * 23:59:59.999 for an end; a date field's bounds are days), else undefined.
 */
function wholeDay(bound: string, edge: 'start' | 'end'): string | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(bound)) return bound;
  return bound.slice(10) === (edge === 'start' ? 'T00:00:00.000Z' : 'T23:59:59.999Z') ? bound.slice(0, 10) : undefined;
}

/**
 * Where the day counters answer `query` exactly (pure), undefined when they cannot: a count alone
 * (what an aggregate asking nothing else counts) per `interval` of a field whose complete day
 * counts the layout keeps (readableDays), no grouping, search or condition but a date range on
 * that field made of whole UTC days.
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

/** The groups the counters answer `query` with (counterPlan, then dayPlan), or undefined when they cannot. */
export async function fromCounterItems(entity: LoadedEntity, layout: LiveLayout, plan: ListPlan, query: AggregateQuery): Promise<AggregateGroup[] | undefined> {
  const counters = counterPlan(layout, plan, query);
  const counted = counters && (await fromCounters(entity, counters, query));
  if (counted) return counted;
  const daily = dayPlan(layout, plan, query);
  return daily && (await fromDayCounters(daily, query));
}
