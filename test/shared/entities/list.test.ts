import { describe, expect, it } from 'vitest';
import { parsePagination } from '../../../shared/query/params.js';
import { BadRequestError } from '../../../shared/errors.js';
import { paginationOf } from '../../../shared/entities/list.js';

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
