/** The records I/O layer's handling of DynamoDB answers (client mocked: no I/O). */
import { DynamoDBDocumentClient, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { firstPage, skipEntries, transact, WriteConflict } from '../../../shared/data/records.js';
import { ServiceUnavailableError } from '../../../shared/errors.js';

const dynamo = mockClient(DynamoDBDocumentClient);
beforeEach(() => dynamo.reset());

function cancelled(...codes: string[]) {
  return Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: codes.map((Code) => ({ Code })) });
}

describe('transact', () => {
  it('turns a failed condition on the record into a WriteConflict', async () => {
    dynamo.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None', 'None'));

    await expect(transact([])).rejects.toBeInstanceOf(WriteConflict);
  });

  it('retries a transaction that collided with another one, then succeeds', async () => {
    dynamo.on(TransactWriteCommand).rejectsOnce(cancelled('None', 'TransactionConflict')).resolves({});

    await transact([]);

    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('answers 503 when collisions go on', async () => {
    dynamo.on(TransactWriteCommand).rejects(cancelled('None', 'TransactionConflict'));

    await expect(transact([])).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(5);
  });

  it('passes any other failure on', async () => {
    dynamo.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed'));

    await expect(transact([])).rejects.toMatchObject({ name: 'TransactionCanceledException' });
  });
});

describe('listing reads', () => {
  it('reads the total and page 1 in one Query starting at the counter', async () => {
    dynamo.on(QueryCommand).resolves({
      Items: [
        { pk: 'p', sk: '#count', count: 42 },
        { pk: 'p', sk: '8#a', kind: 'index', id: 'a', data: {} },
        { pk: 'p', sk: '8#b', kind: 'index', id: 'b', data: {} },
      ],
    });

    const page = await firstPage('p', 2);

    expect(page.total).toBe(42);
    expect(page.records.map((r) => r.id)).toEqual(['a', 'b']);
    expect(page.records[0]).not.toHaveProperty('pk');
    expect(page.lastSk).toBe('8#b');
    const input = dynamo.commandCalls(QueryCommand)[0].args[0].input;
    expect(input).toMatchObject({ KeyConditionExpression: '#pk = :pk AND #sk >= :sk', ExpressionAttributeValues: { ':pk': 'p', ':sk': '#count' }, Limit: 4, ConsistentRead: true });
    expect(page.more).toBe(false);
  });

  it('completes a page cut short at 1 MB from LastEvaluatedKey, and reads one more item to know a next page exists', async () => {
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ pk: 'p', sk: '#count', count: 5 }, { pk: 'p', sk: '8#a', id: 'a', data: {} }], LastEvaluatedKey: { pk: 'p', sk: '8#a' } })
      .resolvesOnce({ Items: [{ pk: 'p', sk: '8#b', id: 'b', data: {} }], LastEvaluatedKey: { pk: 'p', sk: '8#b' } })
      .resolvesOnce({ Items: [{ pk: 'p', sk: '8#c', id: 'c', data: {} }, { pk: 'p', sk: '8#d', id: 'd', data: {} }] });

    const page = await firstPage('p', 3);

    expect(page.records.map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(page).toMatchObject({ total: 5, lastSk: '8#c', more: true });
    expect(dynamo.commandCalls(QueryCommand).map((c) => c.args[0].input.Limit)).toEqual([5, 3, 2]);
    expect(dynamo.commandCalls(QueryCommand)[2].args[0].input.ExclusiveStartKey).toEqual({ pk: 'p', sk: '8#b' });
  });

  it('skips entries reading keys only, and stops at once when the page is past the end', async () => {
    dynamo.on(QueryCommand).resolvesOnce({ Items: [{ sk: '#count', count: 3 }, { sk: '8#a' }, { sk: '8#b' }, { sk: '8#c' }] });

    expect(await skipEntries('p', 20)).toEqual({ total: 3 });
    const input = dynamo.commandCalls(QueryCommand)[0].args[0].input;
    expect(input.ProjectionExpression).toBe('#sk, #count');
  });

  it('follows LastEvaluatedKey until enough entries are skipped', async () => {
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ sk: '#count', count: 10 }, { sk: '8#a' }, { sk: '8#b' }], LastEvaluatedKey: { pk: 'p', sk: '8#b' } })
      .resolvesOnce({ Items: [{ sk: '8#c' }] });

    expect(await skipEntries('p', 3)).toEqual({ total: 10, lastSk: '8#c' });
    expect(dynamo.commandCalls(QueryCommand)[1].args[0].input).toMatchObject({ Limit: 1, ExclusiveStartKey: { pk: 'p', sk: '8#b' } });
  });
});
