/**
 * What `GET /api/v1/migrations` and `npm run migrate` show, per entity of the registry: its layout
 * (hash and content), the state of its migration (pending, running, done, failed), records
 * processed of the total at its start and records created during it apart, start and end, what
 * changed, and the report (records kept as duplicates of a value made unique, records a tightened
 * rule refuses).
 */
import { autoShards, type LoadedEntity } from '../registry/index.js';
import { shardsOf, type Layout } from './layout.js';
import { readReport, readStates, type MigrationPhase, type MigrationState, type ReportEntry, type ShardTrigger } from './state.js';

export interface MigrationStatus {
  entity: string;
  layout: { hash: string; previous?: string } & Layout;
  state: MigrationPhase;
  run: number;
  changes: string[];
  /** Records of `total` the pass has met (records deleted meanwhile are never met: it may end below total). */
  processed: number;
  /** The entity's records when the pass began. */
  total: number | null;
  /** Records created during the pass that it met too (already in the target layout): never counted in processed. */
  added: number;
  startedAt: string | null;
  endedAt: string | null;
  error: string | null;
  /** Indexes queries may read now, and those still being built. */
  indexes: { field: string; token: string; ready: boolean }[];
  /** Summed fields (aggregates.sum) and fields counted per day (aggregates.days, `by: 'day'`) whose counters aggregates read now, and those being built. */
  sums: { field: string; token: string; by?: 'day'; ready: boolean }[];
  /** Unique fields whose uniqueness items are complete, and those being built (a new value of these is refused meanwhile). */
  uniques: { field: string; ready: boolean }[];
  report: { count: number; entries: ReportEntry[] };
  /** Whether the write-shards controller chooses the count; the count writes use, and the one readers read. */
  writeShards: { auto: boolean; shards: number; read: number };
  /** The change the write-shards controller started, why (null: a definition's change). */
  trigger: ShardTrigger | null;
}

/**
 * Processed of the total, and the records created during the pass apart. The runner counts a
 * record as added when it was created after the count began; one created just before it whose
 * write landed after the count had passed its key is in neither, and is met as processed: past the
 * total, it is shown as added (it was not part of the count), so processed never passes total.
 */
export function progressCounts(state: Pick<MigrationState, 'processed' | 'total' | 'added'>): { processed: number; total: number | null; added: number } {
  const added = state.added ?? 0;
  if (state.total === undefined) return { processed: state.processed, total: null, added };
  const over = Math.max(0, state.processed - state.total);
  return { processed: state.processed - over, total: state.total, added: added + over };
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
      ...progressCounts(state),
      startedAt: state.startedAt ?? null,
      endedAt: state.endedAt ?? null,
      error: state.error ?? null,
      indexes: state.target.indexes.map((i) => ({ field: i.field, token: i.token, ready: i.ready })),
      sums: (state.target.sums ?? []).map((s) => ({ field: s.field, token: s.token, ...(s.by ? { by: s.by } : {}), ready: s.ready })),
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
