/**
 * The live layout of an entity, as ONE immutable value: which index tokens writes maintain and
 * which of them queries may read (complete), the tokens a record item of an earlier version is
 * listed under, the write shards of its listings and events (and, while a change of them is
 * migrated, which count readers read), the defaults a record stored before its field existed
 * reads as, the data keys kept, and whether a filter on a field with a default may be pushed down
 * (settled), and which unique fields' uniqueness items are still being built. A record's copies under a dropped index's token (in its `ix`) are left by its next
 * write, as under any token the layout no longer lists (listings.ts). Pure: no I/O, and no state
 * but what the value carries (consolidatedFields remembers what a definition gives).
 *
 * Every function of this area that builds a key, an item or a transaction of a record, or reads
 * records, takes this value as a parameter and reads nothing else. There are two ways to get one:
 * - the layout loader (shared/migrations/live-layouts.ts loadLayouts), which reads the entities'
 *   migration states, keeps them for a few seconds and knows how stale a process may serve: what
 *   every request path uses;
 * - definitionLayout: the entity as its definition says, every index complete under its own name,
 *   no migration under way: for unit tests and tools that have no database to read.
 * The loader lives in the migrations area, above this one, because it reads their states: the
 * value goes up to the services as the loader's answer and down here as an argument, so the
 * import arrows and the way the layout travels agree.
 */
import { dayCountedFields, summedFields, writeShardsOf, type FieldDefinition, type LoadedEntity } from '../registry/index.js';
import { countAttribute, sumAttribute } from './record-item.js';

/** Marks a value made by buildLayout: a LiveLayout cannot be written as an object literal. */
declare const made: unique symbol;

export interface LiveIndex {
  readonly field: string;
  /** The name its partitions carry: the field (generation 0) or `<field>@<generation>` (shared/migrations/layout.ts). */
  readonly token: string;
  /** Counted in its base partition's counter items (consolidatedFields). */
  readonly consolidated: boolean;
  /** Every record is listed and counted under it: queries may read it. */
  readonly ready: boolean;
}

export interface LiveSum {
  readonly field: string;
  /** The name its counter attributes carry: the field (generation 0) or `<field>@<generation>`, as an index token. */
  readonly token: string;
  /** 'day': its records are counted per UTC day of the field, in day counter items (counters.ts dayItem), instead of its values summed. */
  readonly by?: 'day';
  /** Every record's value is in the counters: aggregates may read them. */
  readonly ready: boolean;
}

/** The shard counts of an entity's listing partitions and change events (shared/data/partitions.ts). */
export interface LayoutShards {
  /** New writes put change events, and list records, under this count. */
  readonly write: number;
  /** Readers read listings under this count: `write`, or the earlier one while a change of it is migrated. */
  readonly read: number;
  /** The counts whose listings writes maintain (copies and counts): the target's, and a kept one while migrated. */
  readonly maintained: readonly number[];
  /** The counts whose change events readers merge. */
  readonly events: readonly number[];
}

export interface LiveLayout {
  readonly [made]: true;
  readonly entity: LoadedEntity;
  /** When the state it shows was read (epoch ms); for definitionLayout, when it was made. */
  readonly readAt: number;
  /** Indexes writes maintain (the migration's target), in order. */
  readonly indexes: readonly LiveIndex[];
  /** Their tokens: a record item's `ix` after a write. */
  readonly tokens: readonly string[];
  /** The complete indexes queries may read: field → token. */
  readonly readable: ReadonlyMap<string, string>;
  /** Tokens a record item without `ix` is listed under. */
  readonly legacy: readonly string[];
  /** Summed fields and fields counted per day that writes maintain in the counters (the migration's target), in order. */
  readonly sums: readonly LiveSum[];
  /** Their tokens: a record item's `sm` after a write. */
  readonly sumTokens: readonly string[];
  /** The complete sums aggregates may read: field → token. */
  readonly readableSums: ReadonlyMap<string, string>;
  /** The complete day counts aggregates may read: field → token. */
  readonly readableDays: ReadonlyMap<string, string>;
  /** Values a record stored before its field existed reads as (field → value). */
  readonly defaults: Readonly<Record<string, unknown>>;
  /** Data keys kept; others (removed fields) are left out when read and dropped when written. */
  readonly fields?: ReadonlySet<string>;
  /**
   * The last migration finished: every stored record holds its defaults, so a condition on a
   * field with a default may be pushed down to DynamoDB (before, it is checked in memory only).
   */
  readonly settled: boolean;
  readonly shards: LayoutShards;
  /**
   * Unique fields whose uniqueness items are not complete (a migration is building them from the
   * stored records): no write may take a new value of these yet (unique-keys.ts uniqueWrites).
   * Every other unique field of the definition is complete: its items say who holds each value.
   */
  readonly uniqueBuilding: ReadonlySet<string>;
}

/** What a layout is made of, as the loader reads it from an entity's migration state (or the definition gives it). */
export interface LayoutParts {
  indexes: readonly LiveIndex[];
  legacy: readonly string[];
  /** Summed fields (default: none). */
  sums?: readonly LiveSum[];
  defaults: Readonly<Record<string, unknown>>;
  fields?: readonly string[];
  settled: boolean;
  /** The target's write shards. */
  writeShards: number;
  /** While a change of writeShards is migrated: the earlier count, maintained, and read until `shardsReady`. */
  keptShards?: number;
  shardsReady?: boolean;
  /** Shard counts whose change events may still be read (default: the write shards alone). */
  eventShards?: readonly number[];
  /** Unique fields whose uniqueness items are not complete (default: none). */
  uniqueBuilding?: readonly string[];
}

/** The shard counts of a layout, from its parts (see LayoutShards). */
function shardsOf(parts: LayoutParts): LayoutShards {
  const write = parts.writeShards;
  const kept = parts.keptShards;
  const migrating = kept !== undefined && kept !== write;
  return Object.freeze({
    write,
    read: kept !== undefined && !parts.shardsReady ? kept : write,
    maintained: Object.freeze(migrating ? [kept, write] : [write]),
    events: Object.freeze([...(parts.eventShards ?? [write])]),
  });
}

/**
 * A layout value from its parts, frozen, with what readers and writers derive from it computed
 * once (tokens, readable indexes, shard counts). The loader's maker: a request gets its layout
 * from the loader (shared/migrations/live-layouts.ts), a test or a tool from definitionLayout.
 */
export function buildLayout(entity: LoadedEntity, parts: LayoutParts, readAt: number): LiveLayout {
  const indexes = Object.freeze(parts.indexes.map((i) => Object.freeze({ field: i.field, token: i.token, consolidated: i.consolidated, ready: i.ready })));
  const readable: ReadonlyMap<string, string> = new Map(indexes.filter((i) => i.ready).map((i) => [i.field, i.token]));
  const sums = Object.freeze((parts.sums ?? []).map((s) => Object.freeze({ field: s.field, token: s.token, ...(s.by ? { by: s.by } : {}), ready: s.ready })));
  const readableOf = (by: LiveSum['by']) => new Map(sums.filter((s) => s.ready && s.by === by).map((s) => [s.field, s.token]));
  const layout: Omit<LiveLayout, typeof made> = {
    entity,
    readAt,
    indexes,
    tokens: Object.freeze(indexes.map((i) => i.token)),
    readable,
    legacy: Object.freeze([...parts.legacy]),
    sums,
    sumTokens: Object.freeze(sums.map((s) => s.token)),
    readableSums: readableOf(undefined),
    readableDays: readableOf('day'),
    defaults: Object.freeze({ ...parts.defaults }),
    ...(parts.fields ? { fields: new Set(parts.fields) } : {}),
    settled: parts.settled,
    shards: shardsOf(parts),
    uniqueBuilding: new Set(parts.uniqueBuilding ?? []),
  };
  return Object.freeze(layout) as LiveLayout;
}

/**
 * The entity as its definition says: its indexed fields complete under their own names
 * (generation 0), its unique fields complete, its write shards, no defaults applied to stored records, nothing migrated. What
 * a unit test or a tool without a database serves an entity with; never a request path (the
 * loader gives those the recorded state).
 */
export function definitionLayout(entity: LoadedEntity, readAt = Date.now()): LiveLayout {
  const consolidated = consolidatedFields(entity);
  const indexes = indexedFields(entity).map((field) => ({ field, token: field, consolidated: consolidated.has(field), ready: true }));
  const sums: LiveSum[] = [
    ...summedFields(entity).map((field) => ({ field, token: field, ready: true })),
    ...dayCountedFields(entity).map((field) => ({ field, token: field, by: 'day' as const, ready: true })),
  ];
  return buildLayout(entity, { indexes, legacy: indexes.map((i) => i.token), sums, defaults: {}, settled: true, writeShards: writeShardsOf(entity) }, readAt);
}

export function indexedFields(entity: Pick<LoadedEntity, 'fields'>): string[] {
  return Object.entries(entity.fields)
    .filter(([, f]) => f.indexed)
    .map(([name]) => name);
}

/** The field an index token lists by (`status`, `status@3`). */
export function tokenField(token: string): string {
  const at = token.indexOf('@');
  return at < 0 ? token : token.slice(0, at);
}

/** Every value a field may hold when there are few (a boolean's two, an enum's), else undefined. */
export function fewValues(field: Pick<FieldDefinition, 'type' | 'values'>): readonly unknown[] | undefined {
  return field.type === 'boolean' ? [false, true] : field.type === 'enum' ? (field.values ?? []) : undefined;
}

/** Budget (bytes) of the field counts and sums a base partition's counter item holds, so it stays under 1 KB. */
const CONSOLIDATED_BUDGET = 600;
/** Bytes allowed for a sum token's generation (`@<n>`) in attribute names. */
const GENERATION_BYTES = 5;
/** Bytes of a stored number: a count (up to 12 digits), a sum (up to 38 significant digits). */
const COUNT_BYTES = 7;
const SUM_BYTES = 21;
const consolidatedCache = new WeakMap<object, Set<string>>();

/** Bytes one count attribute and the sums kept beside it (record-item.ts sumAttribute) take in a counter item. */
function countedBytes(attribute: string, sums: readonly string[]): number {
  const named = (kind: 's' | 'n', field: string) => Buffer.byteLength(sumAttribute(attribute, kind, field)) + GENERATION_BYTES;
  return Buffer.byteLength(attribute) + COUNT_BYTES + sums.reduce((n, f) => n + named('s', f) + SUM_BYTES + named('n', f) + COUNT_BYTES, 0);
}

/**
 * Indexed fields whose partitions are counted in their base partition's counter items: enum and
 * boolean fields (few values), in definition order, while their attributes (each value's count and
 * the sums beside it) fit CONSOLIDATED_BUDGET with the base partition's own sums.
 * A transactional write is billed by the size of every item it touches (at least 1 KB each), so
 * the counter item must stay small: references and free text keep counter items of their own.
 */
export function consolidatedFields(entity: Pick<LoadedEntity, 'fields' | 'aggregates'>): Set<string> {
  let found = consolidatedCache.get(entity);
  if (found) return found;
  found = new Set();
  const sums = summedFields(entity);
  // The base partition's own sums (its `count` was never part of the budget).
  let bytes = countedBytes('count', sums) - countedBytes('count', []);
  for (const [name, f] of Object.entries(entity.fields)) {
    if (!f.indexed) continue;
    const values = fewValues(f);
    if (!values) continue;
    const cost = values.reduce((n: number, v) => n + countedBytes(countAttribute(name, v), sums), 0);
    if (bytes + cost > CONSOLIDATED_BUDGET) continue;
    bytes += cost;
    found.add(name);
  }
  consolidatedCache.set(entity, found);
  return found;
}

/** A record's data as the layout shows it: defaults filled in, removed fields left out (the same object when nothing changes). */
export function upgradeData(layout: LiveLayout, data: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const name in layout.defaults) {
    if (data[name] !== undefined) continue;
    out ??= { ...data };
    out[name] = layout.defaults[name];
  }
  const kept = layout.fields;
  if (kept) {
    for (const key in data) {
      if (kept.has(key)) continue;
      out ??= { ...data };
      delete out[key];
    }
  }
  return out ?? data;
}
