/**
 * Migrations under `npm start`: at start, each entity's definition is compared with the layout
 * recorded in the database (shared/migrations/prepare.ts prepareEntity) before the API serves, so
 * writes maintain a changed layout from their first moment; then the runner
 * (shared/migrations/runner.ts) works in the background while the API serves, one entity at a
 * time, and a run cut short (kill -9, a crash) continues at the next start where it stopped.
 */
import { allEntities } from '../../shared/registry/index.js';
import type { LoadedEntity } from '../../shared/registry/types.js';
import { checkEntity, prepareEntity } from '../../shared/migrations/prepare.js';
import type { MigrationState } from '../../shared/migrations/state.js';
import { runMigration, SHARDS_SWITCH_MS } from '../../shared/migrations/runner.js';
import { controlShards } from '../../shared/migrations/shard-load.js';
import { config } from '../../shared/config.js';
import { logger } from '../../shared/logger.js';

export interface BackgroundMigrations {
  /** Resolves when every pending migration has finished (or the runner was stopped). */
  idle: Promise<void>;
  stop(): Promise<void>;
}

/** Records every entity's target layout and serves it (before the gateway listens). */
export async function prepareMigrations(entities: readonly LoadedEntity[] = allEntities()): Promise<MigrationState[]> {
  const states: MigrationState[] = [];
  const segments = Number(process.env.MIGRATION_SEGMENTS ?? 0) || undefined;
  // A change no migration makes refuses the start before any target is recorded.
  for (const entity of entities) await checkEntity(entity);
  for (const entity of entities) states.push(await prepareEntity(entity, segments));
  return states;
}

function log(line: string): void {
  console.log(`[migrations] ${line}`);
}

/**
 * Runs the pending migrations in the background. MIGRATION_PAUSE_MS (default 0) pauses after each
 * Scan page of each segment, leaving the engine to the API; MIGRATION_PAGE_SIZE (default 100) is
 * the items asked for per Scan page (the work a crash can make the next run repeat);
 * MIGRATION_CONCURRENCY (default 8) records of a page migrated at once per segment;
 * MIGRATION_SEGMENTS (default 4) parallel Scan segments of a new migration; while the API
 * serves, the migration keeps the API's calls within MIGRATION_LATENCY_TOLERANCE (default 1.5) times
 * their latency without it (90th percentile; shared/migrations/pace.ts), yet starts at least
 * MIGRATION_FLOOR_PER_SECOND (default 25) units a second whatever the load; MIGRATION_SWITCH_MS (default
 * 25 s) after readers switch to an entity's new write shards, the purge of the earlier ones starts,
 * and after the write-shards controller records a change, its pass.
 */
export function startMigrations(states: readonly MigrationState[], options: { control?: boolean; entities?: readonly LoadedEntity[] } = {}): BackgroundMigrations {
  const entities = options.entities ?? allEntities();
  const stop = { requested: false };
  const pauseMs = Number(process.env.MIGRATION_PAUSE_MS ?? 0) || 0;
  const pageSize = Number(process.env.MIGRATION_PAGE_SIZE ?? 100) || 100;
  const concurrency = Number(process.env.MIGRATION_CONCURRENCY ?? 8) || 8;
  const tolerance = Number(process.env.MIGRATION_LATENCY_TOLERANCE ?? 0) || undefined;
  const floor = process.env.MIGRATION_FLOOR_PER_SECOND;
  const floorPerSecond = floor === undefined || floor === '' || !(Number(floor) >= 0) ? undefined : Number(floor);
  const switchMs = process.env.MIGRATION_SWITCH_MS === undefined ? undefined : Number(process.env.MIGRATION_SWITCH_MS);
  const runOne = async (state: MigrationState) => {
    const entity = entities.find((e) => e.slug === state.entity)!;
    log(`${entity.slug}: ${state.changes.join('; ') || 'resuming'} (run ${state.run})`);
    let lastLogged = 0;
    for (let attempt = 1; !stop.requested; attempt++) {
      try {
        const end = await runMigration(entity, {
          stop,
          pauseMs,
          pageSize,
          concurrency,
          tolerance,
          floorPerSecond,
          switchMs,
          onProgress: ({ processed, total, added, pace }) => {
            if (Date.now() - lastLogged < 2000) return;
            lastLogged = Date.now();
            const created = added ? ` (+${added} created during the pass)` : '';
            log(`${entity.slug}: ${processed} of ${total ?? '?'} records${created}; pace: ${pace.active} in flight while the API serves, ${Math.round(pace.gapMs)} ms between units, ${pace.floorStarts} started by the floor`);
          },
        });
        if (end && end.state === 'done' && end.run === state.run) log(`${entity.slug}: done, ${end.processed} records`);
        break;
      } catch (error) {
        log(`${entity.slug}: ${(error as Error).message}; retrying (attempt ${attempt})`);
        await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** attempt)));
      }
    }
  };
  // One entity after the other: those open at start, then those the write-shards controller starts.
  const queue = states.filter((s) => s.state === 'pending' || s.state === 'running');
  let running: Promise<void> | undefined;
  const drain = (): Promise<void> => {
    running ??= (async () => {
      while (queue.length && !stop.requested) await runOne(queue.shift()!);
      running = undefined;
    })();
    return running;
  };
  const idle = queue.length ? drain() : Promise.resolve();
  // The server runs the write-shards controller; `npm run migrate -- --wait` only the open migrations.
  const control = options.control
    ? startShardControl(
        entities,
        (state) => {
          queue.push(state);
          void drain();
        },
        switchMs ?? SHARDS_SWITCH_MS,
      )
    : undefined;
  return {
    idle,
    stop: async () => {
      stop.requested = true;
      await control?.stop();
      await idle.catch(() => undefined);
      await running?.catch(() => undefined);
    },
  };
}

/**
 * The write-shards controller under `npm start` (shared/migrations/shard-load.ts controlShards):
 * every SHARDS_CHECK_SECONDS, and the merge check every SHARDS_MERGE_CHECK_SECONDS, in every
 * process on the engine; of processes deciding alike one records the change (a conditional
 * write) and runs it here. The load it reads is counted by the stream consumer (the webhook
 * fan-out, run by the process that owns DATA_DIR's webhooks: infra/local/webhooks.ts).
 */
function startShardControl(entities: readonly LoadedEntity[], run: (state: MigrationState) => void, settleMs: number): { stop(): Promise<void> } {
  const settings = config().writeShards;
  const segments = Number(process.env.MIGRATION_SEGMENTS ?? 0) || undefined;
  let lastMerge = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let tick: Promise<void> | undefined;
  let stopped = false;
  const schedule = () => {
    if (!stopped) timer = setTimeout(() => void (tick = once().finally(schedule)), settings.checkSeconds * 1000);
  };
  const once = async () => {
    const now = Date.now();
    const merge = now - lastMerge >= settings.mergeCheckSeconds * 1000;
    if (merge) lastMerge = now;
    try {
      for (const outcome of await controlShards(entities, { now, merge, settleMs, segments, settings })) if (outcome.started) run(outcome.started);
    } catch (error) {
      logger.warn('write shards: the controller did not run', { error: (error as Error).message });
    }
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await tick;
    },
  };
}
