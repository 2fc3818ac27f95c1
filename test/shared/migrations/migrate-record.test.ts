import { describe, expect, it } from 'vitest';
import { listingSortKey, shardOf } from '../../../shared/data/partitions.js';
import type { StoredRecord, TransactItem } from '../../../shared/data/record-item.js';
import { newRecordId } from '../../../shared/ids.js';
import { adoptedTarget, layoutOf, nextTarget } from '../../../shared/migrations/layout.js';
import { layoutOfState } from '../../../shared/migrations/live-layouts.js';
import { migrateTransaction } from '../../../shared/migrations/migrate-record.js';
import { finishedRun, startedTarget } from '../../../shared/migrations/runner.js';
import type { MigrationState } from '../../../shared/migrations/state.js';
import { validateDefinition } from '../../../shared/registry/index.js';

function note(writeShards: number) {
  return validateDefinition(
    {
      name: 'note',
      slug: 'notes',
      tableName: 'notes',
      idFormat: { type: 'prefixed', prefix: 'nts' },
      fields: { title: { type: 'string' }, status: { type: 'enum', values: ['open', 'done'], indexed: true } },
      access: { public: false, shared: false },
      softDelete: true,
      writeShards,
    },
    'test',
  );
}

const createdAt = '2026-11-23T04:00:00.123Z';
const id = newRecordId({ type: 'prefixed', prefix: 'nts' }, Date.parse(createdAt));
const k = shardOf(id, 4);
const sk = `${listingSortKey({ createdAt, id })}`;

function stored(overrides: Partial<StoredRecord> = {}): StoredRecord {
  return { entity: 'notes', id, tenantId: 'ten_1', ownerId: 'usr_1', createdAt, updatedAt: createdAt, version: 3, data: { title: 'T', status: 'open' }, ix: ['status'], sm: ['createdAt'], copiesVersion: 3, ...overrides };
}

/** The state of a change of the notes' write shards from 1 to 4: its first pass, or (`purge`) the purge of the earlier count. */
function changing(purge = false): MigrationState {
  const target = nextTarget(adoptedTarget(layoutOf(note(1))), layoutOf(note(4)));
  const building: MigrationState = { entity: 'notes', target, changes: [], state: 'running', run: 1, segments: [{ done: false }], processed: 0, revision: 2 };
  if (!purge) return building;
  const switched = finishedRun({ ...building, segments: [{ done: true }] }, Date.parse('2026-11-27T10:00:00.000Z'), 0);
  return { ...switched, target: startedTarget(switched.target), state: 'running' };
}

const keyOf = (item: TransactItem) => {
  const key = item.Put?.Item ?? item.Delete?.Key ?? item.Update?.Key;
  return `${item.Put ? 'Put' : item.Delete ? 'Delete' : 'Update'} ${String(key!.pk)} ${String(key!.sk)}`;
};

describe('migrateTransaction, a record whose item stands in its tenant listing (write shards 1 → 4)', () => {
  it('moves the record item to its shard of the new count, a copy in its place under the guard, and counts it there', () => {
    const state = changing();
    const items = migrateTransaction(layoutOfState(state, note(4)), state, stored())!;
    const keys = items.map(keyOf);

    expect(keys.slice(0, 2)).toEqual([`Put ten_1#notes ${sk}`, `Put ten_1#notes#~${k}/4 ${sk}`]);
    expect(items[0].Put!.Item).toMatchObject({ kind: 'index', id });
    expect(items[0].Put!.ConditionExpression).toContain('#kind = :record AND #version = :version');
    expect(items[1].Put!.Item).toMatchObject({ kind: 'record', ws: [1, 4], version: 3 });
    expect(items[1].Put!.ConditionExpression).toBeUndefined();
    expect(keys).toContain(`Put ten_1#notes#owner=usr_1#~${k}/4 ${sk}`);
    expect(keys).toContain(`Put ten_1#notes#status=open#~${k}/4 ${sk}`);
    expect(keys.filter((key) => key.startsWith('Update ten_1#notes#~'))).toHaveLength(1);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('leaves a record moved already (by a write, or the pass met it twice) as it is', () => {
    const state = changing();

    expect(migrateTransaction(layoutOfState(state, note(4)), state, stored({ ws: [1, 4] }))).toBeUndefined();
  });

  it('purge: the item stays where it is, the copies under the earlier count go, uncounted', () => {
    const state = changing(true);
    const items = migrateTransaction(layoutOfState(state, note(4)), state, stored({ ws: [1, 4] }))!;
    const keys = items.map(keyOf);

    expect(keys[0]).toBe(`Put ten_1#notes#~${k}/4 ${sk}`);
    expect(items[0].Put!.Item).toMatchObject({ kind: 'record', ws: [4] });
    expect(keys.slice(1).sort()).toEqual([`Delete ten_1#notes ${sk}`, `Delete ten_1#notes#owner=usr_1 ${sk}`, `Delete ten_1#notes#owner=usr_1#status=open ${sk}`, `Delete ten_1#notes#status=open ${sk}`].sort());
  });

  it('keeps a soft-deleted record at its detached key, only its shard counts written', () => {
    const state = changing();
    const items = migrateTransaction(layoutOfState(state, note(4)), state, stored({ deletedAt: createdAt }))!;

    expect(items.map(keyOf)).toEqual([`Put notes#${id} #record`]);
    expect(items[0].Put!.Item).toMatchObject({ kind: 'record', ws: [1, 4] });
  });
});
