/**
 * The migration state of each entity, kept in the records table beside the records:
 *
 * - state:   pk `#migrations` / sk `<slug>` — {kind: 'migration', entity, target (shared/migrations/layout.ts
 *            Target: the layout, its hash, the index tokens), from (the layout before), changes (in
 *            words), state (pending | running | done | failed), run (incremented by each new target),
 *            segments (one per parallel Scan segment: the key to continue from, done), processed,
 *            total, startedAt, endedAt, error, revision (guards concurrent changes of the target)}
 * - report:  pk `#migrations#<slug>` / sk `<run>#<kind>#<recordId>#<field>` — one item per record
 *            the run lists (a duplicate of a unique value, a value a tightened rule refuses); written
 *            idempotently, so a resumed segment that meets a record again lists it once.
 *
 * prepareEntity (at `npm start`, or the deploy's custom resource) compares the entity's definition
 * with the recorded target and, if it differs, records the new target as `pending`: from then on
 * every write maintains it (shared/data/live-layout.ts) and the runner (runner.ts) completes it.
 */
import { GetCommand, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, setLiveLayout, tableName, type LiveLayout } from '../data/index.js';
import { findEntity, isRegistryLoaded, type LoadedEntity } from '../registry/index.js';
import { accessChanged, adoptedTarget, layoutChanges, layoutHash, layoutOf, needsPass, nextTarget, readdedWhilePurging, shardsOf, type Layout, type Target } from './layout.js';

export const STATE_PK = '#migrations';

export type MigrationPhase = 'pending' | 'running' | 'done' | 'failed';

export interface SegmentState {
  /** The Scan's LastEvaluatedKey to continue from (none: from the start). */
  next?: Record<string, unknown>;
  done: boolean;
}

export interface MigrationState {
  entity: string;
  target: Target;
  from?: { hash: string; layout: Layout };
  changes: string[];
  state: MigrationPhase;
  run: number;
  segments: SegmentState[];
  processed: number;
  total?: number;
  startedAt?: string;
  endedAt?: string;
  error?: string;
  revision: number;
}

/** Parallel Scan segments of a run. */
export const DEFAULT_SEGMENTS = 4;

export function stateKey(slug: string): { pk: string; sk: string } {
  return { pk: STATE_PK, sk: slug };
}

export function reportPartition(slug: string): string {
  return `${STATE_PK}#${slug}`;
}

function fromStateItem(item: Record<string, unknown>): MigrationState {
  const { pk: _pk, sk: _sk, kind: _kind, ...state } = item;
  return state as unknown as MigrationState;
}

export async function readState(slug: string): Promise<MigrationState | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName('records'), Key: stateKey(slug), ConsistentRead: true }));
  return Item ? fromStateItem(Item) : undefined;
}

/** Every entity's state: ONE Query (what a process loads when it starts, and refreshes). */
export async function readStates(): Promise<MigrationState[]> {
  const out: MigrationState[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName('records'),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': STATE_PK },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    out.push(...(page.Items ?? []).map(fromStateItem));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** Writes a state if its revision is still `expected` (none: if no state exists). false: someone else changed it. */
export async function writeState(state: MigrationState, expected: number | undefined): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName('records'),
        Item: { ...stateKey(state.entity), kind: 'migration', ...state },
        ConditionExpression: expected === undefined ? 'attribute_not_exists(pk)' : 'revision = :revision',
        ...(expected === undefined ? {} : { ExpressionAttributeValues: { ':revision': expected } }),
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * The layout a process serves an entity with: the indexes of its migration state (what every
 * process maintains alike, whatever code it runs), and the defaults and fields of this process's
 * own definition (what it reads records as; a definition it does not know leaves records as stored).
 */
export function liveLayoutOf(state: MigrationState, entity: LoadedEntity | undefined = registered(state.entity)): LiveLayout {
  const { target } = state;
  const own = entity ? layoutOf(entity) : undefined;
  return {
    indexes: target.indexes.map((i) => ({ field: i.field, token: i.token, consolidated: i.consolidated, ready: i.ready })),
    obsolete: target.obsolete.map((i) => i.token),
    legacy: target.legacy,
    defaults: own ? own.defaults : target.layout.defaults,
    ...(own ? { fields: new Set(own.fields) } : {}),
    settled: state.state === 'done' && (!own || layoutHash(own) === target.hash),
    writeShards: shardsOf(target.layout),
    ...(target.keptShards !== undefined ? { keptShards: target.keptShards, shardsReady: target.shardsReady === true } : {}),
    eventShards: eventShardsOf(target, Date.now()),
  };
}

/** Shard counts whose change events may still be read: the target's, a kept one, retired ones within the events' retention. */
export function eventShardsOf(target: Target, nowMs: number): number[] {
  const retired = [...(target.retiredShards ?? []), ...(target.eventsRetired ?? []).filter((r) => Date.parse(r.until) > nowMs).map((r) => r.shards)];
  return [...new Set([shardsOf(target.layout), ...(target.keptShards !== undefined ? [target.keptShards] : []), ...retired])];
}

function registered(slug: string): LoadedEntity | undefined {
  return isRegistryLoaded() ? findEntity(slug) : undefined;
}

const served = new Map<string, number>();

/** Serves an entity with this state, unless a later revision is served already (a slow read). */
export function serve(state: MigrationState): void {
  if ((served.get(state.entity) ?? -1) > state.revision) return;
  served.set(state.entity, state.revision);
  setLiveLayout(state.entity, liveLayoutOf(state));
}

/** How long a process serves migration states before reading them again. */
export const REFRESH_MS = 5_000;
/** The oldest state a write may plan on (the deploy-time job waits longer than this before its pass). */
export const MAX_STALE_MS = 20_000;
let loadedAt = 0;
let firstLoad: Promise<void> | undefined;

async function loadStates(): Promise<void> {
  for (const state of await readStates()) serve(state);
}

/**
 * Loads every entity's migration state (ONE Query) when this process has none or they are older
 * than REFRESH_MS: the first call waits (a cold start serves no request on a layout it has not
 * read), later ones refresh in the background (a state a few seconds old is safe: an index
 * becomes readable only after it is complete, and writes maintain the target from the moment
 * the deploy recorded it, before this code served anything).
 */
export async function ensureLayouts(): Promise<void> {
  if (!firstLoad) {
    loadedAt = Date.now();
    firstLoad = loadStates().catch((error: unknown) => {
      firstLoad = undefined;
      throw error;
    });
  }
  await firstLoad;
  const age = Date.now() - loadedAt;
  if (age < REFRESH_MS) return;
  loadedAt = Date.now();
  const refresh = loadStates();
  // A state older than MAX_STALE_MS is never served (a container idle for a while reads first):
  // the deploy-time job starts its pass only once every write uses a target recorded after it began.
  if (age >= MAX_STALE_MS) {
    await refresh.catch((error: unknown) => {
      loadedAt = 0;
      throw error;
    });
    return;
  }
  refresh.catch(() => {
    loadedAt = 0;
  });
}

/**
 * A definition change no migration carries out: the start (or deploy) that brings it is refused,
 * before anything is recorded, with what to do instead.
 */
export class UnsupportedChangeError extends Error {
  constructor(
    readonly entity: string,
    reason: string,
  ) {
    super(`Entity ${entity}: ${reason}`);
    this.name = 'UnsupportedChangeError';
  }
}

/** Whether the entity has any stored record (live or soft-deleted): a Scan that stops at the first. */
export async function hasRecords(entity: Pick<LoadedEntity, 'slug'>): Promise<boolean> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: tableName('records'),
        FilterExpression: '#kind = :record AND #entity = :entity',
        ExpressionAttributeNames: { '#kind': 'kind', '#entity': 'entity' },
        ExpressionAttributeValues: { ':record': 'record', ':entity': entity.slug },
        ProjectionExpression: 'pk',
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    if ((page.Count ?? 0) > 0) return true;
    start = page.LastEvaluatedKey;
  } while (start);
  return false;
}

/**
 * Why the change from the recorded target to `layout` cannot be made (none: it can):
 * - the access mode (public, shared) of an entity with stored records: its records, listings and
 *   counters live in partitions named by the access mode (a public entity's global partition, a
 *   private one's tenant and owner partitions), which no migration moves;
 * - a field added again while the migration that purges its earlier values has not finished:
 *   records it has not reached yet would show those values under the new field.
 */
export async function refusedChange(entity: LoadedEntity, current: MigrationState, layout: Layout = layoutOf(entity)): Promise<string | undefined> {
  const readded = readdedWhilePurging(current.target, layout);
  if (readded.length) {
    const progress = `${current.processed} of ${current.total ?? '?'} records`;
    return (
      `${readded.map((f) => `'${f}'`).join(', ')} ${readded.length > 1 ? 'were' : 'was'} removed, and the migration purging the values stored before has not finished (run ${current.run}, ${progress}): ` +
      `records it has not reached would show those values again. Start without ${readded.length > 1 ? 'them' : 'it'} until the migration is done (\`npm run migrate\` shows it; \`npm run migrate -- --wait\` with no server running completes it), then add ${readded.length > 1 ? 'them' : 'it'} again.`
    );
  }
  // (A state recorded `failed` by an earlier version, which refused an access change that way,
  // leaves the records at the access of the layout before it.)
  const stored = current.state === 'failed' && current.from ? current.from.layout : current.target.layout;
  // A public entity's records stand in no listing (their keys do not depend on the shards): the
  // migration lists them under the new count. A private or shared one's stand in their tenant's.
  if (!layout.access.public && shardsOf(stored) !== shardsOf(layout) && (await hasRecords(entity))) {
    return (
      `changing writeShards from ${shardsOf(stored)} to ${shardsOf(layout)} is not supported while records are stored: a ${describeAccess(layout.access)} entity's records stand in their tenant's listing, under partition keys named by their shard, and no migration moves them (a public entity's are migrated). ` +
      `Declare writeShards: ${shardsOf(stored)}; to change it, export the records (\`npm run admin -- export ${entity.slug}\`, per tenant), delete them, change writeShards, then import them again (\`npm run admin -- import ${entity.slug}\`).`
    );
  }
  if (accessChanged(stored, layout) && (await hasRecords(entity))) {
    const was = describeAccess(stored.access);
    return (
      `changing access from ${was} to ${describeAccess(layout.access)} is not supported while records are stored: their listings and counts are kept in partitions named by the access mode, and no migration moves them. ` +
      `Restore access to ${was}; to change it, export the records (\`npm run admin -- export ${entity.slug}\`, per tenant), delete them, change access, then import them again (\`npm run admin -- import ${entity.slug}\`).`
    );
  }
  return undefined;
}

function describeAccess(access: Layout['access']): string {
  return access.public ? 'public' : access.shared ? 'shared' : 'private (owner views)';
}

/** Throws UnsupportedChangeError when the entity's definition brings a change no migration makes (nothing recorded). */
export async function checkEntity(entity: LoadedEntity): Promise<void> {
  const current = await readState(entity.slug);
  if (!current) return;
  const layout = layoutOf(entity);
  if (current.target.hash === adoptedTarget(layout).hash) return;
  const refused = await refusedChange(entity, current, layout);
  if (refused) throw new UnsupportedChangeError(entity.slug, refused);
}

/**
 * Records the entity's definition as its migration target when it differs from the recorded one
 * (idempotent; safe from several processes at once: the state's revision guards the write), and
 * serves it. An entity seen for the first time is adopted as it stands: its stored items were
 * written by this definition, complete, with nothing to migrate.
 */
export async function prepareEntity(entity: LoadedEntity, segments = DEFAULT_SEGMENTS): Promise<MigrationState> {
  for (;;) {
    const current = await readState(entity.slug);
    const layout = layoutOf(entity);
    if (!current) {
      const target = adoptedTarget(layout);
      const now = new Date().toISOString();
      const state: MigrationState = { entity: entity.slug, target, changes: [], state: 'done', run: 0, segments: [], processed: 0, total: 0, startedAt: now, endedAt: now, revision: 1 };
      if (await writeState(state, undefined)) {
        serve(state);
        return state;
      }
      continue;
    }
    if (current.target.hash === adoptedTarget(layout).hash) {
      serve(current);
      return current;
    }
    const refused = await refusedChange(entity, current, layout);
    if (refused) throw new UnsupportedChangeError(entity.slug, refused);
    const target = nextTarget(current.target, layout);
    const changes = layoutChanges(current.target.layout, layout);
    // A pass under way is never cut short: its indexes are not complete, its purges not done.
    const pass = needsPass(current.target.layout, layout) || current.state !== 'done';
    const now = new Date().toISOString();
    const state: MigrationState = {
      entity: entity.slug,
      target,
      from: { hash: current.target.hash, layout: current.target.layout },
      changes,
      state: pass ? 'pending' : 'done',
      run: current.run + 1,
      segments: Array.from({ length: segments }, () => ({ done: false })),
      processed: 0,
      ...(pass ? {} : { total: 0, startedAt: now, endedAt: now }),
      revision: current.revision + 1,
    };
    if (!pass) {
      // Nothing stored depends on what changed (searchable fields): complete at once.
      state.target = { ...target, indexes: target.indexes.map((i) => ({ ...i, ready: true })) };
    }
    if (await writeState(state, current.revision)) {
      serve(state);
      return state;
    }
  }
}

export interface ReportEntry {
  kind: 'duplicate' | 'violation';
  recordId: string;
  field: string;
  /** The duplicate value, or the rule broken. */
  detail: string;
  /** duplicate: the record that keeps the value's uniqueness item. */
  keptId?: string;
}

export function reportItem(slug: string, run: number, entry: ReportEntry): Record<string, unknown> {
  const { kind, ...rest } = entry;
  return { pk: reportPartition(slug), sk: `${String(run).padStart(6, '0')}#${kind}#${entry.recordId}#${entry.field}`, ...rest, entryKind: kind, kind: 'migration-report', run };
}

/** A run's report: its first `limit` entries and how many there are. */
export async function readReport(slug: string, run: number, limit = 100): Promise<{ entries: ReportEntry[]; count: number }> {
  const entries: ReportEntry[] = [];
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName('records'),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :run)',
        ExpressionAttributeValues: { ':pk': reportPartition(slug), ':run': `${String(run).padStart(6, '0')}#` },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      count += 1;
      if (entries.length < limit) entries.push({ kind: item.entryKind as ReportEntry['kind'], recordId: String(item.recordId), field: String(item.field), detail: String(item.detail), ...(item.keptId ? { keptId: String(item.keptId) } : {}) });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { entries, count };
}
