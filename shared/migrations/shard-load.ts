/**
 * The write-shards controller's edges (its decision is shard-control.ts, pure):
 *
 * - recordLoad: the stream consumer (the webhook fan-out, on AWS and under `npm start`) counts the
 *   change events of each batch per entity, window and shard (`loadOfEvents`) and adds them to
 *   load items in the limits table, expiring on their own:
 *   pk `#shard-load#<slug>` / sk `<window start, epoch ms, 13 digits>#<shard count>` — {s<k>: writes of shard k},
 *   and for a private or shared entity one item per tenant, sk `…#<shard count>#<tenant>`: its
 *   listings are each tenant's (the tenant's partition holds its owners' and its field values'
 *   records), so its busiest listing key is one tenant's shard, not the sum over tenants.
 *   One change event is one write on its record's listing key, so a shard's count is its key's writes.
 * - controlShards: reads every entity's migration state (one Query) and the load items of each
 *   auto entity, decides, and starts a change as ONE conditional write of the migration state (its
 *   revision, read with the state in `done`): of the processes that decide alike at once one
 *   writes, the others find the revision moved and start nothing. The state carries the trigger
 *   (`GET /api/v1/migrations` shows it) and a `notBefore` so that the pass starts only once every
 *   process writes with the new target; the caller runs it (the local runtime, or the AWS job).
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config, type WriteShardsConfig } from '../config.js';
import { db, keyShard, tableName } from '../data/index.js';
import { logger } from '../logger.js';
import { autoShards, type LoadedEntity } from '../registry/index.js';
import { shardsOf, type Layout } from './layout.js';
import { serve } from './live-layouts.js';
import { nextState } from './prepare.js';
export { KEY_CEILING_WRITES as KEY_CEILING } from './shard-control.js';
import { decideShards, windowStart, type LoadWindow, type ShardDecision } from './shard-control.js';
import { DEFAULT_SEGMENTS, readStates, writeState, type MigrationState } from './state.js';

/** A change event as the stream consumer sees it: its key (which names its shard) and its entity and time. */
export interface EventKey {
  pk: string;
  entity: string;
  createdAt: string;
  /** Its entity lists each tenant's records apart (private or shared): the event's tenant (its key's `<tenant>#…`) is counted apart. */
  perTenant?: boolean;
}

export interface EntityLoad extends LoadWindow {
  entity: string;
  /** The tenant whose listing took these writes (private and shared entities); none: every tenant's (public). */
  tenant?: string;
}

function loadPk(slug: string): string {
  return `#shard-load#${slug}`;
}

const pad = (ms: number) => String(ms).padStart(13, '0');

/** The writes of a batch of change events per entity, window and shard count (pure). */
export function loadOfEvents(events: readonly EventKey[], windowMs: number): EntityLoad[] {
  const out = new Map<string, EntityLoad>();
  for (const event of events) {
    const at = Date.parse(event.createdAt);
    if (Number.isNaN(at)) continue;
    const { shard, shards } = keyShard(event.pk);
    const start = windowStart(at, windowMs);
    const tenant = event.perTenant ? event.pk.slice(0, event.pk.indexOf('#')) : undefined;
    const id = `${event.entity}\u0000${start}\u0000${shards}\u0000${tenant ?? ''}`;
    let load = out.get(id);
    if (!load) out.set(id, (load = { entity: event.entity, start, shards, ...(tenant !== undefined ? { tenant } : {}), counts: Array.from({ length: shards }, () => 0) }));
    (load.counts as number[])[shard] += 1;
  }
  return [...out.values()];
}

/** Adds a batch's load to the load items (one Update per entity, window and count). */
export async function recordLoad(loads: readonly EntityLoad[], settings: WriteShardsConfig = config().writeShards): Promise<void> {
  // Kept as long as the merge check reads them, and an hour more.
  const keepSeconds = settings.mergeAfterSeconds + 3600;
  await Promise.all(
    loads.map((load) => {
      const names: Record<string, string> = { '#e': 'expiresAt' };
      const values: Record<string, unknown> = { ':e': Math.floor(load.start / 1000) + keepSeconds };
      const adds: string[] = [];
      load.counts.forEach((n, k) => {
        if (!n) return;
        names[`#s${k}`] = `s${k}`;
        values[`:s${k}`] = n;
        adds.push(`#s${k} :s${k}`);
      });
      if (!adds.length) return undefined;
      return db().send(
        new UpdateCommand({
          TableName: tableName('limits'),
          Key: { pk: loadPk(load.entity), sk: `${pad(load.start)}#${load.shards}${load.tenant !== undefined ? `#${load.tenant}` : ''}` },
          UpdateExpression: `SET #e = :e ADD ${adds.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    }),
  );
}

/** The entity's load windows that start in [from, to) (a private or shared entity's: one per tenant that wrote in it). */
export async function readLoad(slug: string, from: number, to: number): Promise<LoadWindow[]> {
  const out: LoadWindow[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName('limits'),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': loadPk(slug), ':from': pad(Math.max(0, from)), ':to': `${pad(to)}` },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      const [at, count] = String(item.sk).split('#');
      const shards = Number(count);
      out.push({ start: Number(at), shards, counts: Array.from({ length: shards }, (_, k) => Number(item[`s${k}`] ?? 0)) });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

export interface ShardControlOptions {
  now?: number;
  /** Consider merges too (their windows span hours: the callers ask every mergeCheckSeconds). */
  merge: boolean;
  /** After a change is recorded, how long before its pass may start (every process writes with it by then). */
  settleMs: number;
  segments?: number;
  settings?: WriteShardsConfig;
}

export interface ShardControlOutcome {
  entity: string;
  shards: number;
  decision: ShardDecision;
  /** The state this process recorded (a change it started: the caller runs it). */
  started?: MigrationState;
}

/** The layout `layout` with `shards` write shards (none recorded for 1, as layouts without shards). */
function withShards(layout: Layout, shards: number): Layout {
  const { writeShards: _earlier, ...rest } = layout;
  return shards === 1 ? rest : { ...rest, writeShards: shards };
}

/** The state that starts the decided change (pure). */
export function changeState(current: MigrationState, decision: Extract<ShardDecision, { action: 'split' | 'merge' }>, nowMs: number, settleMs: number, segments: number): MigrationState {
  const next = nextState(current, withShards(current.target.layout, decision.to), segments, nowMs);
  const { rate, lowest, highest } = decision.measure;
  return {
    ...next,
    target: { ...next.target, notBefore: new Date(nowMs + settleMs).toISOString() },
    trigger: {
      by: 'write-shards controller',
      action: decision.action,
      from: decision.from,
      to: decision.to,
      rate,
      lowest,
      highest,
      threshold: decision.threshold,
      seconds: decision.seconds,
      reason: decision.reason,
      at: new Date(nowMs).toISOString(),
    },
  };
}

function logDecision(entity: string, decision: ShardDecision, started: boolean): void {
  if (decision.action === 'hold') return;
  const { measure, ...rest } = decision;
  logger.info('write shards decision', { entity, ...rest, rate: measure.rate, lowest: measure.lowest, highest: measure.highest, started });
}

/**
 * Runs the controller once over the entities: each auto entity's decision, and the changes this
 * process started. Entities without a recorded state are left alone (their start records one).
 */
export async function controlShards(entities: readonly LoadedEntity[], options: ShardControlOptions): Promise<ShardControlOutcome[]> {
  const auto = entities.filter(autoShards);
  if (!auto.length) return [];
  const settings = options.settings ?? config().writeShards;
  const now = options.now ?? Date.now();
  const states = new Map((await readStates()).map((s) => [s.entity, s]));
  const windowMs = settings.windowSeconds * 1000;
  const outcomes: ShardControlOutcome[] = [];
  for (const entity of auto) {
    const state = states.get(entity.slug);
    if (!state) continue;
    const shards = shardsOf(state.target.layout);
    const span = options.merge && shards > 1 ? Math.max(settings.mergeAfterSeconds, settings.splitAfterSeconds) : settings.splitAfterSeconds;
    const windows = await readLoad(entity.slug, now - span * 1000 - 2 * windowMs, now);
    const settledAt = Date.parse(state.endedAt ?? state.startedAt ?? '') || 0;
    const decision = decideShards({ auto: true, shards, phase: state.state, settledAt, windows, now, config: settings, merge: options.merge });
    const outcome: ShardControlOutcome = { entity: entity.slug, shards, decision };
    if (decision.action !== 'hold') {
      const next = changeState(state, decision, now, options.settleMs, options.segments ?? DEFAULT_SEGMENTS);
      const started = await writeState(next, state.revision);
      logDecision(entity.slug, decision, started);
      if (started) {
        serve(next);
        outcome.started = next;
      }
    }
    outcomes.push(outcome);
  }
  return outcomes;
}

