/** The records I/O layer's handling of DynamoDB answers (client mocked: no I/O). */
import { DynamoDBDocumentClient, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CONFLICT_ATTEMPTS, firstPage, readCounter, readCounters, skipEntries, transact, WriteConflict } from '../../../shared/data/records.js';
import type { TransactItem } from '../../../shared/data/records-keys.js';
import { ServiceUnavailableError } from '../../../shared/errors.js';

const dynamo = mockClient(DynamoDBDocumentClient);
beforeEach(() => dynamo.reset());
afterEach(() => vi.restoreAllMocks());
const p = { partition: 'p' };

function cancelled(...codes: string[]) {
  return Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: codes.map((Code) => ({ Code })) });
}

describe('transact', () => {
  it('turns a failed condition on the record into a WriteConflict', async () => {
    dynamo.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None', 'None'));

    await expect(transact([])).rejects.toBeInstanceOf(WriteConflict);
  });

  it('retries a transaction that collided with another one on another counter shard, then succeeds', async () => {
    dynamo.on(TransactWriteCommand).rejectsOnce(cancelled('None', 'TransactionConflict')).resolves({});
    const counter: TransactItem = { Update: { TableName: 'R', Key: { pk: 'ten#tasks', sk: '#count#3' }, UpdateExpression: 'ADD #a0 :d0' } };
    const copy: TransactItem = { Put: { TableName: 'R', Item: { pk: 'ten#tasks', sk: '8#a' } } };
    vi.spyOn(Math, 'random').mockReturnValue(0.75);

    await transact([copy, counter]);

    const sent = dynamo.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
    expect(sent).toHaveLength(2);
    expect(sent[0][1].Update!.Key).toEqual({ pk: 'ten#tasks', sk: '#count#3' });
    expect(sent[1][1].Update!.Key).toEqual({ pk: 'ten#tasks', sk: '#count#7' });
    expect(sent[1][0]).toEqual(copy);
  });

  it('answers 503 when collisions go on', async () => {
    dynamo.on(TransactWriteCommand).rejects(cancelled('None', 'TransactionConflict'));
    vi.spyOn(Math, 'random').mockReturnValue(0);

    await expect(transact([])).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(CONFLICT_ATTEMPTS);
  });

  it('passes any other failure on', async () => {
    dynamo.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed'));

    await expect(transact([])).rejects.toMatchObject({ name: 'TransactionCanceledException' });
  });
});

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

    const page = await firstPage(p, 2);

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

    expect((await firstPage(source, 20)).total).toBe(6);
    expect(await readCounter(source)).toBe(6);
    expect(await readCounters([source, { partition: 'b' }])).toEqual(new Map([['b#status=todo', 6], ['b', 10]]));
  });

  it('completes a page cut short at 1 MB from LastEvaluatedKey, and reads one more item to know a next page exists', async () => {
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ pk: 'p', sk: '#count', count: 5 }, { pk: 'p', sk: '8#a', id: 'a', data: {} }], LastEvaluatedKey: { pk: 'p', sk: '8#a' } })
      .resolvesOnce({ Items: [{ pk: 'p', sk: '8#b', id: 'b', data: {} }], LastEvaluatedKey: { pk: 'p', sk: '8#b' } })
      .resolvesOnce({ Items: [{ pk: 'p', sk: '8#c', id: 'c', data: {} }, { pk: 'p', sk: '8#d', id: 'd', data: {} }] });

    const page = await firstPage(p, 3);

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
