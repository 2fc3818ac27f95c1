/**
 * The migration runner: takes an entity's stored items to its target layout (state.ts), in a pass
 * over the records table made of parallel Scan segments, each saving the key it reached after
 * every page, so a crash or a timeout loses at most one page of work and the next run continues
 * where the segment stopped. Every step is idempotent (a record already at the target is left as
 * it is), so a page done twice does no harm.
 *
 * Per record of the entity (one TransactWriteItems, conditional on the record's version and index
 * tokens, so a concurrent write is never overwritten and never counted twice: the loser re-reads):
 * - defaults of new fields written, values of removed fields purged (then every copy rewritten);
 * - copies and counts added in the partitions of each index token the record is not listed under
 *   yet (a new or rebuilt index is built from the records themselves, never from older copies);
 * - its copies in dropped indexes' partitions deleted;
 * - `ix` set to the target tokens;
 * then, per field made unique, its uniqueness item (the oldest record of a value keeps it, the
 * others are reported), and the rules a tightened definition breaks (reported, not changed).
 * Copies and counter items of dropped indexes that the Scan meets are deleted too.
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
import {
  copyItem,
  counterUpdates,
  EVENT_TTL_SECONDS,
  db,
  heldShards,
  keyShardCount,
  maintainedShards,
  homeKey,
  listings,
  listingSortKey,
  ownListing,
  randomShard,
  recordKey,
  recordTables,
  storedFromItem,
  tableName,
  transact,
  uniqueItem,
  versionGuard,
  withMaintainedShards,
  WriteConflict,
  type Listing,
  type StoredRecord,
  type TransactItem,
} from '../data/index.js';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LoadedEntity } from '../registry/index.js';
import { canonical } from '../canonical-json.js';
import { removedKeys } from './layout.js';
import { Pace } from './pace.js';
import { ruleViolations } from './rules.js';
import { MAX_STALE_MS, readState, reportItem, serve, writeState, type MigrationState, type ReportEntry, type SegmentState } from './state.js';

export interface RunOptions {
  /** Items asked for per Scan page. */
  pageSize?: number;
  /** Stop (to be continued by the next run) once this time (epoch ms) has passed. */
  deadline?: number;
  /** Called after each page with the processed count. */
  onProgress?: (state: { entity: string; processed: number; total?: number }) => void;
  /** Set to true to stop after the current page (the process is shutting down). */
  stop?: { requested: boolean };
  /** Pause (ms) after each page: a rate limit that leaves capacity to the API. */
  pauseMs?: number;
  /** Records of a page migrated at once, per segment (default 8): with the segments, the pace's most units in flight. */
  concurrency?: number;
  /** While the API serves, its calls may take this many times (90th percentile) what they take without the migration (pace.ts; default 1.5). */
  tolerance?: number;
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

/** The part of a partition key after the entity's table name, if it is a partition of this entity. */
function partitionParts(entity: LoadedEntity, pk: string): string[] | undefined {
  const parts = pk.split('#');
  if (parts[0] === entity.tableName) return parts.slice(1);
  if (parts[1] === entity.tableName && parts[0] !== '') return parts.slice(2);
  return undefined;
}

function underToken(parts: string[], tokens: readonly string[]): boolean {
  return parts.some((p) => tokens.some((t) => p.startsWith(`${t}=`)));
}

/**
 * A listing copy or counter item of a dropped index or of a retired shard count (deleted), or a
 * base counter item with counts of a dropped index (cleared).
 */
async function cleanListingItem(entity: LoadedEntity, state: MigrationState, item: Record<string, unknown>): Promise<void> {
  const obsolete = state.target.obsolete.map((i) => i.token);
  const retired = state.target.retiredShards ?? [];
  if (obsolete.length === 0 && retired.length === 0) return;
  const parts = partitionParts(entity, String(item.pk));
  if (!parts) return;
  if (underToken(parts, obsolete) || retired.includes(keyShardCount(String(item.pk)))) {
    await db().send(new DeleteCommand({ TableName: tableName('records'), Key: { pk: item.pk, sk: item.sk } }));
    return;
  }
  if (item.kind !== 'counter') return;
  const stale = Object.keys(item).filter((name) => name.startsWith('#') && obsolete.some((t) => name.startsWith(`#${t}=`)));
  if (stale.length === 0) return;
  await db().send(
    new UpdateCommand({
      TableName: tableName('records'),
      Key: { pk: item.pk, sk: item.sk },
      UpdateExpression: `REMOVE ${stale.map((_, i) => `#a${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(stale.map((name, i) => [`#a${i}`, name])),
      ConditionExpression: 'attribute_exists(pk)',
    }),
  ).catch((error: { name?: string }) => {
    if (error.name !== 'ConditionalCheckFailedException') throw error;
  });
}

/** The record as the target layout stores it: defaults written, removed fields purged. */
function targetData(state: MigrationState, data: Record<string, unknown>): Record<string, unknown> {
  const out = { ...data };
  for (const [name, value] of Object.entries(state.target.layout.defaults)) if (out[name] === undefined) out[name] = value;
  for (const key of removedKeys(state.target.layout, out)) delete out[key];
  return out;
}

/** versionGuard of a write, but a soft-deleted record (detached) is migrated too. */
function guard(before: StoredRecord): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  const { ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues } = versionGuard(before);
  const { '#deletedAt': _deletedAt, ...names } = ExpressionAttributeNames;
  return { ConditionExpression: ConditionExpression.replace(' AND attribute_not_exists(#deletedAt)', ''), ExpressionAttributeNames: names, ExpressionAttributeValues };
}

/** The transaction taking one stored record to the target layout; none when it is there already. */
export function migrateTransaction(entity: LoadedEntity, state: MigrationState, raw: StoredRecord): TransactItem[] | undefined {
  const tokens = state.target.indexes.map((i) => i.token);
  const held = raw.ix ?? state.target.legacy;
  const data = targetData(state, raw.data ?? {});
  const dataChanged = canonical(data) !== canonical(raw.data ?? {});
  const missing = tokens.filter((t) => !held.includes(t));
  const dropped = held.filter((t) => !tokens.includes(t));
  const shards = maintainedShards(entity);
  const heldSets = heldShards(raw);
  const shardsChanged = canonical(heldSets) !== canonical(shards);
  if (!dataChanged && missing.length === 0 && dropped.length === 0 && !shardsChanged && raw.ix !== undefined) return undefined;
  const tables = recordTables();
  const after: StoredRecord = { ...withMaintainedShards(entity, raw), data, ix: tokens, ...(dataChanged ? { copiesVersion: raw.version } : {}) };
  const own = ownListing(entity, after);
  // The target listings (the live layout is this state's: serve() was called): those of tokens
  // or shard counts the record is not listed under yet are added and counted.
  const now = listings(entity, after);
  const was = listings(entity, { ...raw, ix: held }, 'held');
  const before = new Set(was.map((l) => l.partition));
  const added = now.filter((l) => !before.has(l.partition));
  const copies = now.filter((l) => l.partition !== own && (dataChanged || added.includes(l)));
  // The partitions of dropped tokens and left shard counts it was listed under (never counted).
  const staying = new Set(now.map((l) => l.partition));
  const gone = was.filter((l) => !staying.has(l.partition)).map((l) => l.partition);
  const sk = homeKey(entity, after);
  return [
    { Put: { TableName: tables.records, Item: { ...sk, kind: 'record', ...after }, ...guard(raw) } },
    ...copies.map((l): TransactItem => ({ Put: { TableName: tables.records, Item: copyItem(entity, l.partition, after) } })),
    ...gone.map((partition): TransactItem => ({ Delete: { TableName: tables.records, Key: { pk: partition, sk: listingSortKey(raw) } } })),
    ...counterUpdates(entity, tables, added.map((l): [Listing, number] => [l, 1]), randomShard()),
  ];
}

async function reread(entity: LoadedEntity, record: StoredRecord): Promise<StoredRecord | undefined> {
  const key = record.deletedAt ? homeKey(entity, record) : recordKey(entity, record.id, record.tenantId);
  const { Item } = await db().send(new GetCommand({ TableName: tableName('records'), Key: key, ConsistentRead: true }));
  return Item && Item.kind === 'record' ? storedFromItem(Item) : undefined;
}

async function report(state: MigrationState, entry: ReportEntry): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName('records'), Item: reportItem(state.entity, state.run, entry) }));
}

async function unreport(state: MigrationState, entry: Pick<ReportEntry, 'kind' | 'recordId' | 'field'>): Promise<void> {
  const item = reportItem(state.entity, state.run, { ...entry, detail: '' });
  await db().send(new DeleteCommand({ TableName: tableName('records'), Key: { pk: item.pk, sk: item.sk } }));
}

function older(a: StoredRecord, b: StoredRecord): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);
}

function addUnique(entity: LoadedEntity, record: StoredRecord, field: string, extra: TransactItem[] = []): TransactItem[] {
  return [
    {
      Update: {
        TableName: tableName('records'),
        Key: homeKey(entity, record),
        UpdateExpression: 'SET #uniques = list_append(if_not_exists(#uniques, :none), :field)',
        ConditionExpression: '#version = :version',
        // (a write planned on the record before this fails its guard on `uniques` and re-reads)
        ExpressionAttributeNames: { '#uniques': 'uniques', '#version': 'version' },
        ExpressionAttributeValues: { ':none': [], ':field': [field], ':version': record.version },
      },
    },
    ...extra,
  ];
}

function isCancelled(error: unknown): boolean {
  return (error as { name?: string }).name === 'TransactionCanceledException';
}

/**
 * The uniqueness item of one field's value for a record stored before the field was unique. The
 * oldest record of a value (createdAt, then id) ends up holding it: a younger holder met first
 * hands it over (one transaction: both records and the item, each conditional); the others are
 * reported as duplicates. Returns false when the record changed meanwhile (the caller re-reads).
 */
async function backfillUnique(entity: LoadedEntity, state: MigrationState, record: StoredRecord, field: string): Promise<boolean> {
  const value = record.data[field];
  const item = uniqueItem(entity, record, field, value);
  const key = { pk: item.pk, sk: item.sk };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: addUnique(entity, record, field, [{ Put: { TableName: tableName('records'), Item: item, ConditionExpression: 'attribute_not_exists(pk)' } }]) }));
      return true;
    } catch (error) {
      if (!isCancelled(error)) throw error;
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return false;
      if (reasons[1]?.Code !== 'ConditionalCheckFailed') continue;
    }
    const { Item: holding } = await db().send(new GetCommand({ TableName: tableName('records'), Key: key, ConsistentRead: true }));
    if (!holding) continue;
    const holderId = String(holding.recordId);
    if (holderId === record.id) return true;
    const holder = await reread(entity, { ...record, id: holderId, tenantId: String(holding.tenantId), deletedAt: undefined });
    if (holder && !older(record, holder)) {
      await report(state, { kind: 'duplicate', recordId: record.id, field, detail: String(value), keptId: holder.id });
      return true;
    }
    // This record is older (or the holder is gone): it takes the item over.
    const handOver: TransactItem[] = [{ Put: { TableName: tableName('records'), Item: item, ConditionExpression: 'recordId = :holder', ExpressionAttributeValues: { ':holder': holderId } } }];
    if (holder) {
      handOver.push({
        Update: {
          TableName: tableName('records'),
          Key: homeKey(entity, holder),
          UpdateExpression: 'SET #uniques = :rest',
          ConditionExpression: '#version = :version',
          ExpressionAttributeNames: { '#uniques': 'uniques', '#version': 'version' },
          ExpressionAttributeValues: { ':rest': (holder.uniques ?? []).filter((f) => f !== field), ':version': holder.version },
        },
      });
    }
    try {
      await db().send(new TransactWriteCommand({ TransactItems: addUnique(entity, record, field, handOver) }));
      if (holder) await report(state, { kind: 'duplicate', recordId: holder.id, field, detail: String(value), keptId: record.id });
      await unreport(state, { kind: 'duplicate', recordId: record.id, field });
      return true;
    } catch (error) {
      if (!isCancelled(error)) throw error;
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return false;
    }
  }
  throw new Error(`uniqueness of ${entity.slug}.${field} for record ${record.id}: the value kept changing hands`);
}

/** Takes one record to the target layout (re-reading it after a concurrent write), then its uniqueness items and report. */
async function migrateRecord(entity: LoadedEntity, state: MigrationState, first: StoredRecord): Promise<void> {
  let raw: StoredRecord | undefined = first;
  for (let attempt = 0; raw && attempt < 20; attempt++) {
    const items = migrateTransaction(entity, state, raw);
    if (items) {
      try {
        await transact(items);
      } catch (error) {
        if (!(error instanceof WriteConflict)) throw error;
        raw = await reread(entity, raw);
        continue;
      }
    }
    const current: StoredRecord = { ...raw, data: targetData(state, raw.data ?? {}), ix: state.target.indexes.map((i) => i.token) };
    if (!current.deletedAt) {
      let changed = false;
      for (const field of state.target.layout.unique) {
        const value = current.data[field];
        if (value === undefined || value === null || (current.uniques ?? []).includes(field)) continue;
        if (!(await backfillUnique(entity, state, current, field))) {
          changed = true;
          break;
        }
      }
      if (changed) {
        raw = await reread(entity, raw);
        continue;
      }
      const broken = ruleViolations(state.target.layout.rules, state.target.layout.defaults, current.data);
      for (const [field, problem] of Object.entries(broken)) await report(state, { kind: 'violation', recordId: current.id, field, detail: problem });
    }
    return;
  }
  if (raw) throw new Error(`record ${raw.id} of ${entity.slug} kept changing while it was migrated`);
}

async function saveSegment(state: MigrationState, index: number, segment: SegmentState, processed: number): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName('records'),
        Key: { pk: '#migrations', sk: state.entity },
        UpdateExpression: `SET #segments[${index}] = :segment ADD #processed :n`,
        ConditionExpression: '#run = :run',
        ExpressionAttributeNames: { '#segments': 'segments', '#processed': 'processed', '#run': 'run' },
        ExpressionAttributeValues: { ':segment': segment, ':n': processed, ':run': state.run },
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

type SegmentOutcome = 'done' | 'paused' | 'superseded';

async function runSegment(entity: LoadedEntity, state: MigrationState, index: number, options: RunOptions, pace: Pace): Promise<SegmentOutcome> {
  let next = state.segments[index].next;
  for (;;) {
    if (options.stop?.requested || (options.deadline !== undefined && Date.now() > options.deadline)) return 'paused';
    const out = await pace.run(() => db().send(new ScanCommand(scanInput(entity, state, index, next, options.pageSize ?? 100))));
    let processed = 0;
    // The page's items a few at a time: each record is its own transaction (records of one page
    // are distinct, so they never conflict but on shared counter items, which transact() reshards).
    const items = out.Items ?? [];
    let at = 0;
    const worker = async () => {
      while (at < items.length) {
        const item = items[at++];
        if (item.kind === 'record') {
          await pace.run(() => migrateRecord(entity, state, storedFromItem(item)));
          processed += 1;
        } else if (state.target.obsolete.length || state.target.retiredShards?.length) await pace.run(() => cleanListingItem(entity, state, item));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 8) }, worker));
    next = out.LastEvaluatedKey;
    const segment: SegmentState = next ? { next, done: false } : { done: true };
    if (!(await saveSegment(state, index, segment, processed))) return 'superseded';
    state.processed += processed;
    options.onProgress?.({ entity: entity.slug, processed: state.processed, total: state.total });
    if (!next) return 'done';
    if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
  }
}

/** How long after readers are switched to new shards the purge of the earlier ones may start (every process has read the switch). */
export const SHARDS_SWITCH_MS = MAX_STALE_MS + 5_000;

/**
 * The state a run leaves when its pass is complete (pure): indexes ready, dropped ones and purges
 * done, retired shards' events readable for their retention. A change of writeShards whose new
 * shards are now complete goes on: readers switch to them, and a purge pass of the earlier shards
 * is queued for SHARDS_SWITCH_MS later (writes maintain the earlier ones until it starts).
 */
export function finishedRun(latest: MigrationState, nowMs: number, switchMs = SHARDS_SWITCH_MS): MigrationState {
  const now = new Date(nowMs).toISOString();
  const retention = new Date(nowMs + EVENT_TTL_SECONDS * 1000).toISOString();
  const { retiredShards, notBefore: _notBefore, ...rest } = latest.target;
  const eventsRetired = [...(rest.eventsRetired ?? []).filter((r) => Date.parse(r.until) > nowMs), ...(retiredShards ?? []).map((shards) => ({ shards, until: retention }))];
  const target = { ...rest, indexes: rest.indexes.map((i) => ({ ...i, ready: true })), obsolete: [], legacy: [], purging: [], ...(eventsRetired.length ? { eventsRetired } : { eventsRetired: undefined }) };
  if (target.keptShards !== undefined && !target.shardsReady) {
    return {
      ...latest,
      target: { ...target, shardsReady: true, notBefore: new Date(nowMs + switchMs).toISOString() },
      changes: [`writeShards: purging the listings under the earlier ${target.keptShards} shard${target.keptShards === 1 ? '' : 's'}`],
      state: 'pending',
      run: latest.run + 1,
      segments: latest.segments.map(() => ({ done: false })),
      processed: 0,
      total: undefined,
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
  // One pace for the run's segments: what the API meets is every unit in flight.
  const pace = new Pace({ max: state.segments.length * Math.max(1, options.concurrency ?? 8), tolerance: options.tolerance });
  try {
    if (state.total === undefined) {
      const total = await countRecords(entity, state.segments.length, pace);
      await db().send(
        new UpdateCommand({
          TableName: tableName('records'),
          Key: { pk: '#migrations', sk: state.entity },
          UpdateExpression: 'SET #total = :total',
          ConditionExpression: '#run = :run',
          ExpressionAttributeNames: { '#total': 'total', '#run': 'run' },
          ExpressionAttributeValues: { ':total': total, ':run': state.run },
        }),
      );
      state.total = total;
    }
    const outcomes = await Promise.all(state.segments.map((s, i) => (s.done ? ('done' as const) : runSegment(entity, state!, i, options, pace))));
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
