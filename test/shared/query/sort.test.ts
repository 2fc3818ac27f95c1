import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../shared/errors.js';
import { comparator, isDefaultOrder, parseSort } from '../../../shared/query/sort.js';
import { tasks } from './support.js';

function sortError(run: () => unknown, key = 'sort'): void {
  try {
    run();
  } catch (error) {
    expect((error as BadRequestError).code).toBe('INVALID_SORT');
    expect((error as BadRequestError).status).toBe(400);
    expect((error as BadRequestError).details).toHaveProperty(key);
    return;
  }
  throw new Error('expected INVALID_SORT');
}

const r = (id: string, data: Record<string, unknown>, createdAt = '2026-01-01T00:00:00.000Z') => ({ id, createdAt, data });

describe('parseSort', () => {
  it('pairs comma lists of fields and orders; a missing order is asc', () => {
    expect(parseSort(tasks, 'priority,title,createdAt', 'desc,asc').map((k) => [k.field.name, k.direction])).toEqual([
      ['priority', 'desc'],
      ['title', 'asc'],
      ['createdAt', 'asc'],
    ]);
  });

  it('knows the default order', () => {
    expect(isDefaultOrder(parseSort(tasks, undefined, undefined))).toBe(true);
    expect(isDefaultOrder(parseSort(tasks, 'createdAt', 'desc'))).toBe(true);
    expect(isDefaultOrder(parseSort(tasks, 'createdAt', 'asc'))).toBe(false);
  });

  it('refuses unknown, protected and unsortable fields, and bad orders', () => {
    sortError(() => parseSort(tasks, 'colour', undefined));
    sortError(() => parseSort(tasks, 'secretKey', undefined));
    sortError(() => parseSort(tasks, 'internal', undefined));
    sortError(() => parseSort(tasks, 'title', 'up'), 'order');
  });
});

describe('comparator', () => {
  it('sorts by several keys with mixed orders and breaks ties by id ascending', () => {
    const records = [
      r('tsk_d', { priority: 'high', title: 'b' }),
      r('tsk_b', { priority: 'low', title: 'a' }),
      r('tsk_c', { priority: 'high', title: 'b' }),
      r('tsk_a', { priority: 'high', title: 'a' }),
    ];

    const sorted = [...records].sort(comparator(parseSort(tasks, 'priority,title', 'asc,desc')));

    expect(sorted.map((x) => x.id)).toEqual(['tsk_c', 'tsk_d', 'tsk_a', 'tsk_b']);
  });

  it('default order: createdAt descending, then id ascending (identical createdAt)', () => {
    const records = [r('tsk_b', {}, '2026-01-01T00:00:00.000Z'), r('tsk_a', {}, '2026-01-01T00:00:00.000Z'), r('tsk_c', {}, '2026-01-02T00:00:00.000Z')];

    expect([...records].sort(comparator([])).map((x) => x.id)).toEqual(['tsk_c', 'tsk_a', 'tsk_b']);
  });

  it('puts missing values first ascending and last descending, numbers numerically', () => {
    const records = [r('tsk_a', { estimate: 10 }), r('tsk_b', {}), r('tsk_c', { estimate: 9 })];

    expect([...records].sort(comparator(parseSort(tasks, 'estimate', 'asc'))).map((x) => x.id)).toEqual(['tsk_b', 'tsk_c', 'tsk_a']);
    expect([...records].sort(comparator(parseSort(tasks, 'estimate', 'desc'))).map((x) => x.id)).toEqual(['tsk_a', 'tsk_c', 'tsk_b']);
  });
});
