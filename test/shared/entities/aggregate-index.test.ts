/** Aggregates from the listing order: which listings are read (pure plans), and the groups made of their ends (client mocked: no I/O). */
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { fromListingEnds, indexPlan } from '../../../shared/entities/aggregate-index.js';
import { parseAggregateQuery } from '../../../shared/entities/aggregate-query.js';
import { buildLayout } from '../../../shared/data/layout.js';
import { planList } from '../../../shared/entities/list.js';
import { definitions } from '../data/support.js';

const admin = { tenantId: 'ten_1', userId: 'usr_1', admin: true };
const owner = { tenantId: 'ten_1', userId: 'usr_1', admin: false };

async function planOf(params: Record<string, string>, viewer = admin) {
  const { entities, layouts } = await definitions();
  const query = parseAggregateQuery(entities.tasks, params);
  return { query, index: indexPlan(layouts.tasks, planList(layouts.tasks, viewer, query.spec), query) };
}

describe('indexPlan', () => {
  it('reads the ends of the listing LIST reads for the caller: the base partition, or one indexed equality’s', async () => {
    expect((await planOf({ min: 'createdAt', max: 'createdAt' })).index).toEqual({ shards: 1, groups: [{ key: {}, partition: 'ten_1#tasks', total: expect.objectContaining({ partition: 'ten_1#tasks' }) }] });
    expect((await planOf({ max: 'createdAt' }, owner)).index?.groups.map((g) => g.partition)).toEqual(['ten_1#tasks#owner=usr_1']);
    expect((await planOf({ count: '', min: 'createdAt', status: 'todo' })).index?.groups).toEqual([
      { key: {}, partition: 'ten_1#tasks#status=todo', total: expect.objectContaining({ partition: 'ten_1#tasks#status=todo', attribute: '#status=todo' }) },
    ]);
  });

  it('reads one listing per value of a grouped enum, sorted by value, under the caller’s view, and checks them against its whole listing', async () => {
    const { index } = await planOf({ groupBy: 'status', min: 'createdAt' }, owner);

    expect(index?.groups.map((g) => [g.key, g.partition])).toEqual([
      [{ status: 'completed' }, 'ten_1#tasks#owner=usr_1#status=completed'],
      [{ status: 'in_progress' }, 'ten_1#tasks#owner=usr_1#status=in_progress'],
      [{ status: 'todo' }, 'ten_1#tasks#owner=usr_1#status=todo'],
    ]);
    expect(index?.whole).toMatchObject({ partition: 'ten_1#tasks#owner=usr_1' });
  });

  it.each([
    ['a min of another field', { min: 'updatedAt' }],
    ['a count alone', { count: '' }],
    ['a grouping by a field not enum nor boolean', { min: 'createdAt', groupBy: 'assigneeId' }],
    ['two groupings', { min: 'createdAt', groupBy: 'status,priority' }],
    ['a grouping beside a condition', { min: 'createdAt', groupBy: 'status', priority: 'high' }],
    ['a time bucket', { max: 'createdAt', interval: 'day' }],
    ['a search', { max: 'createdAt', search: 'word' }],
    ['a date range', { max: 'createdAt', startDate: '2026-01-01' }],
    ['a filter that is not an indexed equality', { max: 'createdAt', filter: JSON.stringify({ title: 'a' }) }],
  ])('leaves %s to the other paths', async (_label, params) => {
    expect((await planOf(params)).index).toBeUndefined();
  });

  it('reads no index a migration still builds: its equality is then a filter, and its grouping a scan', async () => {
    const { entities, layouts } = await definitions();
    const defined = layouts.tasks;
    const building = buildLayout(defined.entity, { indexes: defined.indexes.map((i) => ({ ...i, ready: i.field !== 'status' })), legacy: defined.legacy, defaults: {}, settled: true, writeShards: 1 }, 0);
    for (const params of [{ max: 'createdAt', status: 'todo' }, { max: 'createdAt', groupBy: 'status' }] as Record<string, string>[]) {
      const query = parseAggregateQuery(entities.tasks, params);
      expect(indexPlan(building, planList(building, admin, query.spec), query)).toBeUndefined();
    }
  });

  it('reads every write shard of a sharded layout', async () => {
    const { entities, layouts } = await definitions();
    const defined = layouts.tasks;
    const sharded = buildLayout(defined.entity, { indexes: defined.indexes, legacy: defined.legacy, defaults: {}, settled: true, writeShards: 4 }, 0);
    const query = parseAggregateQuery(entities.tasks, { max: 'createdAt' });

    expect(indexPlan(sharded, planList(sharded, admin, query.spec), query)?.shards).toBe(4);
  });
});

describe('fromListingEnds', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  beforeEach(() => dynamo.reset());

  /** A tasks table: the base partition's counter (its total and per-status counts), and each status listing's newest and oldest createdAt. */
  function table(counts: Record<string, number>, total: number, ends: Record<string, [string, string]>) {
    dynamo.on(QueryCommand).callsFake((input) => {
      const pk: string = input.ExpressionAttributeValues[':pk'];
      if (input.KeyConditionExpression.includes('BETWEEN')) {
        if (pk !== 'ten_1#tasks') return { Items: [] };
        return { Items: [{ pk, sk: '#count', count: total, ...Object.fromEntries(Object.entries(counts).map(([s, n]) => [`#status=${s}`, n])) }] };
      }
      const status = /#status=(\w+)$/.exec(pk)?.[1];
      const found = status ? ends[status] : undefined;
      return { Items: found ? [{ createdAt: input.ScanIndexForward ? found[1] : found[0] }] : [] };
    });
  }

  it('gives each value with records its first and last createdAt and count, sorted by value', async () => {
    table({ todo: 2, completed: 1 }, 3, { todo: ['2026-01-02T00:00:00.000Z', '2026-03-01T00:00:00.000Z'], completed: ['2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'] });
    const { query, index } = await planOf({ count: '', groupBy: 'status', min: 'createdAt', max: 'createdAt' });

    expect(await fromListingEnds(index!, query)).toEqual([
      { key: { status: 'completed' }, count: 1, min: { createdAt: '2026-02-01T00:00:00.000Z' }, max: { createdAt: '2026-02-01T00:00:00.000Z' } },
      { key: { status: 'todo' }, count: 2, min: { createdAt: '2026-01-02T00:00:00.000Z' }, max: { createdAt: '2026-03-01T00:00:00.000Z' } },
    ]);
  });

  it('leaves a grouping to the scan when records have no value (the null group is in no value’s listing)', async () => {
    table({ todo: 2 }, 3, { todo: ['2026-01-02T00:00:00.000Z', '2026-03-01T00:00:00.000Z'] });
    const { query, index } = await planOf({ groupBy: 'status', max: 'createdAt' });

    expect(await fromListingEnds(index!, query)).toBeUndefined();
  });

  it('answers null min and max, and a count of 0, without records', async () => {
    table({}, 0, {});
    const { query, index } = await planOf({ count: '', min: 'createdAt', max: 'createdAt' });

    expect(await fromListingEnds(index!, query)).toEqual([{ key: {}, count: 0, min: { createdAt: null }, max: { createdAt: null } }]);
  });
});
