/**
 * Aggregates answered from the listing order (`meta.source: "index"`): every listing partition is
 * sorted by createdAt, so the minimum and maximum of createdAt over the records the caller could
 * list are its oldest and newest copies: one item read at each end of each write shard, whatever
 * the number of records (data/read-pages.ts readListingEnds). With `count`, the listing's counters
 * give the count in the same answer. The listing is the one LIST reads for the caller (no filter,
 * or one equality on a complete index), so tenancy, row-level security and soft delete are LIST's.
 * Grouped by one enum or boolean field counted in the caller's base partition, each value's own
 * listing gives its group; the records with no value are in none of them, so when the counters say
 * there are some (the `null` group) the question is left to the scan.
 */
import { readCounterTotals, readListingEnds, totalSource, type LiveLayout, type TotalSource } from '../data/index.js';
import { compareValues, type ListPlan } from '../query/index.js';
import { countedGroups } from './aggregate-counters.js';
import type { AggregateGroup, AggregateQuery } from './aggregate-query.js';

/** One group of an index plan: the listing whose two ends answer it. */
export interface IndexGroup {
  key: Record<string, unknown>;
  /** The (logical) listing partition, read on the layout's read shards. */
  partition: string;
  /** Where its count is read. */
  total: TotalSource;
}

/** The listings an index plan reads the ends of, and where their counts are read. */
export interface IndexPlan {
  shards: number;
  /** Sorted by key, as the answer's groups. */
  groups: IndexGroup[];
  /** With a grouping: the caller's whole listing, whose count the groups' must add up to. */
  whole?: TotalSource;
}

/**
 * Where the listing order answers `query` exactly (pure), undefined when it cannot: `min` and
 * `max` of createdAt alone (and `count`), no time bucket, sum, average, search or date range; and
 * either no grouping, with no condition or one equality a complete index answers (LIST's
 * `partition` path), or a grouping by one enum or boolean field whose complete index is counted in
 * the base partition, with no condition.
 */
export function indexPlan(layout: LiveLayout, plan: ListPlan, query: AggregateQuery): IndexPlan | undefined {
  if (plan.kind !== 'partition' || plan.spec.words.length > 0 || plan.spec.dateRange) return undefined;
  if (query.groupBy.length > 1 || query.interval || query.sum.length + query.avg.length > 0) return undefined;
  const bounded = [...query.min, ...query.max];
  if (bounded.length === 0 || bounded.some((f) => f.name !== 'createdAt')) return undefined;
  const shards = layout.shards.read;
  const [candidate] = plan.candidates;
  if (query.groupBy.length === 0) {
    if (candidate && !candidate.condition) return undefined;
    const total = candidate ? totalSource(layout, plan.base, candidate) : totalSource(layout, plan.base);
    return { shards, groups: [{ key: {}, partition: plan.partition, total }] };
  }
  if (plan.conditions.length > 0 || candidate) return undefined;
  const counted = countedGroups(layout, plan.base, query.groupBy[0].name);
  if (!counted) return undefined;
  const groups = [...counted.values]
    .sort((a, b) => compareValues(a.value, b.value))
    .map(({ value, source }) => ({ key: { [counted.field]: value }, partition: source.partition, total: source }));
  return { shards, groups, whole: totalSource(layout, plan.base) };
}

/**
 * The groups an index plan reads: the count (when asked) and createdAt's min and max, null without
 * records; grouped, the groups without records are left out (as a scan finds none), and undefined
 * when the counters show records in no group (the `null` group, which no listing of a value holds).
 */
export async function fromListingEnds(index: IndexPlan, query: AggregateQuery): Promise<AggregateGroup[] | undefined> {
  const sources = [...index.groups.map((g) => g.total), ...(index.whole ? [index.whole] : [])];
  const [ends, totals] = await Promise.all([
    Promise.all(index.groups.map((g) => readListingEnds(g.partition, index.shards))),
    query.count || index.whole ? readCounterTotals(sources, []) : undefined,
  ]);
  const countOf = (source: TotalSource) => totals!.get(source.partition)!.count;
  if (index.whole && countOf(index.whole) !== index.groups.reduce((n, g) => n + countOf(g.total), 0)) return undefined;
  const out: AggregateGroup[] = [];
  index.groups.forEach((g, i) => {
    const { oldest, newest } = ends[i];
    if (index.whole && oldest === undefined) return;
    const group: AggregateGroup = { key: g.key };
    if (query.count) group.count = countOf(g.total);
    if (query.min.length) group.min = { createdAt: oldest ?? null };
    if (query.max.length) group.max = { createdAt: newest ?? null };
    out.push(group);
  });
  return out;
}

/** The groups the listing order answers `query` with (indexPlan), or undefined when it cannot. */
export async function fromListingOrder(layout: LiveLayout, plan: ListPlan, query: AggregateQuery): Promise<AggregateGroup[] | undefined> {
  const index = indexPlan(layout, plan, query);
  return index && (await fromListingEnds(index, query));
}
