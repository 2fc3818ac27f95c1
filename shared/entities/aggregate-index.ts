/**
 * Aggregates answered from the listing order (`meta.source: "index"`): every listing partition is
 * sorted by createdAt, so the minimum and maximum of createdAt over the records the caller could
 * list are its oldest and newest copies: one item read at each end of each write shard, whatever
 * the number of records (data/read-pages.ts readListingEnds). With `count`, the listing's counters
 * give the count in the same answer. The listing is the one LIST reads for the caller (no filter,
 * or one equality on a complete index), so tenancy, row-level security and soft delete are LIST's.
 */
import { readCounterTotals, readListingEnds, totalSource, type LiveLayout, type TotalSource } from '../data/index.js';
import type { ListPlan } from '../query/index.js';
import type { AggregateGroup, AggregateQuery } from './aggregate-query.js';

/** The listing an index plan reads the ends of, and where its count is read. */
export interface IndexPlan {
  /** The (logical) listing partition LIST reads for the query, read on the layout's read shards. */
  partition: string;
  shards: number;
  total: TotalSource;
}

/**
 * Where the listing order answers `query` exactly (pure), undefined when it cannot: `min` and
 * `max` of createdAt alone (and `count`), no grouping, time bucket, sum, average, search or date
 * range, and no condition or one equality a complete index answers (LIST's `partition` path).
 */
export function indexPlan(layout: LiveLayout, plan: ListPlan, query: AggregateQuery): IndexPlan | undefined {
  if (plan.kind !== 'partition' || plan.spec.words.length > 0 || plan.spec.dateRange) return undefined;
  if (query.groupBy.length > 0 || query.interval || query.sum.length + query.avg.length > 0) return undefined;
  const bounded = [...query.min, ...query.max];
  if (bounded.length === 0 || bounded.some((f) => f.name !== 'createdAt')) return undefined;
  const [candidate] = plan.candidates;
  if (candidate && !candidate.condition) return undefined;
  return { partition: plan.partition, shards: layout.shards.read, total: candidate ? totalSource(layout, plan.base, candidate) : totalSource(layout, plan.base) };
}

/** The one group an index plan reads: the count (when asked) and createdAt's min and max, null without records. */
export async function fromListingEnds(index: IndexPlan, query: AggregateQuery): Promise<AggregateGroup[]> {
  const [ends, totals] = await Promise.all([readListingEnds(index.partition, index.shards), query.count ? readCounterTotals([index.total], []) : undefined]);
  const group: AggregateGroup = { key: {} };
  if (totals) group.count = totals.get(index.total.partition)!.count;
  if (query.min.length) group.min = { createdAt: ends.oldest ?? null };
  if (query.max.length) group.max = { createdAt: ends.newest ?? null };
  return [group];
}
