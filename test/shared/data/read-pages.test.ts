/** Reading listing partitions: pages, totals, and the records behind partial copies (client mocked: no I/O). */
import { BatchGetCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryAll } from '../../../shared/data/read-all.js';
import { firstPage, pageAfter, queryPartition, readCounter, readCounters, readCounterTotals, readListingEnds, skipEntries } from '../../../shared/data/read-pages.js';
import { copyItem, recordItem } from '../../../shared/data/items.js';
import { listingSortKey } from '../../../shared/data/partitions.js';
import type { StoredRecord } from '../../../shared/data/record-item.js';
import { tableName } from '../../../shared/data/client.js';
import { definitionLayout, type LiveLayout } from '../../../shared/data/layout.js';
import { loadDefinitions, type LoadedEntity } from '../../../shared/registry/index.js';

const dynamo = mockClient(DynamoDBDocumentClient);
beforeEach(() => dynamo.reset());
let tasks: LoadedEntity;
let layout: LiveLayout;
beforeAll(async () => {
  tasks = (await loadDefinitions()).find((e) => e.slug === 'tasks')!;
  layout = definitionLayout(tasks);
});
afterEach(() => vi.restoreAllMocks());
const p = { partition: 'p' };

describe('listing reads', () => {
  it('reads the total (every counter shard, and a counter of earlier versions) and page 1 in one Query starting at the counters', async () => {
    dynamo.on(QueryCommand).resolves({
      Items: [
        { pk: 'p', sk: '#count', count: 30 },
        { pk: 'p', sk: '#count#0', count: 5 },
        { pk: 'p', sk: '#count#7', count: 7, '#status=todo': 99 },
        { pk: 'p', sk: '8#a', kind: 'index', id: 'a', data: {} },
        { pk: 'p', sk: '8#b', kind: 'index', id: 'b', data: {} },
      ],
    });

    const page = await firstPage(layout, p, 2);

    expect(page.total).toBe(42);
    expect(page.records.map((r) => r.id)).toEqual(['a', 'b']);
    expect(page.records[0]).not.toHaveProperty('pk');
    expect(page.lastSk).toBe('8#b');
    const input = dynamo.commandCalls(QueryCommand)[0].args[0].input;
    expect(input).toMatchObject({ KeyConditionExpression: '#pk = :pk AND #sk >= :sk', ExpressionAttributeValues: { ':pk': 'p', ':sk': '#count' }, Limit: 3 + 11, ConsistentRead: true });
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(1);
    expect(page.more).toBe(false);
  });

  it("adds, for an indexed field's partition, its count kept in the base partition's counter items", async () => {
    dynamo
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'b#status=todo', ':sk': '#count' } })
      .resolves({ Items: [{ pk: 'b#status=todo', sk: '#count', count: 2 }, { pk: 'b#status=todo', sk: '8#a', id: 'a', data: {} }] })
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'b#status=todo', ':lo': '#count', ':hi': '#count#~' } })
      .resolves({ Items: [{ pk: 'b#status=todo', sk: '#count', count: 2 }] })
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'b', ':lo': '#count', ':hi': '#count#~' } })
      .resolves({ Items: [{ pk: 'b', sk: '#count#1', count: 9, '#status=todo': 3 }, { pk: 'b', sk: '#count#4', count: 1, '#status=todo': 1, '#status=done': 5 }] });
    const source = { partition: 'b#status=todo', base: 'b', attribute: '#status=todo' };

    expect((await firstPage(layout, source, 20)).total).toBe(6);
    expect(await readCounter(source)).toBe(6);
    expect(await readCounters([source, { partition: 'b' }])).toEqual(new Map([['b#status=todo', 6], ['b', 10]]));
  });

  it("reads a partition's sums beside its count: its own counter items', and for a consolidated value its base's attributes", async () => {
    dynamo
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'b#status=paid', ':lo': '#count', ':hi': '#count#~' } })
      .resolves({ Items: [] })
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'b', ':lo': '#count', ':hi': '#count#~' } })
      .resolves({
        Items: [
          { pk: 'b', sk: '#count#1', count: 4, 's:total': 10.5, 'n:total': 3, '#status=paid': 2, '#status=paid|s:total': 7.5, '#status=paid|n:total': 2 },
          { pk: 'b', sk: '#count#6', count: 1, 's:total': 2, 'n:total': 1, '#status=paid': 1, '#status=paid|s:total': 2, '#status=paid|n:total': 1 },
        ],
      });
    const paid = { partition: 'b#status=paid', base: 'b', attribute: '#status=paid' };

    const totals = await readCounterTotals([{ partition: 'b' }, paid], ['total', 'price']);

    expect(totals.get('b')).toEqual({ count: 5, sums: new Map([['total', { sum: 12.5, n: 4 }], ['price', { sum: 0, n: 0 }]]) });
    expect(totals.get('b#status=paid')).toEqual({ count: 3, sums: new Map([['total', { sum: 9.5, n: 3 }], ['price', { sum: 0, n: 0 }]]) });
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(2);
  });

  it('completes a page cut short at 1 MB from LastEvaluatedKey, and reads one more item to know a next page exists', async () => {
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ pk: 'p', sk: '#count', count: 5 }, { pk: 'p', sk: '8#a', id: 'a', data: {} }], LastEvaluatedKey: { pk: 'p', sk: '8#a' } })
      .resolvesOnce({ Items: [{ pk: 'p', sk: '8#b', id: 'b', data: {} }], LastEvaluatedKey: { pk: 'p', sk: '8#b' } })
      .resolvesOnce({ Items: [{ pk: 'p', sk: '8#c', id: 'c', data: {} }, { pk: 'p', sk: '8#d', id: 'd', data: {} }] });

    const page = await firstPage(layout, p, 3);

    expect(page.records.map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(page).toMatchObject({ total: 5, lastSk: '8#c', more: true });
    expect(dynamo.commandCalls(QueryCommand).map((c) => c.args[0].input.Limit)).toEqual([4 + 11, 3, 2]);
    expect(dynamo.commandCalls(QueryCommand)[2].args[0].input.ExclusiveStartKey).toEqual({ pk: 'p', sk: '8#b' });
  });

  it('skips entries reading keys only, and stops at once when the page is past the end', async () => {
    dynamo.on(QueryCommand).resolvesOnce({ Items: [{ sk: '#count', count: 1 }, { sk: '#count#2', count: 2 }, { sk: '8#a' }, { sk: '8#b' }, { sk: '8#c' }] });

    expect(await skipEntries(p, 20)).toEqual({ total: 3 });
    const input = dynamo.commandCalls(QueryCommand)[0].args[0].input;
    expect(input.ProjectionExpression).toBe('#sk, #count');
  });

  it('skips exactly the entries asked for when the Query (asked for room for the counters) brings more', async () => {
    dynamo.on(QueryCommand).resolvesOnce({ Items: [{ sk: '#count#1', count: 5 }, { sk: '8#a' }, { sk: '8#b' }, { sk: '8#c' }, { sk: '8#d' }, { sk: '8#e' }] });

    expect(await skipEntries(p, 2)).toEqual({ total: 5, lastSk: '8#b' });
    expect(dynamo.commandCalls(QueryCommand)[0].args[0].input.Limit).toBe(2 + 11);
  });

  it('follows LastEvaluatedKey until enough entries are skipped', async () => {
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ sk: '#count#0', count: 10 }, { sk: '8#a' }, { sk: '8#b' }], LastEvaluatedKey: { pk: 'p', sk: '8#b' } })
      .resolvesOnce({ Items: [{ sk: '8#c' }] });

    expect(await skipEntries(p, 3)).toEqual({ total: 10, lastSk: '8#c' });
    expect(dynamo.commandCalls(QueryCommand)[1].args[0].input).toMatchObject({ Limit: 1, ExclusiveStartKey: { pk: 'p', sk: '8#b' } });
  });
});

describe('partial listing copies', () => {
  const base = 'ten_1#tasks';
  const LONG = 'x'.repeat(2000);
  function task(id: string, minute: number, data: Record<string, unknown> = {}): StoredRecord {
    const at = `2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`;
    return { entity: 'tasks', id, tenantId: 'ten_1', ownerId: 'usr_1', createdAt: at, updatedAt: at, version: 1, data: { title: id, status: 'todo', priority: 'low', ...data } };
  }
  const copy = (partition: string, r: StoredRecord) => copyItem(tasks, partition, r);
  const batchOf = (n: number) => dynamo.commandCalls(BatchGetCommand)[n].args[0].input.RequestItems!;

  it('replaces a partial copy by its record, read with one strongly consistent BatchGetItem, and keeps full copies as they are', async () => {
    const short = task('tsk_a', 59);
    const long = task('tsk_b', 58, { description: LONG });
    dynamo.on(QueryCommand).resolves({ Items: [{ pk: base, sk: '#count#0', count: 2 }, copy(base, short), copy(base, long)] });
    dynamo.on(BatchGetCommand).resolves({ Responses: { [tableName('records')]: [recordItem(layout, long)] } });

    const page = await firstPage(layout, { partition: base }, 20);

    expect(page.records).toEqual([short, { ...long, copiesVersion: 1, ix: layout.tokens, sm: layout.sumTokens }]);
    expect(page.total).toBe(2);
    expect(dynamo.commandCalls(BatchGetCommand)).toHaveLength(1);
    expect(Object.values(batchOf(0))[0]).toEqual({ Keys: [{ pk: 'tasks#tsk_b', sk: '#record' }], ConsistentRead: true });
  });

  it('drops a partial copy whose record is gone or no longer in the partition, and reads on so the page stays full', async () => {
    const todo = `${base}#status=todo`;
    const gone = task('tsk_a', 59, { description: LONG });
    const moved = task('tsk_b', 58, { description: LONG });
    const kept = task('tsk_c', 57, { description: LONG });
    const next = task('tsk_d', 56);
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [copy(todo, gone), copy(todo, moved), copy(todo, kept)] })
      .resolvesOnce({ Items: [copy(todo, next)] });
    dynamo.on(BatchGetCommand).resolves({ Responses: { [tableName('records')]: [recordItem(layout, { ...moved, version: 2, data: { ...moved.data, status: 'completed' } }), recordItem(layout, kept)] } });

    const page = await pageAfter(layout, todo, '0', 2);

    expect(page.records.map((r) => r.id)).toEqual(['tsk_c', 'tsk_d']);
    expect(page.more).toBe(false);
    const queries = dynamo.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(queries[1]).toMatchObject({ Limit: 2, ExpressionAttributeValues: { ':sk': listingSortKey(kept) } });
  });

  it('retries the keys BatchGetItem leaves unprocessed', async () => {
    const long = task('tsk_b', 58, { description: LONG });
    dynamo.on(QueryCommand).resolves({ Items: [copy(base, long)] });
    const table = tableName('records');
    dynamo
      .on(BatchGetCommand)
      .resolvesOnce({ Responses: { [table]: [] }, UnprocessedKeys: { [table]: { Keys: [{ pk: 'tasks#tsk_b', sk: '#record' }] } } })
      .resolvesOnce({ Responses: { [table]: [recordItem(layout, long)] } });

    expect(await queryPartition(layout, base, 10)).toEqual([{ ...long, copiesVersion: 1, ix: layout.tokens, sm: layout.sumTokens }]);
    expect(dynamo.commandCalls(BatchGetCommand)).toHaveLength(2);
  });

  it('lets partial copies through a pushed-down filter, fetches only those the copy does not rule out, and keeps by the record', async () => {
    const a = task('tsk_a', 59, { description: `${LONG} needle` });
    const b = task('tsk_b', 58, { description: LONG });
    const c = task('tsk_c', 57, { description: LONG, priority: 'high' });
    dynamo.on(QueryCommand).resolves({ Items: [copy(base, a), copy(base, b), copy(base, c)] });
    dynamo.on(BatchGetCommand).resolves({ Responses: { [tableName('records')]: [recordItem(layout, a), recordItem(layout, b)] } });

    const found = await queryAll(layout, base, {
      filter: { expression: '#f0.#f1 = :v0', names: { '#f0': 'data', '#f1': 'priority' }, values: { ':v0': 'low' } },
      mayKeep: (r) => r.data.priority === 'low',
      keep: (r) => String(r.data.description).includes('needle'),
    });

    expect(found).toEqual([{ ...a, copiesVersion: 1, ix: layout.tokens, sm: layout.sumTokens }]);
    const query = dynamo.commandCalls(QueryCommand)[0].args[0].input;
    expect(query.FilterExpression).toBe('(#f0.#f1 = :v0) OR #partialCopy = :partialCopy');
    expect(query.ExpressionAttributeNames).toMatchObject({ '#partialCopy': 'partial' });
    expect(query.ExpressionAttributeValues).toMatchObject({ ':partialCopy': true });
    expect(Object.values(batchOf(0))[0].Keys).toEqual([
      { pk: 'tasks#tsk_a', sk: '#record' },
      { pk: 'tasks#tsk_b', sk: '#record' },
    ]);
  });
});

describe('listing ends', () => {
  it('read one copy at each end of each write shard and keep the newest and the oldest createdAt of all', async () => {
    const at = (pk: string, forward: boolean) => ({ 'p#~0/2': forward ? '2026-03-01T00:00:00.000Z' : '2026-01-05T00:00:00.000Z', 'p#~1/2': forward ? '2026-03-02T00:00:00.000Z' : '2026-01-04T00:00:00.000Z' })[pk];
    dynamo.on(QueryCommand).callsFake((input) => ({ Items: [{ createdAt: at(input.ExpressionAttributeValues[':pk'], input.ScanIndexForward) }] }));

    expect(await readListingEnds('p', 2)).toEqual({ newest: '2026-03-02T00:00:00.000Z', oldest: '2026-01-04T00:00:00.000Z' });
    const queries = dynamo.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(queries).toHaveLength(4);
    expect(queries.every((q) => q.Limit === 1 && q.ConsistentRead && q.ExpressionAttributeValues![':sk'] === '#count#~')).toBe(true);
  });

  it('are none for an empty listing', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [] });

    expect(await readListingEnds('p', 1)).toEqual({ newest: undefined, oldest: undefined });
  });
});
