/**
 * A QuerySpec + who is asking → the access path (pure). Paths, cheapest first:
 *
 * - `ids`:       ids=… → ONE BatchGetItem of the records (≤ 100), then filter/sort/page in memory.
 * - `partition`: no condition, search, date range, distinct, and the default order (createdAt
 *                desc, id asc) — or exactly one equality on an indexed field: the listing
 *                partition (the field's own partition for the equality) read in order; total from
 *                its counter; a cursor continues after the last sort key (constant cost).
 * - `read-all`:  anything else. The narrowest partition the caller may read (an indexed field's
 *                partition when an equality on one is given; with several, the one whose counter is
 *                smallest) is read to its end with the rest of the filter pushed down as a
 *                FilterExpression (and a date range on createdAt as a key range), then checked,
 *                sorted and paginated in memory; total = number of matches. Cost: O(partition).
 * - `empty`:     a date range whose start is after its end: nothing can match; an empty page
 *                (200), on every date field and every collection, without reading anything.
 */
import type { LiveLayout } from '../data/layout.js';
import { listingPartitionFor, type Viewer } from '../data/listings.js';
import { fieldPartition, invertedTime, MAX_PARTITION_KEY_BYTES } from '../data/partitions.js';
import { shapeHash } from './cursor.js';
import type { Condition } from './filter.js';
import type { QuerySpec } from './params.js';
import { isDefaultOrder } from './sort.js';

export interface Candidate {
  field: string;
  value: unknown;
  /** The index token in the partition's name (shared/migrations/layout.ts). */
  token: string;
  partition: string;
  /** The user's condition this partition answers (none for a child collection's parent key). */
  condition?: Condition;
}

export interface KeyRange {
  /** Inclusive bounds on the listing sort key. */
  lo: string;
  hi: string;
}

export interface ListPlan {
  kind: 'partition' | 'read-all' | 'ids' | 'empty';
  /** The caller's view (before indexed fields). */
  base: string;
  /** Indexed-field partitions that could serve the query (first one for `partition`). */
  candidates: Candidate[];
  /** The partition read by `partition`, and by `read-all` when there is one candidate or none. */
  partition: string;
  keyRange?: KeyRange;
  /** Every condition, date bounds included (checked in memory on every path). */
  conditions: Condition[];
  spec: QuerySpec;
  /** Shape hash that cursors of this query carry. */
  hash: string;
  /** The caller's tenant: where `ids` reads records by id (shared/data/partitions.ts recordKey). */
  tenantId?: string;
}

const MAX_MS = 9_999_999_999_999;

function clampIso(iso: string): string {
  return new Date(Math.min(Math.max(Date.parse(iso), 0), MAX_MS)).toISOString();
}

/** createdAt bounds → the listing sort key range (sk = inverted createdAt # id: later is smaller). */
export function createdAtKeyRange(start?: string, end?: string): KeyRange {
  const lo = end ? `${invertedTime(clampIso(end))}#` : '0000000000000#';
  const hi = start ? `${invertedTime(clampIso(start))}#\uffff` : '9999999999999#\uffff';
  return { lo, hi };
}

/** The plan of a query on the entity of `layout`, as `viewer` sees it (only the layout's complete indexes are read). */
export function planQuery(layout: LiveLayout, viewer: Viewer, spec: QuerySpec, parent?: { field: string; value: unknown }): ListPlan {
  const { entity } = layout;
  const base = listingPartitionFor(entity, viewer);
  const conditions = [...spec.conditions];
  if (spec.dateRange?.start) conditions.push({ field: spec.dateRange.field, op: '$gte', value: spec.dateRange.start });
  if (spec.dateRange?.end) conditions.push({ field: spec.dateRange.field, op: '$lte', value: spec.dateRange.end });

  // Only complete indexes are read: one still being built (or rebuilt) by a migration is not
  // there for the planner, which answers from the base partition with the condition pushed down.
  const indexed = layout.readable;
  const candidates: Candidate[] = [];
  if (parent) {
    const token = indexed.get(parent.field);
    if (token !== undefined) candidates.push({ ...parent, token, partition: fieldPartition(base, token, parent.value) });
    else conditions.push({ field: { name: parent.field, path: ['data', parent.field], type: 'string', sortable: true }, op: '$eq', value: parent.value });
  }
  for (const c of spec.conditions) {
    const name = c.field.path.length === 2 && c.field.path[0] === 'data' ? c.field.path[1] : undefined;
    const token = name === undefined ? undefined : indexed.get(name);
    if (!name || token === undefined || c.op !== '$eq' || c.value === '' || c.value === null) continue;
    if (candidates.some((x) => x.field === name)) continue;
    const partition = fieldPartition(base, token, c.value);
    // A value too long for a key has no partition (no record could be written with it): left to the filter.
    if (Buffer.byteLength(partition) > MAX_PARTITION_KEY_BYTES) continue;
    candidates.push({ field: name, value: c.value, token, partition, condition: c });
  }

  const hash = shapeHash({
    e: entity.slug,
    b: base,
    p: parent ?? null,
    c: conditions.map((c) => [c.field.name, c.op, c.value]),
    w: spec.words,
    s: spec.sort.map((k) => [k.field.name, k.direction]),
    i: spec.ids ?? null,
    d: spec.distinct ?? null,
    l: spec.limit,
  });

  let kind: ListPlan['kind'];
  const range = spec.dateRange;
  if (range?.start && range.end && Date.parse(range.start) > Date.parse(range.end)) kind = 'empty';
  else if (spec.ids) kind = 'ids';
  else {
    const answered = candidates.length === 1 && (candidates[0].condition ? conditions.length === 1 : conditions.length === 0);
    const plain = (conditions.length === 0 && candidates.length === 0) || answered;
    kind = plain && spec.words.length === 0 && !spec.distinct && isDefaultOrder(spec.sort) ? 'partition' : 'read-all';
  }
  const keyRange = kind === 'read-all' && range && range.field.name === 'createdAt' ? createdAtKeyRange(range.start, range.end) : undefined;
  // Bounds clamped to the key's span can still cross (both far outside it): nothing there either.
  if (keyRange && keyRange.lo > keyRange.hi) kind = 'empty';
  return { kind, base, candidates, partition: candidates[0]?.partition ?? base, keyRange, conditions, spec, hash, tenantId: viewer.tenantId };
}
