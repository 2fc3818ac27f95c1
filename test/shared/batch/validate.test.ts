import { describe, expect, it } from 'vitest';
import { MAX_BATCH_REQUESTS, parseBatch } from '../../../shared/batch/validate.js';

function detailsOf(body: unknown): Record<string, string> {
  try {
    parseBatch(body);
  } catch (error) {
    expect(error).toMatchObject({ status: 422, code: 'VALIDATION_FAILED' });
    return (error as { details: Record<string, string> }).details;
  }
  throw new Error('expected a validation error');
}

describe('batch body', () => {
  it('accepts 1 to 20 sub-requests and upper-cases methods', () => {
    const items = parseBatch({
      requests: [
        { id: 'a', method: 'get', path: '/tasks?limit=1' },
        { id: 'b', method: 'POST', path: '/tasks', body: { title: 'x' } },
      ],
    });

    expect(items).toEqual([
      { id: 'a', method: 'GET', path: '/tasks?limit=1' },
      { id: 'b', method: 'POST', path: '/tasks', body: { title: 'x' } },
    ]);
    expect(parseBatch({ requests: Array.from({ length: MAX_BATCH_REQUESTS }, (_, i) => ({ id: `r${i}`, method: 'GET', path: '/x' })) })).toHaveLength(20);
  });

  it('refuses a missing, empty or oversized list', () => {
    expect(detailsOf(undefined)).toHaveProperty('requests');
    expect(detailsOf({ requests: {} })).toHaveProperty('requests');
    expect(detailsOf({ requests: [] })).toHaveProperty('requests');
    expect(detailsOf({ requests: Array.from({ length: 21 }, (_, i) => ({ id: `r${i}`, method: 'GET', path: '/x' })) }).requests).toMatch(/at most 20/);
  });

  it('names every bad field by index', () => {
    const details = detailsOf({
      requests: [
        { id: 'ok', method: 'GET', path: '/tasks' },
        { method: 'GET', path: '/tasks' },
        { id: 'm', method: 'HEAD', path: '/tasks' },
        { id: 'p', method: 'GET', path: 'tasks' },
        { id: 'pp', method: 'GET', path: '//evil.example/x' },
        { id: 'b', method: 'POST', path: '/tasks', body: 'text' },
        { id: 'ok', method: 'GET', path: '/tasks' },
        'not an object',
      ],
    });

    expect(Object.keys(details).sort()).toEqual(
      ['requests[1].id', 'requests[2].method', 'requests[3].path', 'requests[4].path', 'requests[5].body', 'requests[6].id', 'requests[7]'].sort(),
    );
    expect(details['requests[6].id']).toMatch(/duplicates/);
  });
});
