/**
 * The explorer's view as the URL keeps it and as the LIST request sends it (dashboard/src/query.ts).
 */
import { describe, expect, it } from 'vitest';
import { clientCall, curlCommand, emptyView, filterObject, filterRows, listQuery, paramsToView, viewToParams } from '../../../dashboard/src/query.js';

describe('the view in the URL', () => {
  it('round-trips search, sort, filters, page size and cursors', () => {
    const view = {
      ...emptyView(),
      search: 'alpha beta',
      sort: 'price',
      order: 'desc' as const,
      limit: 50,
      filters: [
        { field: 'price', op: '$gte' as const, value: '10' },
        { field: 'price', op: '$lt' as const, value: '20' },
        { field: 'status', op: '$in' as const, value: 'active,inactive' },
      ],
      cursor: 'abc.def',
      trail: ['aaa.bbb'],
    };
    const params = viewToParams(view, new Set(['price']));

    expect(JSON.parse(params.get('filter')!)).toEqual({ price: { $gte: 10, $lt: 20 }, status: { $in: ['active', 'inactive'] } });
    expect(paramsToView(new URLSearchParams(params.toString()))).toEqual(view);
  });

  it('leaves defaults out of the URL and ignores a page size that is not offered', () => {
    expect(viewToParams(emptyView()).toString()).toBe('');
    expect(paramsToView(new URLSearchParams('limit=7')).limit).toBe(20);
  });

  it('reads a hand-written filter: a plain value is $eq, unknown operators are dropped', () => {
    expect(filterRows({ status: 'todo', title: { $contains: 'x', $regex: 'y' } })).toEqual([
      { field: 'status', op: '$eq', value: 'todo' },
      { field: 'title', op: '$contains', value: 'x' },
    ]);
    expect(paramsToView(new URLSearchParams('filter=not-json')).filters).toEqual([]);
  });
});

describe('the LIST request', () => {
  it('names the API\'s own parameters and types filter values', () => {
    const query = listQuery({ ...emptyView(), search: 'x', sort: 'title', filters: [{ field: 'done', op: '$null', value: 'true' }] });
    expect(query).toEqual({ limit: '20', search: 'x', sort: 'title', order: 'asc', filter: '{"done":{"$null":true}}' });
    expect(filterObject([{ field: '', op: '$eq', value: 'x' }])).toBeUndefined();
  });

  it('is shown as curl and as a typed-client call', () => {
    const query = { limit: '20', filter: '{"title":{"$contains":"it\'s"}}' };
    expect(curlCommand('http://127.0.0.1:3000', '/api/v1/tasks', query)).toBe(
      `curl -H "Authorization: Bearer $API_KEY" 'http://127.0.0.1:3000/api/v1/tasks?limit=20&filter=%7B%22title%22%3A%7B%22%24contains%22%3A%22it%27s%22%7D%7D'`,
    );
    expect(clientCall('http://127.0.0.1:3000', '/api/v1/tasks', query)).toContain(`await api.GET("/api/v1/tasks", {`);
    expect(clientCall('http://127.0.0.1:3000', '/api/v1/tasks', query)).toContain(`      limit: 20,`);
  });
});

describe('columns in the view', async () => {
  const { moveColumn, visibleColumns } = await import('../../../dashboard/src/query.js');

  it('keeps the chosen columns, their order and widths in the URL', () => {
    const view = { ...emptyView(), columns: ['title', 'id', 'status'], widths: { title: 240, status: 96 } };
    const params = viewToParams(view);

    expect(params.get('cols')).toBe('title,id,status');
    expect(params.get('widths')).toBe('title:240,status:96');
    expect(paramsToView(new URLSearchParams(params.toString()))).toMatchObject({ columns: ['title', 'id', 'status'], widths: { title: 240, status: 96 } });
    expect(listQuery(view)).toEqual({ limit: '20' });
  });

  it('ignores widths out of bounds, and columns the entity no longer has', () => {
    expect(paramsToView(new URLSearchParams('widths=title:3,status:99999')).widths).toEqual({ status: 1200 });
    expect(visibleColumns({ columns: ['gone', 'title'] }, ['id', 'title'])).toEqual(['title']);
    expect(visibleColumns({ columns: [] }, ['id', 'title'])).toEqual(['id', 'title']);
  });

  it('moves a column one place left or right, and not past either end', () => {
    expect(moveColumn(['a', 'b', 'c'], 'b', -1)).toEqual(['b', 'a', 'c']);
    expect(moveColumn(['a', 'b', 'c'], 'b', 1)).toEqual(['a', 'c', 'b']);
    expect(moveColumn(['a', 'b', 'c'], 'a', -1)).toEqual(['a', 'b', 'c']);
  });
});

describe('the live total', async () => {
  const { liveTotal } = await import('../../../dashboard/src/query.js');

  it('adds the rows created live, less the shown rows deleted since, once each', () => {
    const marks = new Map([
      ['new1', 'created'],
      ['p2', 'deleted'],
      ['elsewhere', 'deleted'],
      ['p1', 'updated'],
    ] as const);

    expect(liveTotal(10, ['p1', 'p2'], [{ id: 'new1' }, { id: 'p1' }], marks)).toBe(10);
    expect(liveTotal(10, ['p1'], [{ id: 'new1' }], new Map([['new1', 'created']]))).toBe(11);
    expect(liveTotal(10, ['p1'], [{ id: 'new1' }], new Map([['new1', 'deleted']]))).toBe(10);
  });
});
