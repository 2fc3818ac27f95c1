import { beforeAll, describe, expect, it } from 'vitest';
import type { LiveLayout } from '../../../shared/data/layout.js';
import type { LoadedEntity } from '../../../shared/registry/index.js';
import { reshard } from '../../../shared/data/counters.js';
import { consolidatedFields } from '../../../shared/data/layout.js';
import { copyItem } from '../../../shared/data/items.js';
import { listingSortKey, recordKey, shardOf } from '../../../shared/data/partitions.js';
import type { StoredRecord, TransactItem } from '../../../shared/data/record-item.js';
import { createTransaction, deleteTransaction, updateTransaction } from '../../../shared/data/transactions.js';
import { newRecordId } from '../../../shared/ids.js';
import { changingShards, definitions, event, kinds, shardsChanged, tables, task } from './support.js';

let entities: Record<string, LoadedEntity>;
let layouts: Record<string, LiveLayout>;

beforeAll(async () => {
  ({ entities, layouts } = await definitions());
});

describe('transactions', () => {
  it('create: the record only if new, a copy and +1 per partition, then the event', () => {
    const items = createTransaction(layouts.tags, { ...task(), entity: 'tags', id: 'tag_A', data: { name: 'x' } }, event, tables, 4);

    expect(kinds(items)).toEqual([
      'Put Records tags#tag_A #record',
      `Put Records ten_1#tags ${listingSortKey({ createdAt: '2026-01-01T00:00:00.000Z', id: 'tag_A' })}`,
      'Update ten_1#tags #count#4 count 1',
      'Update ten_1#tags#days createdAt#2026-01#4 2026-01-01 1',
      'Put Events ten_1#tasks e',
    ]);
    expect(items[0].Put!.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(items[1].Put!.Item).toMatchObject({ kind: 'index', id: 'tag_A', tenantId: 'ten_1', data: { name: 'x' } });
  });

  it('create of a task writes 8 copies, 4 counter items and 2 day counter items: status and priority are counted in the base partitions\' items, the assignee has its own, the day in each base partition\'s month item', () => {
    const items = createTransaction(layouts.tasks, task({}, { assigneeId: 'usr_2' }), event, tables, 0);

    expect(items).toHaveLength(1 + 8 + 4 + 2 + 1);
    expect(kinds(items).filter((k) => k.startsWith('Update'))).toEqual([
      'Update ten_1#tasks #count#0 count 1, #status=todo 1, #priority=medium 1',
      'Update ten_1#tasks#days createdAt#2026-01#0 2026-01-01 1',
      'Update ten_1#tasks#owner=usr_1 #count#0 count 1, #status=todo 1, #priority=medium 1',
      'Update ten_1#tasks#owner=usr_1#days createdAt#2026-01#0 2026-01-01 1',
      'Update ten_1#tasks#assigneeId=usr_2 #count#0 count 1',
      'Update ten_1#tasks#owner=usr_1#assigneeId=usr_2 #count#0 count 1',
    ]);
  });

  it('counts enum and boolean fields in the base counters while they fit, references and free text apart', () => {
    expect([...consolidatedFields(entities.tasks)]).toEqual(['status', 'priority']);
    expect([...consolidatedFields(entities.products)]).toEqual(['status']);
    const many = { fields: { a: { type: 'enum' as const, indexed: true, values: Array.from({ length: 200 }, (_, i) => `value-${i}`) }, b: { type: 'boolean' as const, indexed: true } } };
    expect([...consolidatedFields(many)]).toEqual(['b']);
  });

  it('a retry moves every counter Update to another shard and leaves the rest alone', () => {
    const items = createTransaction(layouts.tasks, task(), event, tables, 2);

    const moved = reshard(items, 9);

    expect(kinds(moved).filter((k) => k.startsWith('Update')).map((k) => k.split(' ')[2])).toEqual(['#count#9', 'createdAt#2026-01#9', '#count#9', 'createdAt#2026-01#9']);
    expect(moved.filter((i) => !i.Update)).toEqual(items.filter((i) => !i.Update));
  });

  it('update: guarded by version, fresh copies everywhere, copies and counters moved for changed indexed values', () => {
    const before = task();
    const after = task({ version: 2, updatedAt: '2026-01-01T00:00:01.000Z' }, { status: 'completed' });
    const sk = listingSortKey(before);

    const items = updateTransaction(layouts.tasks, before, after, event, tables, 1);

    expect(items[0].Put!.ConditionExpression).toContain('#version = :version');
    expect(items[0].Put!.ExpressionAttributeValues).toEqual({ ':record': 'record', ':version': 1, ':sm': ['createdAt'] });
    expect(kinds(items)).toEqual([
      'Put Records tasks#tsk_A #record',
      `Put Records ten_1#tasks ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1 ${sk}`,
      `Put Records ten_1#tasks#status=completed ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1#status=completed ${sk}`,
      `Put Records ten_1#tasks#priority=medium ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1#priority=medium ${sk}`,
      `Delete ten_1#tasks#status=todo ${sk}`,
      `Delete ten_1#tasks#owner=usr_1#status=todo ${sk}`,
      'Update ten_1#tasks #count#1 #status=completed 1, #status=todo -1',
      'Update ten_1#tasks#owner=usr_1 #count#1 #status=completed 1, #status=todo -1',
      'Put Events ten_1#tasks e',
    ]);
  });

  it('update of a field that is in no partition key: the copies and the record, no counter', () => {
    const before = task();
    const after = task({ version: 2, updatedAt: '2026-01-01T00:00:01.000Z' }, { title: 'U' });

    expect(updateTransaction(layouts.tasks, before, after, event, tables).filter((i) => i.Update)).toEqual([]);
  });

  it('soft delete (an update to deletedAt): every copy removed, every counter -1', () => {
    const before: StoredRecord = { ...task(), entity: 'customers', data: { name: 'c' } };
    const after = { ...before, version: 2, deletedAt: '2026-01-02T00:00:00.000Z' };

    expect(kinds(updateTransaction(layouts.customers, before, after, event, tables, 3))).toEqual([
      'Put Records customers#tsk_A #record',
      `Delete ten_1#customers ${listingSortKey(before)}`,
      `Delete ten_1#customers#owner=usr_1 ${listingSortKey(before)}`,
      'Update ten_1#customers #count#3 count -1',
      'Update ten_1#customers#days createdAt#2026-01#3 2026-01-01 -1',
      'Update ten_1#customers#owner=usr_1 #count#3 count -1',
      'Update ten_1#customers#owner=usr_1#days createdAt#2026-01#3 2026-01-01 -1',
      'Put Events ten_1#tasks e',
    ]);
  });

  it('hard delete: the record if unchanged, every copy, every counter -1, the event', () => {
    const items = deleteTransaction(layouts.tags, { ...task(), entity: 'tags', data: { name: 'x' } }, event, tables, 5);

    expect(kinds(items)).toEqual([
      'Delete tags#tsk_A #record',
      `Delete ten_1#tags ${listingSortKey(task())}`,
      'Update ten_1#tags #count#5 count -1',
      'Update ten_1#tags#days createdAt#2026-01#5 2026-01-01 -1',
      'Put Events ten_1#tasks e',
    ]);
    expect(items[0].Delete!.ConditionExpression).toContain('#version = :version');
  });
});

describe('a record that stands as its own copy in the tenant listing (an id that carries its time)', () => {
  const createdAt = '2026-11-23T04:00:00.123Z';
  const timed = (entity: LoadedEntity, overrides: Partial<StoredRecord> = {}): StoredRecord =>
    task({ entity: entity.slug, id: newRecordId(entity.idFormat, Date.parse(createdAt)), createdAt, updatedAt: createdAt, ...overrides });

  it('is stored at its place in the tenant partition, found from the id and the tenant alone', () => {
    const record = timed(entities.tasks);

    expect(recordKey(layouts.tasks, record.id, 'ten_1')).toEqual({ pk: 'ten_1#tasks', sk: listingSortKey(record) });
    expect(recordKey(layouts.tasks, record.id, 'ten_2').pk).toBe('ten_2#tasks');
    expect(recordKey(layouts.tasks, record.id, undefined)).toEqual({ pk: `tasks#${record.id}`, sk: '#record' });
  });

  it('is not, for a public entity: every tenant\'s records would share one partition', () => {
    const id = newRecordId(entities.products.idFormat, Date.parse(createdAt));

    expect(recordKey(layouts.products, id, 'ten_1')).toEqual({ pk: `products#${id}`, sk: '#record' });
  });

  it('create: the record in the tenant partition and no copy there; the other copies, counters and event as before', () => {
    const record = timed(entities.tasks);
    const items = createTransaction(layouts.tasks, record, event, tables, 0);
    const sk = listingSortKey(record);

    expect(kinds(items)).toEqual([
      `Put Records ten_1#tasks ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1 ${sk}`,
      `Put Records ten_1#tasks#status=todo ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1#status=todo ${sk}`,
      `Put Records ten_1#tasks#priority=medium ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1#priority=medium ${sk}`,
      'Update ten_1#tasks #count#0 count 1, #status=todo 1, #priority=medium 1',
      'Update ten_1#tasks#days createdAt#2026-11#0 2026-11-23 1',
      'Update ten_1#tasks#owner=usr_1 #count#0 count 1, #status=todo 1, #priority=medium 1',
      'Update ten_1#tasks#owner=usr_1#days createdAt#2026-11#0 2026-11-23 1',
      'Put Events ten_1#tasks e',
    ]);
    expect(items[0].Put!).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)', Item: { kind: 'record', id: record.id, copiesVersion: 1 } });
  });

  it('update: the record rewritten in place under the version guard, the other copies rewritten', () => {
    const before = timed(entities.tasks);
    const after = { ...before, version: 2, updatedAt: '2026-11-23T05:00:00.000Z', data: { ...before.data, title: 'U' } };
    const items = updateTransaction(layouts.tasks, before, after, event, tables);

    expect(kinds(items)).toHaveLength(1 + 5 + 1);
    expect(kinds(items)[0]).toBe(`Put Records ten_1#tasks ${listingSortKey(before)}`);
    expect(items[0].Put!.ConditionExpression).toContain('#version = :version');
  });

  it('soft delete: the record leaves the listing (guarded Delete) for its detached key; the other copies go', () => {
    const before = { ...timed(entities.customers), data: { name: 'c' } };
    const after = { ...before, version: 2, deletedAt: '2026-11-24T00:00:00.000Z' };
    const items = updateTransaction(layouts.customers, before, after, event, tables, 3);

    expect(kinds(items)).toEqual([
      `Delete ten_1#customers ${listingSortKey(before)}`,
      `Put Records customers#${before.id} #record`,
      `Delete ten_1#customers#owner=usr_1 ${listingSortKey(before)}`,
      'Update ten_1#customers #count#3 count -1',
      'Update ten_1#customers#days createdAt#2026-11#3 2026-11-23 -1',
      'Update ten_1#customers#owner=usr_1 #count#3 count -1',
      'Update ten_1#customers#owner=usr_1#days createdAt#2026-11#3 2026-11-23 -1',
      'Put Events ten_1#tasks e',
    ]);
    expect(items[0].Delete!.ConditionExpression).toContain('#version = :version');
    expect(items[1].Put!.Item).toMatchObject({ kind: 'record', deletedAt: after.deletedAt });
  });

  it('hard delete: the record (guarded) and the other copies', () => {
    const before = { ...timed(entities.tags), data: { name: 'x' } };

    expect(kinds(deleteTransaction(layouts.tags, before, event, tables, 5))).toEqual([
      `Delete ten_1#tags ${listingSortKey(before)}`,
      'Update ten_1#tags #count#5 count -1',
      'Update ten_1#tags#days createdAt#2026-11#5 2026-11-23 -1',
      'Put Events ten_1#tasks e',
    ]);
  });

  it('refuses a record whose createdAt is not the time its id carries (it would be listed twice)', () => {
    const record = timed(entities.tasks, { createdAt: '2026-11-23T04:00:00.124Z' });

    expect(() => createTransaction(layouts.tasks, record, event, tables)).toThrow(/not the time its id carries/);
  });
});

describe('a record whose item stands in the tenant listing while its write shards change (1 → 4)', () => {
  const createdAt = '2026-11-23T04:00:00.123Z';
  let id: string;
  let k: number;
  const timed = (overrides: Partial<StoredRecord> = {}): StoredRecord => ({ ...task({ id, createdAt, updatedAt: createdAt }), entity: 'tags', data: { name: 'x' }, ...overrides });
  const keysOf = (items: TransactItem[]) => items.map((i) => (i.Put ? `${String(i.Put.Item!.pk)}|${String(i.Put.Item!.sk)}` : i.Delete ? `${String(i.Delete.Key!.pk)}|${String(i.Delete.Key!.sk)}` : `${String(i.Update!.Key!.pk)}|${String(i.Update!.Key!.sk)}`));
  beforeAll(() => {
    id = newRecordId(entities.tags.idFormat, Date.parse(createdAt));
    k = shardOf(id, 4);
  });

  it('create: the record in its shard of the new count\'s listing, a copy in the earlier count\'s', () => {
    const items = createTransaction(changingShards(entities.tags, 1, 4), timed(), event, tables, 0);
    const sk = listingSortKey(timed());

    expect(kinds(items).slice(0, 2)).toEqual([`Put Records ten_1#tags#~${k}/4 ${sk}`, `Put Records ten_1#tags ${sk}`]);
    expect(items[0].Put!.Item).toMatchObject({ kind: 'record', ws: [1, 4] });
    expect(items[1].Put!.Item).toMatchObject({ kind: 'index' });
  });

  it('update of a record listed under the earlier count only: its item moves to the new count\'s listing, a copy takes its place under the guard', () => {
    const before = timed();
    const after = { ...before, version: 2, data: { name: 'y' } };
    const sk = listingSortKey(before);

    const items = updateTransaction(changingShards(entities.tags, 1, 4), before, after, event, tables, 0);

    expect(kinds(items).slice(0, 2)).toEqual([`Put Records ten_1#tags ${sk}`, `Put Records ten_1#tags#~${k}/4 ${sk}`]);
    expect(items[0].Put!.Item).toMatchObject({ kind: 'index', data: { name: 'y' } });
    expect(items[0].Put!.ConditionExpression).toContain('#kind = :record AND #version = :version');
    expect(items[1].Put!.Item).toMatchObject({ kind: 'record', ws: [1, 4], version: 2 });
    expect(new Set(keysOf(items)).size).toBe(items.length);
  });

  it('update of a record already moved: in place; once the earlier count is retired, its copy there goes and the item stays', () => {
    const before = timed({ ws: [1, 4] });
    const after = { ...before, version: 2 };
    const sk = listingSortKey(before);

    const during = updateTransaction(changingShards(entities.tags, 1, 4), before, after, event, tables, 0);
    const purging = updateTransaction(changingShards(entities.tags, 1, 4, true), before, after, event, tables, 0);

    expect(kinds(during).slice(0, 2)).toEqual([`Put Records ten_1#tags#~${k}/4 ${sk}`, `Put Records ten_1#tags ${sk}`]);
    expect(during[0].Put!.ConditionExpression).toContain('#version = :version');
    expect(kinds(purging).slice(0, 1)).toEqual([`Put Records ten_1#tags#~${k}/4 ${sk}`]);
  });

  it('soft delete of a record not moved yet: its item leaves the earlier count\'s listing for its detached key, no copy left', () => {
    const before = timed();
    const after = { ...before, version: 2, deletedAt: '2026-11-24T00:00:00.000Z' };

    const items = updateTransaction(changingShards(entities.tags, 1, 4), before, after, event, tables, 0);

    expect(kinds(items).slice(0, 2)).toEqual([`Delete ten_1#tags ${listingSortKey(before)}`, `Put Records tags#${id} #record`]);
    expect(items[0].Delete!.ConditionExpression).toContain('#kind = :record');
    expect(new Set(keysOf(items)).size).toBe(items.length);
  });

  it('restore of a soft-deleted record: back in the new count\'s listing, a copy in the earlier count\'s', () => {
    const before = timed({ version: 2, deletedAt: '2026-11-24T00:00:00.000Z' });
    const after = { ...timed(), version: 3 };
    const sk = listingSortKey(before);

    const items = updateTransaction(changingShards(entities.tags, 1, 4), before, after, event, tables, 0);

    expect(kinds(items).slice(0, 3)).toEqual([`Delete tags#${id} #record`, `Put Records ten_1#tags#~${k}/4 ${sk}`, `Put Records ten_1#tags ${sk}`]);
    expect(new Set(keysOf(items)).size).toBe(items.length);
  });

  it('refuses (503) a write of a record a newer layout listed after this one\'s write count: a merge back to a count this process knows as retired', () => {
    const stale = shardsChanged(entities.tags, 1, 2);

    expect(() => updateTransaction(stale, timed({ ws: [2, 1] }), { ...timed({ ws: [2, 1] }), version: 2 }, event, tables)).toThrow(/write shards of tags are changing/);
    expect(() => updateTransaction(stale, timed({ ws: [1, 2] }), { ...timed({ ws: [1, 2] }), version: 2 }, event, tables)).not.toThrow();
  });

  it('hard delete: the record where it stands (guarded), its copy under the other count', () => {
    const before = timed({ ws: [1, 4] });
    const sk = listingSortKey(before);

    const items = deleteTransaction(changingShards(entities.tags, 1, 4), before, event, tables, 0);

    expect(kinds(items).slice(0, 2)).toEqual([`Delete ten_1#tags#~${k}/4 ${sk}`, `Delete ten_1#tags ${sk}`]);
    expect(items[0].Delete!.ConditionExpression).toContain('#kind = :record');
  });
});

describe('updates that leave partial copies as they stand', () => {
  const long = 'a long description. '.repeat(100);
  const stored = (r: StoredRecord): StoredRecord => ({ ...r, copiesVersion: r.version });
  const copyPuts = (items: TransactItem[]) => items.filter((i) => i.Put?.Item?.kind === 'index').map((i) => String(i.Put!.Item!.pk));

  it('writes no copy when only a value the partial copies leave out changed', () => {
    const before = stored(task({}, { description: long }));
    const after = { ...before, data: { ...before.data, description: `${long} edited` }, updatedAt: '2026-01-02T00:00:00.000Z', version: 2 };

    const items = updateTransaction(layouts.tasks, before, after, { pk: 'e', sk: 'e' }, tables, 0);

    expect(copyPuts(items)).toEqual([]);
    expect(items[0].Put!.Item).toMatchObject({ kind: 'record', version: 2, copiesVersion: 2, data: { description: `${long} edited` } });
  });

  it('rewrites every copy when a value they hold changed, when they were full, or when the record is of an earlier layout', () => {
    const before = stored(task({}, { description: long }));
    const retitled = { ...before, data: { ...before.data, title: 'New' }, version: 2 };
    const short = stored(task({}, { description: 'short' }));
    const edited = (r: StoredRecord) => ({ ...r, data: { ...r.data, description: `${String(r.data.description)} edited` }, version: 2 });

    expect(copyPuts(updateTransaction(layouts.tasks, before, retitled, { pk: 'e', sk: 'e' }, tables, 0))).toHaveLength(6);
    expect(copyPuts(updateTransaction(layouts.tasks, short, edited(short), { pk: 'e', sk: 'e' }, tables, 0))).toHaveLength(6);
    const earlier = { ...before, copiesVersion: undefined };
    expect(copyPuts(updateTransaction(layouts.tasks, earlier, edited(earlier), { pk: 'e', sk: 'e' }, tables, 0))).toHaveLength(6);
    const lagging = { ...before, version: 3 };
    expect(copyPuts(updateTransaction(layouts.tasks, lagging, edited(lagging), { pk: 'e', sk: 'e' }, tables, 0))).toHaveLength(6);
  });

  it('still moves copies between partitions when an indexed value changes', () => {
    const before = stored(task({}, { description: long }));
    const after = { ...before, data: { ...before.data, description: 'x'.repeat(2000), status: 'completed' }, version: 2 };

    const items = updateTransaction(layouts.tasks, before, after, { pk: 'e', sk: 'e' }, tables, 0);

    // Every copy holds the status: all rewritten, the two in status=todo removed.
    expect(copyPuts(items).filter((pk) => pk.includes('status=completed'))).toHaveLength(2);
    expect(copyPuts(items)).toHaveLength(6);
    expect(items.filter((i) => i.Delete).map((i) => String(i.Delete!.Key!.pk))).toEqual(['ten_1#tasks#status=todo', 'ten_1#tasks#owner=usr_1#status=todo']);
  });

  it('never puts copiesVersion on a copy', () => {
    const record = stored(task({}, { description: 'short' }));

    expect(copyItem(entities.tasks, 'ten_1#tasks', record)).not.toHaveProperty('copiesVersion');
    expect(copyItem(entities.tasks, 'ten_1#tasks', { ...record, data: { ...record.data, description: long } })).not.toHaveProperty('copiesVersion');
  });
});
