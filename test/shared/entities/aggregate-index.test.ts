import { describe, expect, it } from 'vitest';
import { indexPlan } from '../../../shared/entities/aggregate-index.js';
import { parseAggregateQuery } from '../../../shared/entities/aggregate-query.js';
import { buildLayout } from '../../../shared/data/layout.js';
import { planList } from '../../../shared/entities/list.js';
import { definitions } from '../data/support.js';

describe('indexPlan', () => {
  const admin = { tenantId: 'ten_1', userId: 'usr_1', admin: true };
  const owner = { tenantId: 'ten_1', userId: 'usr_1', admin: false };
  const planOf = async (params: Record<string, string>, viewer = admin) => {
    const { entities, layouts } = await definitions();
    const query = parseAggregateQuery(entities.tasks, params);
    return indexPlan(layouts.tasks, planList(layouts.tasks, viewer, query.spec), query);
  };

  it('reads the ends of the listing LIST reads for the caller: the base partition, or one indexed equality’s', async () => {
    expect(await planOf({ min: 'createdAt', max: 'createdAt' })).toMatchObject({ partition: 'ten_1#tasks', shards: 1, total: { partition: 'ten_1#tasks' } });
    expect((await planOf({ max: 'createdAt' }, owner))?.partition).toBe('ten_1#tasks#owner=usr_1');
    expect(await planOf({ count: '', min: 'createdAt', status: 'todo' })).toMatchObject({ partition: 'ten_1#tasks#status=todo', total: { partition: 'ten_1#tasks#status=todo', attribute: '#status=todo' } });
  });

  it.each([
    ['a min of another field', { min: 'updatedAt' }],
    ['a count alone', { count: '' }],
    ['a grouping', { min: 'createdAt', groupBy: 'status' }],
    ['a time bucket', { max: 'createdAt', interval: 'day' }],
    ['a search', { max: 'createdAt', search: 'word' }],
    ['a date range', { max: 'createdAt', startDate: '2026-01-01' }],
    ['a filter that is not an indexed equality', { max: 'createdAt', filter: JSON.stringify({ title: 'a' }) }],
  ])('leaves %s to the other paths', async (_label, params) => {
    expect(await planOf(params)).toBeUndefined();
  });

  it('reads no index a migration still builds: the equality is then a filter, for the scan', async () => {
    const { entities, layouts } = await definitions();
    const defined = layouts.tasks;
    const building = buildLayout(defined.entity, { indexes: defined.indexes.map((i) => ({ ...i, ready: i.field !== 'status' })), legacy: defined.legacy, defaults: {}, settled: true, writeShards: 1 }, 0);
    const query = parseAggregateQuery(entities.tasks, { max: 'createdAt', status: 'todo' });

    expect(indexPlan(building, planList(building, admin, query.spec), query)).toBeUndefined();
  });
});
