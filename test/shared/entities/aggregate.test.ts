import { describe, expect, it } from 'vitest';
import { aggregate } from '../../../shared/entities/aggregate.js';
import { parseAggregateQuery } from '../../../shared/entities/aggregate-query.js';
import { definitions, task } from '../data/support.js';

describe('aggregate', () => {
  it('groups by two fields, sorted by key with null first, counting what it cannot sum', async () => {
    const { entities } = await definitions();
    const query = parseAggregateQuery(entities.tasks, { groupBy: 'status,assigneeId' });
    const records = [
      task({ id: 'a' }, { title: 'a', status: 'todo', assigneeId: 'u2' }),
      task({ id: 'b' }, { title: 'b', status: 'todo' }),
      task({ id: 'c' }, { title: 'c', status: 'completed', assigneeId: 'u1' }),
      task({ id: 'd' }, { title: 'd', status: 'todo', assigneeId: 'u2' }),
    ];

    expect(aggregate(records, query)).toEqual([
      { key: { status: 'completed', assigneeId: 'u1' }, count: 1 },
      { key: { status: 'todo', assigneeId: null }, count: 1 },
      { key: { status: 'todo', assigneeId: 'u2' }, count: 2 },
    ]);
  });

  it('answers one empty group without grouping: count 0', async () => {
    const { entities } = await definitions();

    expect(aggregate([], parseAggregateQuery(entities.tasks, {}))).toEqual([{ key: {}, count: 0 }]);
  });
});
