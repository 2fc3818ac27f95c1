import { describe, expect, it } from 'vitest';
import { parsePagination } from '../../../shared/query/params.js';
import { BadRequestError } from '../../../shared/errors.js';
import { distinctValues, paginationOf } from '../../../shared/entities/list.js';
import type { StoredRecord } from '../../../shared/data/record-item.js';
import { definitions } from '../data/support.js';

describe('parsePagination', () => {
  it('defaults to page 1 of 20', () => {
    expect(parsePagination({})).toEqual({ page: 1, limit: 20 });
  });

  it('caps limit at 100 instead of refusing it', () => {
    expect(parsePagination({ page: '3', limit: '500' })).toEqual({ page: 3, limit: 100 });
  });

  it.each(['0', '-1', '1.5', 'abc', '1e3', ' '])('refuses page and limit %j with 400 INVALID_REQUEST naming both', (value) => {
    try {
      parsePagination({ page: value, limit: value });
      throw new Error('expected a 400');
    } catch (error) {
      if (value === ' ') return; // blank is the same as absent
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).code).toBe('INVALID_REQUEST');
      expect((error as BadRequestError).details).toEqual({ page: 'must be a positive integer', limit: 'must be a positive integer' });
    }
  });

  it('keeps the cursor for the list to verify, and refuses page with cursor or a malformed cursor', () => {
    expect(parsePagination({ cursor: 'abc.def', limit: '10' })).toEqual({ page: 1, limit: 10, cursor: 'abc.def' });
    expect(() => parsePagination({ cursor: 'garbage' })).toThrow(BadRequestError);
    expect(() => parsePagination({ cursor: 'abc.def', page: '2' })).toThrow(BadRequestError);
  });
});

describe('paginationOf', () => {
  it('always has hasNext and hasPrev; hasNext exactly when there is a next cursor', () => {
    expect(paginationOf(1, 20, 45, 'c.m')).toEqual({ page: 1, limit: 20, total: 45, totalPages: 3, hasNext: true, hasPrev: false, nextCursor: 'c.m' });
    expect(paginationOf(3, 20, 45, null)).toEqual({ page: 3, limit: 20, total: 45, totalPages: 3, hasNext: false, hasPrev: true, nextCursor: null });
    expect(paginationOf(1, 20, 0)).toEqual({ page: 1, limit: 20, total: 0, totalPages: 0, hasNext: false, hasPrev: false, nextCursor: null });
  });
});

describe('distinctValues', () => {
  const record = (id: string, data: Record<string, unknown>): StoredRecord => ({
    entity: 'orders', id, tenantId: 'ten_1', ownerId: 'usr_1', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', version: 1, data,
  });

  it('gives a number field its values as numbers, in numeric order (as sort orders them), each once', async () => {
    const { entities } = await definitions();
    const records = [100, 21, 3, -2, 7.5, 0, 1, 21, -2].map((total, i) => record(`ord_${i}`, { total }));

    const values = distinctValues(entities.orders, [...records, record('ord_x', {}), record('ord_y', { total: null })], 'total');

    expect(values.map((v) => v.value)).toEqual([-2, 0, 1, 3, 7.5, 21, 100]);
    expect(values[4]).toEqual({ value: 7.5, label: '7.5', entityType: 'order' });
  });

  it('keeps text in UTF-8 byte order, as text', async () => {
    const { entities } = await definitions();
    const records = ['paid', 'Pending', 'cancelled', 'paid', '21', '3'].map((status, i) => record(`ord_${i}`, { status }));

    expect(distinctValues(entities.orders, records, 'status').map((v) => v.value)).toEqual(['21', '3', 'Pending', 'cancelled', 'paid']);
  });
});
