/**
 * The migration state of each entity, kept in the records table beside the records:
 *
 * - state:   pk `#migrations` / sk `<slug>` — {kind: 'migration', entity, target (shared/migrations/layout.ts
 *            Target: the layout, its hash, the index tokens), from (the layout before), changes (in
 *            words), state (pending | running | done | failed), run (incremented by each new target),
 *            segments (one per parallel Scan segment: the key to continue from, done), processed
 *            (of total), added (records created during the pass, counted apart), total, totalAt,
 *            startedAt, endedAt, error, revision (guards concurrent changes of the target)}
 * - report:  pk `#migrations#<slug>` / sk `<run>#<kind>#<recordId>#<field>` — one item per record
 *            the run lists (a duplicate of a unique value, a value a tightened rule refuses); written
 *            idempotently, so a resumed segment that meets a record again lists it once.
 *
 * prepare.ts records an entity's target (at `npm start`, or the deploy's custom resource); the
 * layout loader (live-layouts.ts) serves what every write maintains and every read may read from
 * these items; the runner (runner.ts) completes the target.
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName, type TableItem } from '../data/index.js';
import type { Layout, Target } from './layout.js';

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
  /** Records the pass has met that were stored when it began counting (its total). */
  processed: number;
  /** Records created since the pass began counting that it met too (written by the API in the target layout already). */
  added?: number;
  /** The entity's records when the pass began (a counting Scan). */
  total?: number;
  /** When that count began: records created after it are counted in `added`, not `processed`. */
  totalAt?: string;
  startedAt?: string;
  endedAt?: string;
  error?: string;
  revision: number;
  /** A change of write shards the controller started (none: a definition's change): why, with the rate it measured. */
  trigger?: ShardTrigger;
}

/** What made the write-shards controller start a change (shard-control.ts), as the status shows it. */
export interface ShardTrigger {
  by: 'write-shards controller';
  action: 'split' | 'merge';
  from: number;
  to: number;
  /** The busiest listing key's writes per second over the window (its mean), and the lowest and highest window. */
  rate: number;
  lowest: number;
  highest: number;
  /** The rate that decided it (writes per second per key) and how long it held (seconds). */
  threshold: number;
  seconds: number;
  reason: string;
  at: string;
}

/** Parallel Scan segments of a run. */
export const DEFAULT_SEGMENTS = 4;

export function stateKey(slug: string): { pk: string; sk: string } {
  return { pk: STATE_PK, sk: slug };
}

export function reportPartition(slug: string): string {
  return `${STATE_PK}#${slug}`;
}

/** A state item as the records table holds it: the state under its key. */
interface StateItem extends MigrationState {
  pk: string;
  sk: string;
  kind: string;
}

/** The document client returns items untyped: a state item is read as a StateItem here, and only here. */
function fromStateItem(item: TableItem): MigrationState {
  const { pk: _pk, sk: _sk, kind: _kind, ...state } = item as StateItem;
  return state;
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
