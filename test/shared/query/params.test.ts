import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../shared/errors.js';
import { parseDateRange } from '../../../shared/query/dates.js';
import { operand } from '../../../shared/query/filter.js';
import { parseListQuery, refuseUnknownParameters } from '../../../shared/query/params.js';
import type { LoadedEntity } from '../../../shared/registry/types.js';
import { tasks } from './support.js';

const withDate: LoadedEntity = { ...tasks, fields: { ...tasks.fields, dueOn: { type: 'date' } } };

function refusal(run: () => unknown): BadRequestError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return error as BadRequestError;
  }
  throw new Error('expected a 400');
}

describe('refuseUnknownParameters', () => {
  it('names every parameter that is neither documented nor a field, with 400 INVALID_REQUEST', () => {
    const error = refusal(() => parseListQuery(tasks, { stauts: 'todo', limit: '5', sortt: 'title' }));

    expect(error.code).toBe('INVALID_REQUEST');
    expect(Object.keys(error.details!)).toEqual(['stauts', 'sortt']);
  });

  it('accepts LIST parameters, fields, metadata paths, includeFields[...] and the ignored _ and utm_*', () => {
    const query = {
      page: '1', limit: '5', sort: 'title', order: 'asc', status: 'todo', 'metadata.stage': 'x', 'includeFields[assignee]': 'name',
      _: '123', utm_source: 'mail', dateField: 'dueAt', from: '2026-01-01', fields: 'title', replaceMetadata: 'true',
    };

    expect(() => refuseUnknownParameters(tasks, query, 'list')).not.toThrow();
  });

  it('takes on READ only the READ parameters and the fields', () => {
    expect(() => refuseUnknownParameters(tasks, { fields: 'title', include: 'assignee', mergeMetadata: 'true', status: 'todo', _: '1' }, 'read')).not.toThrow();
    expect(Object.keys(refusal(() => refuseUnknownParameters(tasks, { page: '2', feilds: 'x' }, 'read')).details!)).toEqual(['page', 'feilds']);
  });
});

describe('date fields in queries', () => {
  it('takes calendar dates as filter values and refuses anything else', () => {
    const dueOn = { name: 'dueOn', path: ['data', 'dueOn'], type: 'date' as const, sortable: true };

    expect(operand(dueOn, '$gte', '2024-02-29')).toBe('2024-02-29');
    expect(() => operand(dueOn, '$gte', '2023-02-29')).toThrow(BadRequestError);
    expect(() => operand(dueOn, '$eq', '2024-02-01T00:00:00Z')).toThrow(BadRequestError);
  });

  it('turns date-range bounds on a date field into the days they fall on', () => {
    expect(parseDateRange(withDate, { dateField: 'dueOn', startDate: '2026-03-04', endDate: '2026-03-05T23:30:00-02:00' })).toMatchObject({ start: '2026-03-04', end: '2026-03-06' });
  });

  it('refuses a dateField that is neither a date nor a date-time field', () => {
    expect(Object.keys(refusal(() => parseDateRange(withDate, { dateField: 'title', from: '2026-01-01' })).details!)).toEqual(['dateField']);
  });
});
