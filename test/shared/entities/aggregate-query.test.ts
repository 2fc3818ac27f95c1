import { describe, expect, it } from 'vitest';
import { aggregatableFields, aggregateQueryOf, bucketOf, parseAggregateQuery } from '../../../shared/entities/aggregate-query.js';
import { BadRequestError } from '../../../shared/errors.js';
import { definitions } from '../data/support.js';

describe('bucketOf', () => {
  it.each([
    ['2024-01-31T23:30:00.000Z', 'day', '2024-01-31'],
    // An offset moves the instant across the UTC day and month boundary.
    ['2024-01-31T23:30:00-02:00', 'day', '2024-02-01'],
    ['2024-01-31T23:30:00-02:00', 'month', '2024-02-01'],
    ['2024-02-29', 'month', '2024-02-01'],
    ['2024-01-28', 'week', '2024-01-22'],
    ['2024-01-29', 'week', '2024-01-29'],
    ['2024-02-04T23:59:59.999Z', 'week', '2024-01-29'],
    ['2020-12-31', 'week', '2020-12-28'],
  ] as const)('puts %s in the %s of %s (UTC)', (value, interval, bucket) => {
    expect(bucketOf(value, interval)).toBe(bucket);
  });

  it('puts a record without a date in the null bucket', () => {
    expect(bucketOf(undefined, 'day')).toBeNull();
    expect(bucketOf('not a date', 'day')).toBeNull();
  });
});

describe('parseAggregateQuery', () => {
  it('names every parameter it refuses in one 400 INVALID_REQUEST', async () => {
    const { entities } = await definitions();

    try {
      parseAggregateQuery(entities.tasks, { sum: 'title', groupBy: 'description', interval: 'hour', page: '2' });
      throw new Error('expected a 400');
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).code).toBe('INVALID_REQUEST');
      expect(Object.keys((error as BadRequestError).details ?? {}).sort()).toEqual(['groupBy', 'interval', 'page', 'sum']);
    }
  });

  it('implies count only when no other function is asked', async () => {
    const { entities } = await definitions();

    expect(parseAggregateQuery(entities.tasks, {}).count).toBe(true);
    expect(parseAggregateQuery(entities.tasks, { max: 'createdAt' }).count).toBe(false);
    expect(parseAggregateQuery(entities.tasks, { max: 'createdAt', count: '*' }).count).toBe(true);
  });
});

describe('aggregateQueryOf', () => {
  it('reads typed arguments as the query string REST would take', async () => {
    const { entities } = await definitions();

    const typed = aggregateQueryOf(entities.orders, { count: true, sum: ['total'], groupBy: ['status'], interval: 'day', filter: { status: 'paid' }, search: 'x' });
    const text = parseAggregateQuery(entities.orders, { count: '', sum: 'total', groupBy: 'status', interval: 'day', filter: '{"status":"paid"}', search: 'x' });

    expect(typed).toEqual(text);
  });

  it('refuses what REST refuses, with the same parameter named', async () => {
    const { entities } = await definitions();

    expect(() => aggregateQueryOf(entities.orders, { groupBy: ['total'] })).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST', details: { groupBy: expect.stringContaining("'total'") } }));
  });
});

describe('aggregatableFields', () => {
  it('names the fields each use accepts, createdAt and updatedAt among the dates', async () => {
    const { entities } = await definitions();

    expect(aggregatableFields(entities.orders)).toEqual({ group: ['customerId', 'status'], number: ['total'], date: ['createdAt', 'updatedAt'] });
  });
});
