import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../shared/errors.js';
import { definitionLayout } from '../../../shared/data/layout.js';
import { listingSortKey } from '../../../shared/data/partitions.js';
import { decodeQueryCursor, encodeQueryCursor } from '../../../shared/query/cursor.js';
import { parseDateBound, parseDateRange } from '../../../shared/query/dates.js';
import { parseListQuery } from '../../../shared/query/params.js';
import { createdAtKeyRange, planQuery } from '../../../shared/query/plan.js';
import { tasks } from './support.js';

const viewer = { tenantId: 'ten_1', userId: 'usr_1', admin: false };

describe('parseDateBound', () => {
  it('reads the three forms, UTC by default; a plain end date covers its whole day', () => {
    expect(parseDateBound('2026-03-04', 'start')).toBe('2026-03-04T00:00:00.000Z');
    expect(parseDateBound('2026-03-04', 'end')).toBe('2026-03-04T23:59:59.999Z');
    expect(parseDateBound('2026-03-04T10:00:00Z', 'start')).toBe('2026-03-04T10:00:00.000Z');
    expect(parseDateBound('2026-03-04T10:00:00+02:00', 'start')).toBe('2026-03-04T08:00:00.000Z');
    expect(parseDateBound('2026-03-04T10:00:00', 'end')).toBe('2026-03-04T10:00:00.000Z');
    expect(parseDateBound('2026-02-30', 'start')).toBeUndefined();
    expect(parseDateBound('yesterday', 'start')).toBeUndefined();
  });

  it('takes both spellings and refuses a bad bound or date field with 400 INVALID_REQUEST', () => {
    expect(parseDateRange(tasks, { from: '2026-03-04', to: '2026-03-05' })).toMatchObject({ start: '2026-03-04T00:00:00.000Z', end: '2026-03-05T23:59:59.999Z' });
    expect(parseDateRange(tasks, { startDate: '2026-03-04', dateField: 'dueAt' })?.field.name).toBe('dueAt');
    expect(() => parseDateRange(tasks, { startDate: 'soon' })).toThrow(BadRequestError);
    expect(() => parseDateRange(tasks, { startDate: '2026-03-04', dateField: 'title' })).toThrow(BadRequestError);
  });
});

describe('createdAtKeyRange', () => {
  it('contains exactly the sort keys of records created within the bounds (inclusive)', () => {
    const range = createdAtKeyRange('2026-03-04T00:00:00.000Z', '2026-03-04T23:59:59.999Z');
    const inside = (createdAt: string, id = 'tsk_x') => {
      const sk = listingSortKey({ createdAt, id });
      return sk >= range.lo && sk <= range.hi;
    };

    expect(inside('2026-03-04T00:00:00.000Z')).toBe(true);
    expect(inside('2026-03-04T23:59:59.999Z')).toBe(true);
    expect(inside('2026-03-03T23:59:59.999Z')).toBe(false);
    expect(inside('2026-03-05T00:00:00.000Z')).toBe(false);
  });
});

describe('planQuery', () => {
  const plan = (query: Record<string, string>) => planQuery(definitionLayout(tasks), viewer, parseListQuery(tasks, query));

  it('serves the default order from the caller\'s partition', () => {
    expect(plan({})).toMatchObject({ kind: 'partition', partition: 'ten_1#tasks#owner=usr_1' });
  });

  it('serves one indexed equality from the field partition (either spelling)', () => {
    expect(plan({ status: 'todo' })).toMatchObject({ kind: 'partition', partition: 'ten_1#tasks#owner=usr_1#status=todo' });
    expect(plan({ filter: '{"status":{"$eq":"todo"}}' })).toMatchObject({ kind: 'partition', partition: 'ten_1#tasks#owner=usr_1#status=todo' });
  });

  it('reads the narrowest partition for everything else', () => {
    expect(plan({ status: 'todo', priority: 'high' })).toMatchObject({ kind: 'read-all' });
    expect(plan({ status: 'todo', priority: 'high' }).candidates.map((c) => c.field)).toEqual(['status', 'priority']);
    expect(plan({ title: 'x' })).toMatchObject({ kind: 'read-all', partition: 'ten_1#tasks#owner=usr_1' });
    expect(plan({ search: 'x' }).kind).toBe('read-all');
    expect(plan({ sort: 'title' }).kind).toBe('read-all');
    expect(plan({ startDate: '2026-01-01' })).toMatchObject({ kind: 'read-all', keyRange: expect.any(Object) });
    expect(plan({ ids: 'tsk_a,tsk_b' }).kind).toBe('ids');
  });

  it('binds cursors to the query shape, not to the page', () => {
    expect(plan({ status: 'todo', page: '2' }).hash).toBe(plan({ status: 'todo' }).hash);
    expect(plan({ status: 'todo' }).hash).not.toBe(plan({ status: 'completed' }).hash);
    expect(plan({ limit: '10' }).hash).not.toBe(plan({}).hash);
    expect(planQuery(definitionLayout(tasks), { ...viewer, userId: 'usr_2' }, parseListQuery(tasks, {})).hash).not.toBe(plan({}).hash);
  });

  it('round-trips signed cursors and refuses garbage, edits and other keys', () => {
    const key = randomBytes(32);
    const text = encodeQueryCursor({ h: 'abc', p: 3, s: '8000000000000#tsk_a' }, key);

    expect(decodeQueryCursor(text, key)).toEqual({ h: 'abc', p: 3, s: '8000000000000#tsk_a' });
    expect(decodeQueryCursor('garbage', key)).toBeUndefined();
    expect(decodeQueryCursor(text, randomBytes(32))).toBeUndefined();
    const [payload, mac] = text.split('.');
    const edited = Buffer.from(JSON.stringify({ h: 'abc', p: 9, s: '8000000000000#tsk_a' })).toString('base64url');
    expect(decodeQueryCursor(`${edited}.${mac}`, key)).toBeUndefined();
    expect(decodeQueryCursor(`${payload}.${mac.slice(0, -2)}`, key)).toBeUndefined();
  });
});

describe('parseListQuery', () => {
  it('reads both spellings, fields, ids, distinct; ignores unknown parameters', () => {
    const spec = parseListQuery(tasks, { sortBy: 'title', sortOrder: 'desc', fields: 'title,status', ids: 'a,b', _: '123' });

    expect(spec.sort.map((k) => [k.field.name, k.direction])).toEqual([['title', 'desc']]);
    expect(spec.fields).toEqual(['title', 'status']);
    expect(spec.ids).toEqual(['a', 'b']);
    expect(spec.conditions).toEqual([]);
  });

  it('refuses protected and unknown fields in fields=, and distinct without one field', () => {
    expect(() => parseListQuery(tasks, { fields: 'secretKey' })).toThrow(BadRequestError);
    expect(() => parseListQuery(tasks, { fields: 'nope' })).toThrow(BadRequestError);
    expect(() => parseListQuery(tasks, { distinct: 'true', fields: 'title,status' })).toThrow(BadRequestError);
    expect(parseListQuery(tasks, { distinct: 'true', fields: 'status' }).distinct).toBe('status');
  });

  it('refuses a protected field as an equality parameter with INVALID_FILTER', () => {
    try {
      parseListQuery(tasks, { password: 'x' });
      throw new Error('expected 400');
    } catch (error) {
      expect((error as BadRequestError).code).toBe('INVALID_FILTER');
    }
  });
});
