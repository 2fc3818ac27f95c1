/**
 * The layout of an entity: what its stored items depend on (access mode and owner views, indexed
 * fields and where they are counted, uniqueness, defaults, the fields kept, searchable fields, soft
 * delete, the rules a stored value must meet), as canonical data with a hash. Pure: no I/O.
 *
 * Two definitions with the same layout store the same items; a start (or deploy) whose layout
 * differs from the one recorded in the database knows what changed (layoutChanges) and plans the
 * migration that takes the stored items there (nextTarget).
 *
 * Indexes are versioned: a listing partition's name carries the index's *token*: the field name
 * for an index that existed when the entity's layout was first recorded (generation 0, the
 * partitions of earlier versions), `<field>@<generation>` for one built since. An index whose
 * identity changes (made indexed again after being dropped, a new default, counted elsewhere) is
 * a new generation, built from the records themselves in partitions nobody has written before, so
 * copies left from an earlier generation can never be read (they are deleted in the background).
 */
import { canonical } from '../canonical-json.js';
import { createHash } from 'node:crypto';
import { consolidatedFields, indexedFields } from '../data/index.js';
import { dayCountedFields, linkKeys, summedFields, writeShardsOf, type FieldDefinition, type LoadedEntity } from '../registry/index.js';

/** What an index is built from: a change of any part is a new generation. */
export interface IndexIdentity {
  field: string;
  /** Counted in its base partition's counter items (enum and boolean fields within a budget). */
  consolidated: boolean;
  /** Records without a value are listed under the default. */
  default?: string | number | boolean;
}

/**
 * What a summed field's counters are built from: a change of any part is a new generation (a
 * record stored before a default was declared reads as the default, so its value must be
 * counted again).
 */
export interface SumIdentity {
  field: string;
  default?: string | number | boolean;
  /** 'day': the records are counted per UTC day of the (date) field instead of its values summed (aggregates.days). */
  by?: 'day';
}

export interface FieldRules {
  type: string;
  required?: boolean;
  maxLength?: number;
  values?: readonly string[];
  min?: number;
  max?: number;
  pattern?: string;
}

export interface Layout {
  access: { public: boolean; shared: boolean };
  softDelete: boolean;
  indexes: IndexIdentity[];
  unique: string[];
  defaults: Record<string, string | number | boolean>;
  /** Data keys a record keeps: the fields and the manyToMany id lists. */
  fields: string[];
  searchable: string[];
  rules: Record<string, FieldRules>;
  /** Write shards of its listings and events; absent: 1 (as layouts recorded before them). */
  writeShards?: number;
  /** Summed number fields (aggregates.sum) and date fields counted per day (aggregates.days, `by: 'day'`); absent: none (as layouts recorded before them). */
  sums?: SumIdentity[];
}

/** A layout's write shards. */
export function shardsOf(layout: Pick<Layout, 'writeShards'>): number {
  return layout.writeShards ?? 1;
}

function isUnique(field: FieldDefinition): boolean {
  return (field as { unique?: boolean }).unique === true;
}

function rulesOf1(field: FieldDefinition): FieldRules {
  return {
    type: field.type,
    required: field.required || undefined,
    maxLength: field.maxLength,
    values: field.values ? [...field.values] : undefined,
    min: field.validation?.min,
    max: field.validation?.max,
    pattern: field.validation?.pattern,
  };
}

const rulesCache = new WeakMap<object, Record<string, FieldRules>>();

/** The rules of the entity's fields (generated fields have none). */
export function rulesOf(entity: LoadedEntity): Record<string, FieldRules> {
  let found = rulesCache.get(entity);
  if (!found) {
    found = Object.fromEntries(Object.keys(entity.fields).filter((n) => !entity.fields[n].generated).map((n) => [n, rulesOf1(entity.fields[n])]));
    rulesCache.set(entity, found);
  }
  return found;
}

export function defaultsOf(entity: LoadedEntity): Record<string, string | number | boolean> {
  return Object.fromEntries(Object.entries(entity.fields).filter(([, f]) => f.default !== undefined).map(([n, f]) => [n, f.default!]));
}

/**
 * The entity's layout as its definition gives it. Its write shards: the number it pins, or for an
 * auto entity (registry writeShardsOf) `currentShards`, the count recorded in the database, which
 * the write-shards controller changes (shard-control.ts) and a start keeps.
 */
export function layoutOf(entity: LoadedEntity, currentShards?: number): Layout {
  const consolidated = consolidatedFields(entity);
  const names = Object.keys(entity.fields).sort();
  const shards = writeShardsOf(entity, currentShards);
  const sums: SumIdentity[] = [
    ...summedFields(entity).map((field) => ({ field, default: entity.fields[field]?.default })),
    ...dayCountedFields(entity).map((field) => ({ field, default: entity.fields[field]?.default, by: 'day' as const })),
  ];
  return {
    ...(shards !== 1 ? { writeShards: shards } : {}),
    ...(sums.length ? { sums } : {}),
    access: { public: entity.access.public, shared: entity.access.shared },
    softDelete: entity.softDelete,
    indexes: indexedFields(entity)
      .sort()
      .map((field) => ({ field, consolidated: consolidated.has(field), default: entity.fields[field].default })),
    unique: names.filter((n) => isUnique(entity.fields[n])),
    defaults: Object.fromEntries(names.filter((n) => entity.fields[n].default !== undefined).map((n) => [n, entity.fields[n].default!])),
    fields: [...new Set([...names, ...linkKeys(entity)])].sort(),
    searchable: names.filter((n) => entity.fields[n].searchable),
    rules: rulesOf(entity),
  };
}

export function layoutHash(layout: Layout): string {
  return createHash('sha256').update(canonical(layout)).digest('hex').slice(0, 16);
}

function sameIndex(a: IndexIdentity, b: IndexIdentity): boolean {
  return canonical(a) === canonical(b);
}

/** One line per difference, in words (the status surfaces show them). */
export function layoutChanges(from: Layout | undefined, to: Layout): string[] {
  if (!from) return [];
  const out: string[] = [];
  if (from.access.public !== to.access.public || from.access.shared !== to.access.shared) out.push(`access changed from ${canonical(from.access)} to ${canonical(to.access)}`);
  if (shardsOf(from) !== shardsOf(to)) out.push(`writeShards changed from ${shardsOf(from)} to ${shardsOf(to)}`);
  if (from.softDelete !== to.softDelete) out.push(`softDelete ${to.softDelete ? 'turned on' : 'turned off'}`);
  for (const index of to.indexes) {
    const before = from.indexes.find((i) => i.field === index.field);
    if (!before) out.push(`index added: ${index.field}`);
    else if (!sameIndex(before, index)) out.push(`index rebuilt: ${index.field} (its default or counting changed)`);
  }
  for (const index of from.indexes) if (!to.indexes.some((i) => i.field === index.field)) out.push(`index dropped: ${index.field}`);
  const what = (sum: SumIdentity) => (sum.by === 'day' ? 'day counts' : 'sum');
  const same = (a: SumIdentity, b: SumIdentity) => a.field === b.field && a.by === b.by;
  for (const sum of to.sums ?? []) {
    const before = (from.sums ?? []).find((s) => same(s, sum));
    if (!before) out.push(`${what(sum)} added: ${sum.field}`);
    else if (canonical(before) !== canonical(sum)) out.push(`${what(sum)} rebuilt: ${sum.field} (its default changed)`);
  }
  for (const sum of from.sums ?? []) if (!(to.sums ?? []).some((s) => same(s, sum))) out.push(`${what(sum)} dropped: ${sum.field}`);
  for (const f of to.unique) if (!from.unique.includes(f)) out.push(`unique added: ${f}`);
  for (const f of from.unique) if (!to.unique.includes(f)) out.push(`unique dropped: ${f}`);
  for (const [f, v] of Object.entries(to.defaults)) if (canonical(from.defaults[f]) !== canonical(v)) out.push(`default of ${f}: ${JSON.stringify(v)}`);
  for (const f of Object.keys(from.defaults)) if (!(f in to.defaults)) out.push(`default of ${f} dropped`);
  for (const f of to.fields) if (!from.fields.includes(f)) out.push(`field added: ${f}`);
  for (const f of from.fields) if (!to.fields.includes(f)) out.push(`field removed: ${f}`);
  if (canonical(from.searchable) !== canonical(to.searchable)) out.push(`searchable fields: ${to.searchable.join(', ') || 'none'}`);
  for (const [f, r] of Object.entries(to.rules)) {
    const before = from.rules[f];
    if (before && canonical(before) !== canonical(r)) out.push(`rules of ${f} changed`);
  }
  return out;
}

/** An index as the database knows it: its identity, the token in its partitions' names, whether complete. */
export interface IndexState extends IndexIdentity {
  token: string;
  /** Every record is listed in its partitions and counted: the planner may read them. */
  ready: boolean;
}

/** A summed field as the database knows it: its identity, the token in its counter attributes' names, whether complete. */
export interface SumState extends SumIdentity {
  token: string;
  /** Every record's value is in the counters: aggregates may read them. */
  ready: boolean;
}

/** The layout a migration takes an entity to, and what writes maintain meanwhile. */
export interface Target {
  layout: Layout;
  hash: string;
  indexes: IndexState[];
  /** Tokens of dropped indexes whose copies may still exist: writes delete them, the runner too. */
  obsolete: IndexState[];
  /**
   * Summed fields (absent: none). A dropped sum's attributes are no longer read nor written; a sum
   * declared again is a new generation, counted from the records by the pass.
   */
  sums?: SumState[];
  /** Tokens of dropped sums whose attributes counter items may still hold: the runner removes them. */
  droppedSums?: string[];
  /** Tokens a record item without `ix` (written before layouts were recorded) is listed under. */
  legacy: string[];
  /** The next generation number to hand out. */
  nextGeneration: number;
  /**
   * Fields removed whose values stored records may still hold: the migration under way purges
   * them. Emptied when a migration finishes; a start that adds one of them again is refused
   * (state.ts refusedChange), as old values would show.
   */
  purging?: string[];
  /**
   * A change of writeShards: the earlier count, whose listings writes keep maintaining (copies and
   * counts) until the purge that follows the pass; readers read it until `shardsReady`.
   */
  keptShards?: number;
  /** The pass has listed every record under the target's shards: readers read those. */
  shardsReady?: boolean;
  /** Earlier shard counts the running pass purges (writes leave their copies, never count them). */
  retiredShards?: number[];
  /** Earlier shard counts whose change events streams still read, until the time given (the events' retention). */
  eventsRetired?: { shards: number; until: string }[];
  /** A purge pass starts no earlier than this (every process reads the target's shards by then). */
  notBefore?: string;
  /**
   * Unique fields whose uniqueness items the pass is still building (made unique since the last
   * finished pass): a record it has not reached may hold any value, so no write may take a new
   * value of such a field until the pass is complete (shared/data/unique-keys.ts).
   */
  uniqueBuilding?: string[];
}

/** The first target of an entity whose stored items predate recorded layouts: generation 0, complete. */
export function adoptedTarget(layout: Layout): Target {
  const indexes = layout.indexes.map((i) => ({ ...i, token: i.field, ready: true }));
  const sums = (layout.sums ?? []).map((s) => ({ ...s, token: s.field, ready: true }));
  return { layout, hash: layoutHash(layout), indexes, obsolete: [], ...(sums.length ? { sums } : {}), legacy: indexes.map((i) => i.token), nextGeneration: 1 };
}

/**
 * The target for `layout` from the current one: an unchanged index keeps its token (and its
 * readiness); a new or changed one gets a new generation, not ready; a dropped one becomes obsolete.
 */
export function nextTarget(current: Target, layout: Layout): Target {
  let generation = current.nextGeneration;
  const obsolete = [...current.obsolete];
  const indexes: IndexState[] = [];
  for (const identity of layout.indexes) {
    const kept = current.indexes.find((i) => sameIndex({ field: i.field, consolidated: i.consolidated, default: i.default }, identity));
    if (kept) indexes.push(kept);
    else indexes.push({ ...identity, token: `${identity.field}@${generation++}`, ready: false });
  }
  for (const index of current.indexes) if (!indexes.some((i) => i.token === index.token)) obsolete.push({ ...index, ready: false });
  const sums: SumState[] = [];
  for (const identity of layout.sums ?? []) {
    const kept = (current.sums ?? []).find((s) => canonical({ field: s.field, default: s.default, by: s.by }) === canonical(identity));
    sums.push(kept ?? { ...identity, token: `${identity.field}@${generation++}`, ready: false });
  }
  const droppedSums = [...(current.droppedSums ?? []), ...(current.sums ?? []).map((s) => s.token).filter((t) => !sums.some((s) => s.token === t))];
  const purging = [...new Set([...(current.purging ?? []), ...current.layout.fields.filter((f) => !layout.fields.includes(f))])].filter((f) => !layout.fields.includes(f)).sort();
  const uniqueBuilding = uniqueBuildingOf(current, layout);
  return {
    layout,
    hash: layoutHash(layout),
    indexes,
    obsolete,
    ...(sums.length ? { sums } : {}),
    ...(droppedSums.length ? { droppedSums } : {}),
    legacy: current.legacy,
    nextGeneration: generation,
    ...(purging.length ? { purging } : {}),
    ...(uniqueBuilding.length ? { uniqueBuilding } : {}),
    ...nextShards(current, layout),
  };
}

/**
 * The unique fields of `layout` whose items are not complete: made unique now (not unique in the
 * current target: records written meanwhile never took an item), or still being built by the
 * current target's unfinished pass.
 */
export function uniqueBuildingOf(current: Target, layout: Pick<Layout, 'unique'>): string[] {
  return layout.unique.filter((f) => !current.layout.unique.includes(f) || (current.uniqueBuilding ?? []).includes(f));
}

/**
 * The shard fields of the target for `layout`. A change of writeShards keeps the count readers
 * read now (the current one, or the one a change under way still reads) maintained and read until
 * the new one is complete; a count in between, never read, is retired with the others.
 */
function nextShards(current: Target, layout: Layout): Pick<Target, 'keptShards' | 'shardsReady' | 'retiredShards' | 'eventsRetired'> {
  const from = shardsOf(current.layout);
  const to = shardsOf(layout);
  const carried = { ...(current.retiredShards?.length ? { retiredShards: current.retiredShards } : {}), ...(current.eventsRetired?.length ? { eventsRetired: current.eventsRetired } : {}) };
  if (from === to) {
    return { ...carried, ...(current.keptShards !== undefined ? { keptShards: current.keptShards, ...(current.shardsReady ? { shardsReady: true } : {}) } : {}) };
  }
  const read = current.keptShards !== undefined && !current.shardsReady ? current.keptShards : from;
  const retired = [...new Set([...(current.retiredShards ?? []), ...[from, current.keptShards].filter((n): n is number => n !== undefined && n !== read && n !== to)])];
  return {
    ...carried,
    ...(retired.length ? { retiredShards: retired } : {}),
    ...(read !== to ? { keptShards: read } : {}),
  };
}

/** Fields `layout` has that `current` still purges (removed, the migration purging them not finished). */
export function readdedWhilePurging(current: Target, layout: Pick<Layout, 'fields'>): string[] {
  return (current.purging ?? []).filter((f) => layout.fields.includes(f));
}

/** Whether `layout` changes the access mode (public, shared) of `from`. */
export function accessChanged(from: Pick<Layout, 'access'>, to: Pick<Layout, 'access'>): boolean {
  return from.access.public !== to.access.public || from.access.shared !== to.access.shared;
}

/** Whether a change of layout needs a pass over the records (anything but searchable fields does). */
export function needsPass(from: Layout, to: Layout): boolean {
  return canonical({ ...from, searchable: [] }) !== canonical({ ...to, searchable: [] });
}

/** Data keys of `data` that the layout no longer keeps. */
export function removedKeys(layout: Pick<Layout, 'fields'>, data: Record<string, unknown>): string[] {
  return Object.keys(data).filter((k) => !layout.fields.includes(k));
}
