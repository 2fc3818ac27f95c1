/**
 * The migration runner: takes an entity's stored items to its target layout (state.ts), in a pass
 * over the records table made of parallel Scan segments, each saving the key it reached after
 * every page, so a crash or a timeout loses at most one page of work and the next run continues
 * where the segment stopped. Every step is idempotent (a record already at the target is left as
 * it is), so a page done twice does no harm.
 *
 * Each record is taken to the target by migrate-record.ts, with the layout of the state the run
 * carries out (live-layouts.ts layoutOfState): the run serves that state to its own process too.
 *
 * Every unit of work (a record, a Scan page) passes through one pace per run (pace.ts), which
 * keeps few in flight while the API serves requests and many while it does not.
 *
 * When every segment is done, the target's indexes are marked complete: from then on queries read
 * them (shared/query/plan.ts), and filters on fields with defaults are pushed down again.
 *
 * No HTTP here: `npm start` runs it in the background (infra/local/migrations.ts), `npm run
 * migrate -- --wait` in the foreground, and on AWS the deploy-time job (infra/aws/migration.ts).
 */
import { db, EVENT_TTL_SECONDS, storedFromItem, tableName, type LiveLayout, type StoredRecord } from '../data/index.js';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LoadedEntity } from '../registry/index.js';
import { layoutOfState, MAX_STALE_MS, serve } from './live-layouts.js';
import { cleanListingItem, migrateRecord } from './migrate-record.js';
import { Pace } from './pace.js';
import { readState, writeState, type MigrationState, type SegmentState } from './state.js';

export interface RunOptions {
  /** Items asked for per Scan page. */
  pageSize?: number;
  /** Stop (to be continued by the next run) once this time (epoch ms) has passed. */
  deadline?: number;
  /** Called after each page with the counts so far (processed of total; added: records created during the pass it met) and the pace. */
  onProgress?: (state: { entity: string; processed: number; total?: number; added: number; pace: Pace['windows'] }) => void;
  /** Set to true to stop after the current page (the process is shutting down). */
  stop?: { requested: boolean };
  /** Pause (ms) after each page: a rate limit that leaves capacity to the API. */
  pauseMs?: number;
  /** Records of a page migrated at once, per segment (default 8): with the segments, the pace's most units in flight. */
  concurrency?: number;
  /** While the API serves, its calls may take this many times (90th percentile) what they take without the migration (pace.ts; default 1.5). */
  tolerance?: number;
  /** Units (records, Scan pages) per second the pace starts whatever the API's load (pace.ts; default PACE_FLOOR_PER_SECOND; 0: none). */
  floorPerSecond?: number;
  /** After readers switch to new write shards, how long before the earlier ones are purged (default SHARDS_SWITCH_MS). */
  switchMs?: number;
}

const RECORD_FILTER = '#kind = :record AND #entity = :entity';

function scanInput(entity: LoadedEntity, state: MigrationState, segment: number, start: Record<string, unknown> | undefined, limit: number) {
  return {
    TableName: tableName('records'),
    Segment: segment,
    TotalSegments: state.segments.length,
    // Records of the entity, and listing items that may belong to a dropped index of it.
    FilterExpression: `(${RECORD_FILTER}) OR (#kind = :index AND #entity = :entity) OR #kind = :counter`,
    ExpressionAttributeNames: { '#kind': 'kind', '#entity': 'entity' },
    ExpressionAttributeValues: { ':record': 'record', ':index': 'index', ':counter': 'counter', ':entity': entity.slug },
    ConsistentRead: true,
    Limit: limit,
    ...(start ? { ExclusiveStartKey: start } : {}),
  };
}

/** Items a counting Scan page reads: bounded, so that a request never waits behind a whole 1 MB page. */
const COUNT_PAGE_ITEMS = 1000;

/** The number of the entity's records (a Scan counting them, segments in parallel, each page a unit of the pace). */
async function countRecords(entity: LoadedEntity, segments: number, pace: Pace): Promise<number> {
  const counts = await Promise.all(
    Array.from({ length: segments }, async (_, segment) => {
      let n = 0;
      let start: Record<string, unknown> | undefined;
      do {
        const page = new ScanCommand({
          TableName: tableName('records'),
          Segment: segment,
          TotalSegments: segments,
          Select: 'COUNT',
          FilterExpression: RECORD_FILTER,
          ExpressionAttributeNames: { '#kind': 'kind', '#entity': 'entity' },
          ExpressionAttributeValues: { ':record': 'record', ':entity': entity.slug },
          Limit: COUNT_PAGE_ITEMS,
          ...(start ? { ExclusiveStartKey: start } : {}),
        });
        const out = await pace.run(() => db().send(page));
        n += out.Count ?? 0;
        start = out.LastEvaluatedKey;
      } while (start);
      return n;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}


/** The records a page met: of the total counted at the start, and created since (the API wrote them in the target layout). */
interface PageCounts {
  processed: number;
  added: number;
}

/**
 * Whether a record was created after the pass began counting (`totalAt`): not in its total, so
 * counted apart (otherwise a pass over a table written meanwhile shows more processed than total).
 */
export function createdDuringPass(state: Pick<MigrationState, 'totalAt' | 'startedAt'>, record: Pick<StoredRecord, 'createdAt'>): boolean {
  const since = state.totalAt ?? state.startedAt;
  return since !== undefined && record.createdAt >= since;
}

async function saveSegment(state: MigrationState, index: number, segment: SegmentState, counts: PageCounts): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName('records'),
        Key: { pk: '#migrations', sk: state.entity },
        UpdateExpression: `SET #segments[${index}] = :segment ADD #processed :n, #added :added`,
        ConditionExpression: '#run = :run',
        ExpressionAttributeNames: { '#segments': 'segments', '#processed': 'processed', '#added': 'added', '#run': 'run' },
        ExpressionAttributeValues: { ':segment': segment, ':n': counts.processed, ':added': counts.added, ':run': state.run },
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

type SegmentOutcome = 'done' | 'paused' | 'superseded';

async function runSegment(layout: LiveLayout, state: MigrationState, index: number, options: RunOptions, pace: Pace): Promise<SegmentOutcome> {
  const { entity } = layout;
  let next = state.segments[index].next;
  for (;;) {
    if (options.stop?.requested || (options.deadline !== undefined && Date.now() > options.deadline)) return 'paused';
    const out = await pace.run(() => db().send(new ScanCommand(scanInput(entity, state, index, next, options.pageSize ?? 100))));
    const counts: PageCounts = { processed: 0, added: 0 };
    // The page's items a few at a time: each record is its own transaction (records of one page
    // are distinct, so they never conflict but on shared counter items, which transact() reshards).
    const items = out.Items ?? [];
    let at = 0;
    const worker = async () => {
      while (at < items.length) {
        const item = items[at++];
        if (item.kind === 'record') {
          const record = storedFromItem(item);
          await pace.run(() => migrateRecord(layout, state, record));
          if (createdDuringPass(state, record)) counts.added += 1;
          else counts.processed += 1;
        } else if (state.target.obsolete.length || state.target.retiredShards?.length || state.target.droppedSums?.length) await pace.run(() => cleanListingItem(entity, state, item));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 8) }, worker));
    next = out.LastEvaluatedKey;
    const segment: SegmentState = next ? { next, done: false } : { done: true };
    if (!(await saveSegment(state, index, segment, counts))) return 'superseded';
    state.processed += counts.processed;
    state.added = (state.added ?? 0) + counts.added;
    options.onProgress?.({ entity: entity.slug, processed: state.processed, total: state.total, added: state.added, pace: pace.windows });
    if (!next) return 'done';
    if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
  }
}

/** How long after readers are switched to new shards the purge of the earlier ones may start (every process has read the switch). */
export const SHARDS_SWITCH_MS = MAX_STALE_MS + 5_000;

/**
 * The state a run leaves when its pass is complete (pure): indexes and sums ready, uniqueness items
 * complete, dropped ones and purges done, retired shards' events readable for their retention. A change of writeShards whose new
 * shards are now complete goes on: readers switch to them, and a purge pass of the earlier shards
 * is queued for SHARDS_SWITCH_MS later (writes maintain the earlier ones until it starts).
 */
export function finishedRun(latest: MigrationState, nowMs: number, switchMs = SHARDS_SWITCH_MS): MigrationState {
  const now = new Date(nowMs).toISOString();
  const retention = new Date(nowMs + EVENT_TTL_SECONDS * 1000).toISOString();
  const { retiredShards, notBefore: _notBefore, uniqueBuilding: _built, ...rest } = latest.target;
  const eventsRetired = [...(rest.eventsRetired ?? []).filter((r) => Date.parse(r.until) > nowMs), ...(retiredShards ?? []).map((shards) => ({ shards, until: retention }))];
  const target = { ...rest, indexes: rest.indexes.map((i) => ({ ...i, ready: true })), ...(rest.sums ? { sums: rest.sums.map((s) => ({ ...s, ready: true })) } : {}), obsolete: [], droppedSums: undefined, legacy: [], purging: [], ...(eventsRetired.length ? { eventsRetired } : { eventsRetired: undefined }) };
  if (target.keptShards !== undefined && !target.shardsReady) {
    return {
      ...latest,
      target: { ...target, shardsReady: true, notBefore: new Date(nowMs + switchMs).toISOString() },
      changes: [`writeShards: purging the listings under the earlier ${target.keptShards} shard${target.keptShards === 1 ? '' : 's'}`],
      state: 'pending',
      run: latest.run + 1,
      segments: latest.segments.map(() => ({ done: false })),
      processed: 0,
      added: undefined,
      total: undefined,
      totalAt: undefined,
      endedAt: undefined,
      revision: latest.revision + 1,
    };
  }
  return { ...latest, target, state: 'done', endedAt: now, revision: latest.revision + 1 };
}

/** A run's target as it starts: a purge of earlier shards retires them (writes stop maintaining them). */
export function startedTarget(target: MigrationState['target']): MigrationState['target'] {
  if (target.keptShards === undefined || !target.shardsReady) return target;
  const { keptShards, shardsReady: _ready, notBefore: _notBefore, ...rest } = target;
  return { ...rest, retiredShards: [...new Set([...(rest.retiredShards ?? []), keptShards])] };
}

/** Waits until `atMs` unless stopped or past the run's deadline first; whether it got there. */
async function waitUntil(atMs: number, options: RunOptions): Promise<boolean> {
  if (options.deadline !== undefined && atMs > options.deadline) return false;
  while (Date.now() < atMs) {
    if (options.stop?.requested) return false;
    await new Promise((r) => setTimeout(r, Math.min(250, atMs - Date.now())));
  }
  return true;
}

/**
 * Runs (or continues) the entity's migration until it is done, the deadline passes or a newer
 * target supersedes it. Returns the state it left.
 */
export async function runMigration(entity: LoadedEntity, options: RunOptions = {}): Promise<MigrationState | undefined> {
  let state = await readState(entity.slug);
  if (!state || state.state === 'done' || state.state === 'failed') return state;
  if (state.state === 'pending') {
    // A purge of earlier shards waits until every process reads the new ones.
    const notBefore = state.target.notBefore ? Date.parse(state.target.notBefore) : 0;
    if (notBefore > Date.now() && !(await waitUntil(notBefore, options))) return state;
    const running: MigrationState = { ...state, target: startedTarget(state.target), state: 'running', startedAt: new Date().toISOString(), revision: state.revision + 1 };
    if (!(await writeState(running, state.revision))) return runMigration(entity, options);
    state = running;
  }
  serve(state);
  // A run that retires shard counts (the purge of the earlier ones) scans once every process has
  // read that it started: until then one may still write under them, after the scan passed.
  if (state.target.retiredShards?.length && state.startedAt) {
    const settled = Date.parse(state.startedAt) + (options.switchMs ?? SHARDS_SWITCH_MS);
    if (settled > Date.now() && !(await waitUntil(settled, options))) return state;
  }
  const layout = layoutOfState(state, entity);
  // One pace for the run's segments: what the API meets is every unit in flight.
  const pace = new Pace({ max: state.segments.length * Math.max(1, options.concurrency ?? 8), tolerance: options.tolerance, floorPerSecond: options.floorPerSecond });
  try {
    if (state.total === undefined) {
      // Records created from now on may or may not be counted: the pass counts them apart (createdDuringPass).
      const totalAt = new Date().toISOString();
      const total = await countRecords(entity, state.segments.length, pace);
      await db().send(
        new UpdateCommand({
          TableName: tableName('records'),
          Key: { pk: '#migrations', sk: state.entity },
          UpdateExpression: 'SET #total = :total, #totalAt = :totalAt',
          ConditionExpression: '#run = :run',
          ExpressionAttributeNames: { '#total': 'total', '#totalAt': 'totalAt', '#run': 'run' },
          ExpressionAttributeValues: { ':total': total, ':totalAt': totalAt, ':run': state.run },
        }),
      );
      state.total = total;
      state.totalAt = totalAt;
    }
    const outcomes = await Promise.all(state.segments.map((s, i) => (s.done ? ('done' as const) : runSegment(layout, state!, i, options, pace))));
    if (outcomes.some((o) => o !== 'done')) return readState(entity.slug);
    const latest = await readState(entity.slug);
    if (!latest || latest.run !== state.run) return latest;
    const done = finishedRun(latest, Date.now(), options.switchMs);
    if (await writeState(done, latest.revision)) {
      serve(done);
      // The pass listed every record under new shards: the purge of the earlier ones follows.
      return done.state === 'pending' ? runMigration(entity, options) : done;
    }
    return readState(entity.slug);
  } catch (error) {
    // Left `running` with what it reached: the caller retries (a throttle, a timeout), and the
    // error is shown in the status meanwhile.
    await db()
      .send(
        new UpdateCommand({
          TableName: tableName('records'),
          Key: { pk: '#migrations', sk: state.entity },
          UpdateExpression: 'SET #error = :error',
          ConditionExpression: '#run = :run',
          ExpressionAttributeNames: { '#error': 'error', '#run': 'run' },
          ExpressionAttributeValues: { ':error': (error as Error).message, ':run': state.run },
        }),
      )
      .catch(() => undefined);
    throw error;
  } finally {
    pace.close();
  }
}
