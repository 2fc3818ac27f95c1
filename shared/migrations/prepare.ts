/**
 * Recording an entity's target layout (at `npm start`, or the deploy's custom resource): its
 * definition is compared with the target recorded in its migration state (state.ts) and, when they
 * differ, the new target is recorded as `pending` and served at once (live-layouts.ts serve): from
 * then on every write maintains it, and the runner (runner.ts) completes it. A change no migration
 * carries out refuses the start before anything is recorded.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../data/index.js';
import type { LoadedEntity } from '../registry/index.js';
import { accessChanged, adoptedTarget, layoutChanges, layoutOf, needsPass, nextTarget, readdedWhilePurging, shardsOf, type Layout } from './layout.js';
import { serve } from './live-layouts.js';
import { DEFAULT_SEGMENTS, readState, writeState, type MigrationState } from './state.js';

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
export async function refusedChange(entity: LoadedEntity, current: MigrationState, layout: Layout = definedLayout(entity, current)): Promise<string | undefined> {
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
  if (accessChanged(stored, layout) && (await hasRecords(entity))) {
    const was = describeAccess(stored.access);
    return (
      `changing access from ${was} to ${describeAccess(layout.access)} is not supported while records are stored: their listings and counts are kept in partitions named by the access mode, and no migration moves them. ` +
      `Restore access to ${was}; to change it, export the records (\`npm run admin -- export ${entity.slug}\`, per tenant), delete them, change access, then import them again (\`npm run admin -- import ${entity.slug}\`).`
    );
  }
  return undefined;
}

/** The entity's definition as a layout against its recorded state: an auto entity keeps the shard count recorded. */
export function definedLayout(entity: LoadedEntity, current: MigrationState | undefined): Layout {
  return layoutOf(entity, current ? shardsOf(current.target.layout) : undefined);
}

function describeAccess(access: Layout['access']): string {
  return access.public ? 'public' : access.shared ? 'shared' : 'private (owner views)';
}

/** Throws UnsupportedChangeError when the entity's definition brings a change no migration makes (nothing recorded). */
export async function checkEntity(entity: LoadedEntity): Promise<void> {
  const current = await readState(entity.slug);
  if (!current) return;
  const layout = definedLayout(entity, current);
  if (current.target.hash === adoptedTarget(layout).hash) return;
  const refused = await refusedChange(entity, current, layout);
  if (refused) throw new UnsupportedChangeError(entity.slug, refused);
}

/**
 * The state that takes `current` to `layout` (pure): a new run whose target is nextTarget's,
 * `pending` when stored items must change (or a pass is under way: it is never cut short), else
 * complete at once (nothing stored depends on what changed: searchable fields).
 */
export function nextState(current: MigrationState, layout: Layout, segments: number, nowMs: number): MigrationState {
  const target = nextTarget(current.target, layout);
  const changes = layoutChanges(current.target.layout, layout);
  const pass = needsPass(current.target.layout, layout) || current.state !== 'done';
  const now = new Date(nowMs).toISOString();
  const state: MigrationState = {
    entity: current.entity,
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
  if (!pass) state.target = { ...target, indexes: target.indexes.map((i) => ({ ...i, ready: true })), ...(target.sums ? { sums: target.sums.map((s) => ({ ...s, ready: true })) } : {}) };
  return state;
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
    const layout = definedLayout(entity, current);
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
    const state = nextState(current, layout, segments, Date.now());
    if (await writeState(state, current.revision)) {
      serve(state);
      return state;
    }
  }
}
