/**
 * The layout this process serves with, per entity: which index tokens writes maintain, which of
 * them queries may read (complete), which dropped ones writes still clean up, the defaults applied
 * to records stored before their field existed, and the data keys kept. Set from the migration
 * state items (shared/migrations/state.ts); pure lookups, no I/O. It lives in the data area
 * because the writes and reads of shared/data/records-keys.ts follow it; migrations only set it.
 *
 * An entity with no state set is served as its definition says, every index complete under its
 * own name (generation 0): what a process that never loaded migration states (a unit test, a
 * tool) expects.
 */
import type { LoadedEntity } from '../registry/index.js';

export interface LiveIndex {
  field: string;
  token: string;
  consolidated: boolean;
  ready: boolean;
}

export interface LiveLayout {
  /** Indexes writes maintain (the migration's target). */
  indexes: LiveIndex[];
  /** Tokens of dropped indexes: writes delete a record's copies there, never count them. */
  obsolete: string[];
  /** Tokens a record item without `ix` is listed under. */
  legacy: string[];
  defaults: Record<string, unknown>;
  /** Data keys kept; others (removed fields) are left out when read and dropped when written. */
  fields?: ReadonlySet<string>;
  /**
   * The last migration finished: every stored record holds its defaults, so a condition on a
   * field with a default may be pushed down to DynamoDB (before, it is checked in memory only).
   */
  settled: boolean;
  /** The write shards new writes list records and put events under (shared/data/records-keys.ts). */
  writeShards?: number;
  /**
   * While a change of writeShards is migrated: the earlier shard count, whose listings writes
   * still maintain (copies and counts), and which readers read until `shardsReady`.
   */
  keptShards?: number;
  /** Readers read the listings of `writeShards` (else `keptShards`). */
  shardsReady?: boolean;
  /** Shard counts whose change events may still be read (the stream merges them all). */
  eventShards?: number[];
}

const live = new Map<string, LiveLayout>();

/** Sets (or, with undefined, forgets) the layout an entity is served with. */
export function setLiveLayout(slug: string, layout: LiveLayout | undefined): void {
  if (layout) live.set(slug, layout);
  else live.delete(slug);
}

/** The layout state set for `entity`, if any (shared/data/records-keys.ts layoutFor falls back to the definition). */
export function liveLayout(entity: Pick<LoadedEntity, 'slug'>): LiveLayout | undefined {
  return live.get(entity.slug);
}

/** Whether a state was set for this entity slug. */
export function hasLiveLayout(slug: string): boolean {
  return live.has(slug);
}

/** Every state set (for status and tests). */
export function liveSlugs(): string[] {
  return [...live.keys()];
}

/** A record read from the database, as the current layout shows it: defaults filled in, removed fields left out. */
export function upgradeData(slug: string | undefined, data: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const layout = slug === undefined ? undefined : live.get(slug);
  if (!layout || !data) return data;
  let out: Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(layout.defaults)) {
    if (data[name] !== undefined) continue;
    out ??= { ...data };
    out[name] = value;
  }
  if (layout.fields) {
    for (const key of Object.keys(data)) {
      if (layout.fields.has(key)) continue;
      out ??= { ...data };
      delete out[key];
    }
  }
  return out ?? data;
}
