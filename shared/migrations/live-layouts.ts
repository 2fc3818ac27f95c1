/**
 * THE layout loader: the one place a process reads which layout its requests write and read
 * with, and the one place that knows how stale that may be.
 *
 * loadLayouts() answers every entity's live layout as ONE immutable value (LiveLayouts: the time
 * the states were read, and each entity's shared/data/layout.ts LiveLayout), read from the
 * entities' migration states (state.ts: ONE Query of their partition). A service loads it once per
 * request, at its edge, and passes it down: the keys, items, transactions, plans and reads of
 * shared/data/ and shared/query/ take it as a parameter and read nothing else.
 *
 * The loader lives here, above shared/data/, because it reads the migrations' states: the value
 * travels up to the services as its answer and down to data as their argument, so no information
 * flows against an import arrow. What it keeps between calls (the states read last, and the value
 * made of them) is private to this module.
 *
 * The refresh rule: the first call of a process waits for the states (a cold start serves no
 * request on a layout it has not read); later calls answer what was read, and once it is older
 * than REFRESH_MS read again in the background; a state older than MAX_STALE_MS is never served (a
 * container idle for a while reads first). A state a few seconds old is safe: an index becomes
 * readable only after it is complete, and writes maintain the target from the moment the deploy
 * recorded it, before this code served anything; the deploy-time job starts its pass only once
 * every write plans on a target recorded after it began (functions/migration-job).
 */
import { buildLayout, definitionLayout, type LiveLayout } from '../data/layout.js';
import { uniqueFields } from '../data/index.js';
import type { LoadedEntity } from '../registry/index.js';
import { layoutHash, layoutOf, shardsOf, uniqueBuildingOf, type Layout, type Target } from './layout.js';
import { readStates, type MigrationState } from './state.js';

/** Every entity's live layout as read at one time. */
export interface LiveLayouts {
  /** When the states were read (epoch ms; the start of the read). */
  readonly readAt: number;
  /** The entity's layout: its recorded migration state's, or its definition's when it has none. */
  of(entity: LoadedEntity): LiveLayout;
}

/** How long a process serves migration states before reading them again. */
export const REFRESH_MS = 5_000;
/** The oldest state a write may plan on (the deploy-time job waits longer than this before its pass). */
export const MAX_STALE_MS = 20_000;

/** Shard counts whose change events may still be read: the target's, a kept one, retired ones within the events' retention. */
export function eventShardsOf(target: Target, nowMs: number): number[] {
  const retired = [...(target.retiredShards ?? []), ...(target.eventsRetired ?? []).filter((r) => Date.parse(r.until) > nowMs).map((r) => r.shards)];
  return [...new Set([shardsOf(target.layout), ...(target.keptShards !== undefined ? [target.keptShards] : []), ...retired])];
}

const ownLayouts = new WeakMap<LoadedEntity, Map<number, { layout: Layout; hash: string }>>();

/**
 * This process's definition of the entity as a layout, and its hash (once per definition and
 * recorded shard count: an auto entity's definition takes the count recorded).
 */
function ownLayout(entity: LoadedEntity, currentShards: number): { layout: Layout; hash: string } {
  let byShards = ownLayouts.get(entity);
  if (!byShards) ownLayouts.set(entity, (byShards = new Map()));
  let found = byShards.get(currentShards);
  if (!found) {
    const layout = layoutOf(entity, currentShards);
    found = { layout, hash: layoutHash(layout) };
    byShards.set(currentShards, found);
  }
  return found;
}

/**
 * The layout an entity is served with under a migration state: the indexes, shard counts and
 * unique fields being built of the state's target (what every process maintains alike, whatever
 * code it runs), and the
 * defaults and fields of this process's own definition (what it reads records as). The runner
 * writes with the layout of the state it runs.
 */
export function layoutOfState(state: MigrationState, entity: LoadedEntity, readAt = Date.now()): LiveLayout {
  const { target } = state;
  const own = ownLayout(entity, shardsOf(target.layout));
  return buildLayout(
    entity,
    {
      indexes: target.indexes,
      legacy: target.legacy,
      sums: target.sums ?? [],
      defaults: own.layout.defaults,
      fields: own.layout.fields,
      settled: state.state === 'done' && own.hash === target.hash,
      writeShards: shardsOf(target.layout),
      ...(target.keptShards !== undefined ? { keptShards: target.keptShards, shardsReady: target.shardsReady === true } : {}),
      eventShards: eventShardsOf(target, readAt),
      // This definition's unique fields against the target's: one the target does not hold unique
      // yet (a newer definition, before its target is recorded) has no items either.
      uniqueBuilding: uniqueBuildingOf(target, { unique: uniqueFields(entity) }),
    },
    readAt,
  );
}

/** The value loadLayouts answers for these states: each entity's layout made on first use, once. */
function layoutsOf(states: ReadonlyMap<string, MigrationState>, readAt: number): LiveLayouts {
  const made = new WeakMap<LoadedEntity, LiveLayout>();
  return Object.freeze({
    readAt,
    of(entity: LoadedEntity): LiveLayout {
      let layout = made.get(entity);
      if (!layout) {
        const state = states.get(entity.slug);
        layout = state ? layoutOfState(state, entity, readAt) : definitionLayout(entity, readAt);
        made.set(entity, layout);
      }
      return layout;
    },
  });
}

/** The latest revision of each entity's state this process has seen. */
const states = new Map<string, MigrationState>();
/** What loadLayouts answers now (none before the first read). */
let served: LiveLayouts | undefined;
let loadedAt = 0;
let firstLoad: Promise<LiveLayouts> | undefined;

function keep(state: MigrationState): void {
  const known = states.get(state.entity);
  if (!known || known.revision <= state.revision) states.set(state.entity, state);
}

async function loadStates(readAt: number): Promise<LiveLayouts> {
  for (const state of await readStates()) keep(state);
  served = layoutsOf(new Map(states), readAt);
  return served;
}

/**
 * Serves an entity with this state from now on, unless a later revision is served already (a slow
 * read): a state this process has just recorded (prepare.ts) or reached (the runner).
 */
export function serve(state: MigrationState): void {
  keep(state);
  // Before the first read there is nothing to answer yet: that read will bring the others.
  if (served) served = layoutsOf(new Map(states), served.readAt);
}

/** Every entity's live layout, read at most REFRESH_MS ago (see the module comment for the rule). */
export async function loadLayouts(): Promise<LiveLayouts> {
  if (!firstLoad) {
    loadedAt = Date.now();
    firstLoad = loadStates(loadedAt).catch((error: unknown) => {
      firstLoad = undefined;
      throw error;
    });
  }
  const first = await firstLoad;
  const age = Date.now() - loadedAt;
  if (age >= REFRESH_MS) {
    loadedAt = Date.now();
    const refresh = loadStates(loadedAt);
    if (age >= MAX_STALE_MS) {
      await refresh.catch((error: unknown) => {
        loadedAt = 0;
        throw error;
      });
    } else {
      refresh.catch(() => {
        loadedAt = 0;
      });
    }
  }
  return served ?? first;
}
