/** What the tests of the records table's keys, items and transactions share: the definitions, their layouts as the definitions say, a task, and a transaction in words. */
import { buildLayout, definitionLayout, type LiveLayout } from '../../../shared/data/layout.js';
import type { StoredRecord, TransactItem } from '../../../shared/data/record-item.js';
import { loadDefinitions, type LoadedEntity } from '../../../shared/registry/index.js';

/**
 * The entity's layout while a change of its write shards from `from` to `to` is migrated: both
 * counts maintained, readers on `from` until the new one is complete (`ready`).
 */
export function changingShards(entity: LoadedEntity, from: number, to: number, ready = false): LiveLayout {
  const d = definitionLayout(entity);
  return buildLayout(entity, { indexes: d.indexes, legacy: d.legacy, sums: d.sums, defaults: {}, settled: false, writeShards: to, keptShards: from, shardsReady: ready, eventShards: [to, from] }, d.readAt);
}

/** The layout once a change of write shards to `to` is complete and the earlier count retired (its events still read). */
export function shardsChanged(entity: LoadedEntity, from: number, to: number): LiveLayout {
  const d = definitionLayout(entity);
  return buildLayout(entity, { indexes: d.indexes, legacy: d.legacy, sums: d.sums, defaults: {}, settled: true, writeShards: to, eventShards: [to, from] }, d.readAt);
}

export const tables = { records: 'Records', events: 'Events', history: 'History' };

/** The registry's entities by slug, and each one's layout as its definition says (no migration under way). */
export async function definitions(): Promise<{ entities: Record<string, LoadedEntity>; layouts: Record<string, LiveLayout> }> {
  const loaded = await loadDefinitions();
  return { entities: Object.fromEntries(loaded.map((e) => [e.slug, e])), layouts: Object.fromEntries(loaded.map((e) => [e.slug, definitionLayout(e)])) };
}

export function task(overrides: Partial<StoredRecord> = {}, data: Record<string, unknown> = {}): StoredRecord {
  return {
    entity: 'tasks',
    id: 'tsk_A',
    tenantId: 'ten_1',
    ownerId: 'usr_1',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    version: 1,
    // Counted per day of createdAt, as every record a write of today's layout stores (its `sm`).
    sm: ['createdAt'],
    data: { title: 'T', status: 'todo', priority: 'medium', ...data },
    ...overrides,
  };
}

export const event = { pk: 'ten_1#tasks', sk: 'e' };

export function kinds(items: TransactItem[]): string[] {
  return items.map((i) => {
    if (i.Put) return `Put ${i.Put.TableName} ${String(i.Put.Item!.pk)} ${String(i.Put.Item!.sk)}`;
    if (i.Delete) return `Delete ${String(i.Delete.Key!.pk)} ${String(i.Delete.Key!.sk)}`;
    if (i.Update) {
      const names = i.Update.ExpressionAttributeNames!;
      const values = i.Update.ExpressionAttributeValues!;
      const adds = Object.keys(values)
        .filter((k) => k.startsWith(':d'))
        .map((k) => `${names[`#a${k.slice(2)}`]} ${String(values[k])}`);
      return `Update ${String(i.Update.Key!.pk)} ${String(i.Update.Key!.sk)} ${adds.join(', ')}`;
    }
    return 'other';
  });
}
