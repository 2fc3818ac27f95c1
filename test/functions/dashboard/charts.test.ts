import { describe, expect, it } from 'vitest';
import { chartFilters, countsOf, dailySeries, overTimeQuery, share, stripFields, stripQuery } from '../../../dashboard/src/charts.js';
import type { EntityDescription } from '../../../dashboard/src/form.js';

const NOW = Date.parse('2024-03-01T10:00:00Z');

const tasks = {
  entity: 'task',
  slug: 'tasks',
  methods: ['GET'],
  schema: {
    title: { type: 'string' },
    status: { type: 'enum', values: ['todo', 'in_progress', 'completed'] },
    priority: { type: 'enum', values: ['low', 'medium', 'high'] },
    kind: { type: 'enum', values: ['a', 'b'] },
  },
  relations: {},
  permissions: { read: true, write: true, delete: true },
} satisfies EntityDescription;

describe('the charts’ requests', () => {
  it('count by the first two enum fields, with the view’s search and filter and nothing about pages or order', () => {
    const filters = chartFilters({ limit: '50', sort: 'title', order: 'asc', cursor: 'c', search: 'alpha', filter: '{"status":"todo"}' });

    expect(stripFields(tasks)).toEqual(['status', 'priority']);
    expect(stripQuery(stripFields(tasks), filters)).toEqual({ count: '', groupBy: 'status,priority', search: 'alpha', filter: '{"status":"todo"}' });
    expect(stripQuery([], filters)).toBeUndefined();
  });

  it('ask for the 30 UTC days up to today, across a month boundary (February of a leap year)', () => {
    expect(overTimeQuery({}, NOW)).toEqual({ count: '', interval: 'day', startDate: '2024-02-01', endDate: '2024-03-01' });
  });
});

describe('the charts’ series', () => {
  it('sums the counts of one field over the other, every value shown in its order, records without one last', () => {
    const groups = [
      { key: { status: 'todo', priority: 'high' }, count: 2 },
      { key: { status: 'todo', priority: 'low' }, count: 1 },
      { key: { status: null, priority: 'low' }, count: 4 },
    ];

    expect(countsOf(groups, 'status', ['todo', 'in_progress', 'completed'])).toEqual([
      { label: 'todo', count: 3 },
      { label: 'in_progress', count: 0 },
      { label: 'completed', count: 0 },
      { label: '(none)', count: 4 },
    ]);
    expect(countsOf(groups, 'priority', ['low', 'medium', 'high']).map((b) => b.count)).toEqual([5, 0, 2]);
  });

  it('gives each of the 30 days a bar, oldest first, 0 for a day without records', () => {
    const series = dailySeries([{ key: { createdAt: '2024-02-29' }, count: 7 }, { key: { createdAt: '2024-03-01' }, count: 2 }], NOW);

    expect(series).toHaveLength(30);
    expect(series[0]).toEqual({ label: '2024-02-01', count: 0 });
    expect(series.slice(-2)).toEqual([{ label: '2024-02-29', count: 7 }, { label: '2024-03-01', count: 2 }]);
  });

  it('draws each bar as its share of the largest, and nothing when every count is 0', () => {
    const bars = [{ label: 'a', count: 3 }, { label: 'b', count: 1 }];

    expect(share(3, bars)).toBe(100);
    expect(share(1, bars)).toBe(33.3);
    expect(share(0, [{ label: 'a', count: 0 }])).toBe(0);
  });
});
