/** A list's or a read's query parsed once into typed values (shared/entities/query.ts). */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/errors.js';
import { listQueryOf, parseListQueryString, parseReadQueryString } from '../../../shared/entities/query.js';
import { tasks } from '../query/support.js';

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a refusal');
}

describe('the entity query parsed once', () => {
  it('parses a LIST query string into what to read and how to show it', () => {
    const query = parseListQueryString(tasks, { page: '2', limit: '500', status: 'done', fields: 'title', sort: 'createdAt', order: 'desc' });

    expect(query.spec).toMatchObject({ page: 2, limit: 100, fields: ['title'] });
    expect(query.spec.conditions).toHaveLength(1);
    expect(query.view.fields).toEqual(['title']);
    expect(query.view.includes).toEqual([]);
  });

  it('refuses an unknown LIST or READ parameter with 400 naming it', () => {
    expect(refusal(() => parseListQueryString(tasks, { stauts: 'done' }))).toMatchObject({ status: 400, code: 'INVALID_REQUEST', details: { stauts: expect.any(String) } });
    expect(refusal(() => parseReadQueryString(tasks, { page: '2' }))).toMatchObject({ status: 400, code: 'INVALID_REQUEST', details: { page: expect.any(String) } });
  });

  it("builds GraphQL's list query from typed arguments by the same rules", () => {
    const query = listQueryOf(tasks, { page: 1, limit: 500, filter: { status: 'done', title: undefined }, search: 'Milk' });

    expect(query.spec).toMatchObject({ page: 1, limit: 100, words: ['milk'] });
    expect(query.spec.conditions).toHaveLength(1);
    expect(refusal(() => listQueryOf(tasks, { filter: { nope: 1 } })).status).toBe(400);
  });
});
