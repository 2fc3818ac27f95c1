import { describe, expect, it } from 'vitest';
import { counterPlan, dayPlan } from '../../../shared/entities/aggregate-counters.js';
import { parseAggregateQuery } from '../../../shared/entities/aggregate-query.js';
import { buildLayout } from '../../../shared/data/layout.js';
import { planList } from '../../../shared/entities/list.js';
import { definitions } from '../data/support.js';

describe('counterPlan', () => {
  const admin = { tenantId: 'ten_1', userId: 'usr_1', admin: true };
  const planOf = async (params: Record<string, string>) => {
    const { entities, layouts } = await definitions();
    const query = parseAggregateQuery(entities.tasks, params);
    return counterPlan(layouts.tasks, planList(layouts.tasks, admin, query.spec), query);
  };

  it('reads a count from the listing’s counters: alone, or of one indexed equality', async () => {
    expect((await planOf({}))?.total).toMatchObject({ partition: 'ten_1#tasks' });
    expect((await planOf({ assigneeId: 'usr_2' }))?.total).toMatchObject({ partition: 'ten_1#tasks#assigneeId=usr_2', base: 'ten_1#tasks' });
  });

  it('reads a count per enum value from the base partition’s counters, one source per value', async () => {
    const plan = await planOf({ groupBy: 'status' });

    expect(plan?.group?.field).toBe('status');
    expect(plan?.group?.values.map((v) => v.value)).toEqual(['todo', 'in_progress', 'completed']);
    expect(plan?.group?.values[0].source).toMatchObject({ partition: 'ten_1#tasks#status=todo', base: 'ten_1#tasks', attribute: '#status=todo' });
  });

  it.each([
    ['a min beside the count', { groupBy: 'status', min: 'createdAt' }],
    ['a time bucket', { interval: 'day' }],
    ['a search', { search: 'word' }],
    ['a date range', { startDate: '2024-01-01' }],
    ['a filter that is not an indexed equality', { filter: JSON.stringify({ title: 'a' }) }],
    ['two equalities', { status: 'todo', priority: 'low' }],
    ['a grouping and a filter', { groupBy: 'status', priority: 'low' }],
    ['a grouping by two fields', { groupBy: 'status,priority' }],
    ['a grouping by a reference (values unknown)', { groupBy: 'assigneeId' }],
  ])('leaves %s to the scan', async (_label, params) => {
    const defined = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Record<string, string>;
    expect(await planOf(defined)).toBeUndefined();
  });

  describe('sums and averages', () => {
    /** An orders aggregate's plan under the definition's layout, or one whose sums are `sums`. */
    const orderPlan = async (params: Record<string, string>, sums?: { field: string; token: string; ready: boolean }[]) => {
      const { entities, layouts } = await definitions();
      const defined = layouts.orders;
      const layout = sums ? buildLayout(defined.entity, { indexes: defined.indexes, legacy: defined.legacy, sums, defaults: {}, settled: true, writeShards: 1 }, 0) : defined;
      const query = parseAggregateQuery(entities.orders, params);
      return counterPlan(layout, planList(layout, admin, query.spec), query);
    };

    it('reads the sums of a summed field beside the counts, in the shapes counts are read', async () => {
      expect((await orderPlan({ sum: 'total', avg: 'total' }))?.sums).toEqual(new Map([['total', 'total']]));
      expect((await orderPlan({ groupBy: 'status', sum: 'total' }))?.group?.field).toBe('status');
      expect((await orderPlan({ status: 'paid', avg: 'total' }))?.total).toMatchObject({ partition: 'ten_1#orders#status=paid', attribute: '#status=paid' });
    });

    it('leaves to the scan a sum a migration still builds, a field not summed, and a min beside a sum', async () => {
      expect(await orderPlan({ sum: 'total' }, [{ field: 'total', token: 'total@3', ready: false }])).toBeUndefined();
      expect(await orderPlan({ avg: 'total' }, [])).toBeUndefined();
      expect((await orderPlan({ count: '' }, []))?.sums).toEqual(new Map());
      expect(await orderPlan({ sum: 'total', min: 'total' })).toBeUndefined();
    });
  });
});

describe('dayPlan', () => {
  const admin = { tenantId: 'ten_1', userId: 'usr_1', admin: true };
  const owner = { tenantId: 'ten_1', userId: 'usr_1', admin: false };
  const planOf = async (params: Record<string, string>, viewer = admin) => {
    const { entities, layouts } = await definitions();
    const query = parseAggregateQuery(entities.tasks, params);
    return dayPlan(layouts.tasks, planList(layouts.tasks, viewer, query.spec), query);
  };

  it('reads a count per day, week or month of createdAt from the caller’s base partition’s day counters', async () => {
    expect(await planOf({ interval: 'day' })).toEqual({ base: 'ten_1#tasks', shards: 1, token: 'createdAt' });
    expect((await planOf({ interval: 'week' }, owner))?.base).toBe('ten_1#tasks#owner=usr_1');
    expect(await planOf({ interval: 'month', startDate: '2026-01-01', endDate: '2026-01-30' })).toMatchObject({ from: '2026-01-01', to: '2026-01-30' });
    expect(await planOf({ interval: 'day', startDate: '2026-01-01T00:00:00Z' })).toMatchObject({ from: '2026-01-01', to: undefined });
  });

  it.each([
    ['no interval', { count: '' }],
    ['a date range that cuts a day', { interval: 'day', startDate: '2026-01-01T12:00:00Z' }],
    ['a date range on another field', { interval: 'day', dateField: 'updatedAt', startDate: '2026-01-01' }],
    ['a field not counted per day', { interval: 'day', dateField: 'updatedAt' }],
    ['a grouping', { interval: 'day', groupBy: 'status' }],
    ['a filter', { interval: 'day', status: 'todo' }],
    ['a search', { interval: 'day', search: 'word' }],
    ['a min beside the count', { interval: 'day', min: 'createdAt' }],
  ])('leaves %s to the scan (or the other counters)', async (_label, params) => {
    expect(await planOf(params)).toBeUndefined();
  });

  it('leaves day counts a migration still builds to the scan', async () => {
    const { entities, layouts } = await definitions();
    const defined = layouts.tasks;
    const building = buildLayout(defined.entity, { indexes: defined.indexes, legacy: defined.legacy, sums: [{ field: 'createdAt', token: 'createdAt@4', by: 'day', ready: false }], defaults: {}, settled: true, writeShards: 1 }, 0);
    const query = parseAggregateQuery(entities.tasks, { interval: 'day' });

    expect(dayPlan(building, planList(building, admin, query.spec), query)).toBeUndefined();
  });
});
