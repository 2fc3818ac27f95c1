/**
 * What `GET /api/v1/migrations` and `npm run migrate` show, per entity of the registry: its layout
 * (hash and content), the state of its migration (pending, running, done, failed), records
 * processed of total, start and end, what changed, and the report (records kept as duplicates of
 * a value made unique, records a tightened rule refuses).
 */
import { autoShards, type LoadedEntity } from '../registry/index.js';
import { shardsOf, type Layout } from './layout.js';
import { readReport, readStates, type MigrationPhase, type ReportEntry, type ShardTrigger } from './state.js';

export interface MigrationStatus {
  entity: string;
  layout: { hash: string; previous?: string } & Layout;
  state: MigrationPhase;
  run: number;
  changes: string[];
  processed: number;
  total: number | null;
  startedAt: string | null;
  endedAt: string | null;
  error: string | null;
  /** Indexes queries may read now, and those still being built. */
  indexes: { field: string; token: string; ready: boolean }[];
  /** Unique fields whose uniqueness items are complete, and those being built (a new value of these is refused meanwhile). */
  uniques: { field: string; ready: boolean }[];
  report: { count: number; entries: ReportEntry[] };
  /** Whether the write-shards controller chooses the count; the count writes use, and the one readers read. */
  writeShards: { auto: boolean; shards: number; read: number };
  /** The change the write-shards controller started, why (null: a definition's change). */
  trigger: ShardTrigger | null;
}

export async function migrationStatus(entities: readonly LoadedEntity[], reportLimit = 100): Promise<MigrationStatus[]> {
  const states = new Map((await readStates()).map((s) => [s.entity, s]));
  const out: MigrationStatus[] = [];
  for (const entity of entities) {
    const state = states.get(entity.slug);
    if (!state) continue;
    out.push({
      entity: entity.slug,
      layout: { hash: state.target.hash, ...(state.from ? { previous: state.from.hash } : {}), ...state.target.layout },
      state: state.state,
      run: state.run,
      changes: state.changes,
      processed: state.processed,
      total: state.total ?? null,
      startedAt: state.startedAt ?? null,
      endedAt: state.endedAt ?? null,
      error: state.error ?? null,
      indexes: state.target.indexes.map((i) => ({ field: i.field, token: i.token, ready: i.ready })),
      uniques: state.target.layout.unique.map((field) => ({ field, ready: !(state.target.uniqueBuilding ?? []).includes(field) })),
      report: await readReport(entity.slug, state.run, reportLimit),
      writeShards: {
        auto: autoShards(entity),
        shards: shardsOf(state.target.layout),
        read: state.target.keptShards !== undefined && !state.target.shardsReady ? state.target.keptShards : shardsOf(state.target.layout),
      },
      trigger: state.trigger ?? null,
    });
  }
  return out;
}
