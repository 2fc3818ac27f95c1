import { beforeAll, describe, expect, it } from 'vitest';
import { counterUpdates, recordCounts, writeCounts } from '../../../shared/data/counters.js';
import { buildLayout, type LiveLayout } from '../../../shared/data/layout.js';
import { listings } from '../../../shared/data/listings.js';
import type { StoredRecord } from '../../../shared/data/record-item.js';
import { createTransaction, deleteTransaction, updateTransaction } from '../../../shared/data/transactions.js';
import { definitions, event, kinds, tables } from './support.js';

let layouts: Record<string, LiveLayout>;

beforeAll(async () => {
  ({ layouts } = await definitions());
});

function order(data: Record<string, unknown>, overrides: Partial<StoredRecord> = {}): StoredRecord {
  return {
    entity: 'orders',
    id: 'ord_A',
    tenantId: 'ten_1',
    ownerId: 'usr_1',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    version: 1,
    data,
    sm: ['total', 'createdAt'],
    ...overrides,
  };
}

/** The count items' Updates (the day counter items' are checked in their own tests below). */
const updates = (items: ReturnType<typeof kinds>) => items.filter((k) => k.startsWith('Update') && !/^Update \S*#days(#~\S*)? /.test(k));
const dayUpdates = (items: ReturnType<typeof kinds>) => items.filter((k) => /^Update \S*#days(#~\S*)? /.test(k));

describe('counters: sums kept beside the counts', () => {
  it('a create adds its value and one value to the sum beside every count it adds', () => {
    const items = createTransaction(layouts.orders, order({ status: 'paid', total: 10.5 }, { sm: undefined }), event, tables, 0);

    expect(updates(kinds(items))).toEqual([
      'Update ten_1#orders #count#0 count 1, s:total 10.5, n:total 1, #status=paid 1, #status=paid|s:total 10.5, #status=paid|n:total 1',
      'Update ten_1#orders#owner=usr_1 #count#0 count 1, s:total 10.5, n:total 1, #status=paid 1, #status=paid|s:total 10.5, #status=paid|n:total 1',
    ]);
    expect(items[0].Put!.Item).toMatchObject({ sm: ['total', 'createdAt'], ix: layouts.orders.tokens });
  });

  it('a record without a number is counted but not summed', () => {
    const record = order({ status: 'paid' });

    const attributes = recordCounts(record, listings(layouts.orders, record), layouts.orders.sums.filter((s) => s.field === 'total')).map((d) => d.attribute);

    expect(attributes).toEqual(['count', 'count', '#status=paid', '#status=paid']);
  });

  it('an update that changes only the summed value adds the difference to the counters of its listings', () => {
    const before = order({ status: 'paid', total: 10.5 });

    const items = updateTransaction(layouts.orders, before, { ...before, version: 2, data: { status: 'paid', total: 12 } }, event, tables, 3);

    expect(updates(kinds(items))).toEqual([
      'Update ten_1#orders #count#3 s:total 1.5, #status=paid|s:total 1.5',
      'Update ten_1#orders#owner=usr_1 #count#3 s:total 1.5, #status=paid|s:total 1.5',
    ]);
  });

  it('an update that changes neither listings nor summed values writes no counter', () => {
    const before = order({ status: 'paid', total: 10.5, customerId: 'cus_1' });

    expect(updates(kinds(updateTransaction(layouts.orders, before, { ...before, version: 2, data: { ...before.data } }, event, tables)))).toEqual([]);
  });

  it('a move between listings takes the old value out of the old one and puts the new value in the new one', () => {
    const before = order({ status: 'pending', total: 4.5 });

    const items = updateTransaction(layouts.orders, before, { ...before, version: 2, data: { status: 'paid', total: 6 } }, event, tables, 1);

    expect(updates(kinds(items))).toEqual([
      'Update ten_1#orders #count#1 s:total 1.5, #status=paid 1, #status=paid|s:total 6, #status=paid|n:total 1, #status=pending -1, #status=pending|s:total -4.5, #status=pending|n:total -1',
      'Update ten_1#orders#owner=usr_1 #count#1 s:total 1.5, #status=paid 1, #status=paid|s:total 6, #status=paid|n:total 1, #status=pending -1, #status=pending|s:total -4.5, #status=pending|n:total -1',
    ]);
  });

  it('a value removed by an update is taken out of the sum and the number of values', () => {
    const before = order({ status: 'paid', total: 3 });

    expect(updates(kinds(updateTransaction(layouts.orders, before, { ...before, version: 2, data: { status: 'paid' } }, event, tables, 0)))).toEqual([
      'Update ten_1#orders #count#0 s:total -3, n:total -1, #status=paid|s:total -3, #status=paid|n:total -1',
      'Update ten_1#orders#owner=usr_1 #count#0 s:total -3, n:total -1, #status=paid|s:total -3, #status=paid|n:total -1',
    ]);
  });

  it('a hard delete takes its values out; a soft delete too, and a restore puts them back', () => {
    const before = order({ status: 'paid', total: 2.5 });
    const out = ['count -1, s:total -2.5, n:total -1, #status=paid -1, #status=paid|s:total -2.5, #status=paid|n:total -1'];

    expect(updates(kinds(deleteTransaction(layouts.orders, before, event, tables, 0))).map((k) => k.split(' ').slice(3).join(' '))).toEqual([...out, ...out]);
    const deleted = { ...before, version: 2, deletedAt: '2026-02-01T00:00:00.000Z' };
    expect(updates(kinds(updateTransaction(layouts.orders, before, deleted, event, tables, 0))).map((k) => k.split(' ').slice(3).join(' '))).toEqual([...out, ...out]);
    const restored = updates(kinds(updateTransaction(layouts.orders, deleted, { ...before, version: 3 }, event, tables, 0)));
    expect(restored.map((k) => k.split(' ').slice(3).join(' '))).toEqual(Array(2).fill('count 1, s:total 2.5, n:total 1, #status=paid 1, #status=paid|s:total 2.5, #status=paid|n:total 1'));
  });

  it('a record not counted under a sum yet (stored before it was declared) is not taken out of it: its value goes in whole', () => {
    const before = order({ status: 'paid', total: 8 }, { sm: undefined });

    const items = updateTransaction(layouts.orders, before, { ...before, version: 2, data: { status: 'paid', total: 9 } }, event, tables, 0);

    expect(updates(kinds(items))[0]).toBe('Update ten_1#orders #count#0 s:total 9, n:total 1, #status=paid|s:total 9, #status=paid|n:total 1');
    expect(items[0].Put!.ConditionExpression).toContain('attribute_not_exists(#sm)');
  });

  it('a sum no longer maintained (dropped from the layout) is neither taken out nor put in', () => {
    const dropped = buildLayout(layouts.orders.entity, { indexes: layouts.orders.indexes, legacy: [], sums: [], defaults: {}, settled: true, writeShards: 1 }, 0);
    const before = order({ status: 'paid', total: 8 }, { ix: dropped.tokens as string[] });
    const after = { ...before, data: { status: 'paid', total: 1 } };

    const deltas = writeCounts(dropped, { record: before, listings: listings(dropped, before, 'held') }, { record: after, listings: listings(dropped, after) });

    expect(counterUpdates(tables, deltas, 0)).toEqual([]);
  });
});

describe('counters: records per day', () => {
  /** Orders counted per day of createdAt (the default) and of a date field of their own. */
  const dated = () => {
    const entity = { ...layouts.orders.entity, fields: { ...layouts.orders.entity.fields, dueOn: { type: 'date' as const } }, aggregates: { days: ['createdAt', 'dueOn'] } };
    const sums = [{ field: 'createdAt', token: 'createdAt', by: 'day' as const, ready: true }, { field: 'dueOn', token: 'dueOn@2', by: 'day' as const, ready: true }];
    return buildLayout(entity, { indexes: layouts.orders.indexes, legacy: [], sums, defaults: {}, settled: true, writeShards: 1 }, 0);
  };

  it('a create adds 1 to its UTC day in the month item of each base partition, on the counter shard of the write', () => {
    const layout = dated();
    const record = order({ status: 'paid', dueOn: '2026-02-28' }, { createdAt: '2026-01-31T23:30:00.000-02:00', sm: undefined });

    expect(dayUpdates(kinds(createTransaction(layout, record, event, tables, 7)))).toEqual([
      'Update ten_1#orders#days createdAt#2026-02#7 2026-02-01 1',
      'Update ten_1#orders#days dueOn@2#2026-02#7 2026-02-28 1',
      'Update ten_1#orders#owner=usr_1#days createdAt#2026-02#7 2026-02-01 1',
      'Update ten_1#orders#owner=usr_1#days dueOn@2#2026-02#7 2026-02-28 1',
    ]);
  });

  it('an update moves a record between days only when its date changes; a record without one is not counted per day', () => {
    const layout = dated();
    const before = order({ status: 'paid', dueOn: '2026-02-28' }, { sm: ['createdAt', 'dueOn@2'] });

    const moved = updateTransaction(layout, before, { ...before, version: 2, data: { status: 'paid', dueOn: '2026-03-01' } }, event, tables, 0);
    const cleared = updateTransaction(layout, before, { ...before, version: 2, data: { status: 'paid' } }, event, tables, 0);
    const unchanged = updateTransaction(layout, before, { ...before, version: 2, updatedAt: '2026-01-05T00:00:00.000Z', data: { status: 'paid', dueOn: '2026-02-28', total: 3 } }, event, tables, 0);

    expect(dayUpdates(kinds(moved))).toEqual([
      'Update ten_1#orders#days dueOn@2#2026-03#0 2026-03-01 1',
      'Update ten_1#orders#owner=usr_1#days dueOn@2#2026-03#0 2026-03-01 1',
      'Update ten_1#orders#days dueOn@2#2026-02#0 2026-02-28 -1',
      'Update ten_1#orders#owner=usr_1#days dueOn@2#2026-02#0 2026-02-28 -1',
    ]);
    expect(dayUpdates(kinds(cleared))).toEqual(['Update ten_1#orders#days dueOn@2#2026-02#0 2026-02-28 -1', 'Update ten_1#orders#owner=usr_1#days dueOn@2#2026-02#0 2026-02-28 -1']);
    expect(dayUpdates(kinds(unchanged))).toEqual([]);
  });

  it('a soft delete takes the record out of its days and a restore puts it back', () => {
    const before = order({ status: 'paid' });
    const deleted = { ...before, version: 2, deletedAt: '2026-02-01T00:00:00.000Z' };

    expect(dayUpdates(kinds(updateTransaction(layouts.orders, before, deleted, event, tables, 0)))).toEqual([
      'Update ten_1#orders#days createdAt#2026-01#0 2026-01-01 -1',
      'Update ten_1#orders#owner=usr_1#days createdAt#2026-01#0 2026-01-01 -1',
    ]);
    expect(dayUpdates(kinds(updateTransaction(layouts.orders, deleted, { ...before, version: 3 }, event, tables, 0)))).toEqual([
      'Update ten_1#orders#days createdAt#2026-01#0 2026-01-01 1',
      'Update ten_1#orders#owner=usr_1#days createdAt#2026-01#0 2026-01-01 1',
    ]);
  });

  it('a record not counted per day yet (stored before day counts were declared) is counted by its next write, never taken out', () => {
    const before = order({ status: 'paid' }, { sm: ['total'] });

    expect(dayUpdates(kinds(updateTransaction(layouts.orders, before, { ...before, version: 2, data: { status: 'pending' } }, event, tables, 0)))).toEqual([
      'Update ten_1#orders#days createdAt#2026-01#0 2026-01-01 1',
      'Update ten_1#orders#owner=usr_1#days createdAt#2026-01#0 2026-01-01 1',
    ]);
  });
});

describe('counterUpdates', () => {
  it('adds a decimal change as its decimal, and nothing for values that cancel', () => {
    const change = counterUpdates(tables, [
      { pk: 'p', attribute: 's:total', amount: 0.3 },
      { pk: 'p', attribute: 's:total', amount: -0.1 },
    ], 0);
    const none = counterUpdates(tables, [
      { pk: 'p', attribute: 's:total', amount: 0.3 },
      { pk: 'p', attribute: 's:total', amount: -0.1 },
      { pk: 'p', attribute: 's:total', amount: -0.2 },
    ], 0);

    expect(change[0].Update!.ExpressionAttributeValues).toMatchObject({ ':d0': 0.2 });
    expect(none).toEqual([]);
  });
});
