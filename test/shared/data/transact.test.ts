/** Sending a record's transaction: DynamoDB's answers handled (client mocked: no I/O). */
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TransactItem } from '../../../shared/data/record-item.js';
import { CONFLICT_ATTEMPTS, transact, WriteConflict } from '../../../shared/data/transact.js';
import { ServiceUnavailableError, UniqueViolationError } from '../../../shared/errors.js';
import { uniquePut } from '../../../shared/data/unique-keys.js';

const dynamo = mockClient(DynamoDBDocumentClient);
beforeEach(() => dynamo.reset());
afterEach(() => vi.restoreAllMocks());

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

  it('turns a failed condition on a uniqueness item into 409 UNIQUE_VIOLATION naming the field (not a WriteConflict, not a 500)', async () => {
    dynamo.on(TransactWriteCommand).rejects(cancelled('None', 'None', 'ConditionalCheckFailed', 'None'));
    const record: TransactItem = { Put: { TableName: 'R', Item: { pk: 'ten#members', sk: '8#a', kind: 'record' } } };
    const copy: TransactItem = { Put: { TableName: 'R', Item: { pk: 'ten#members#x', sk: '8#a', kind: 'index' } } };
    const unique = uniquePut('R', { pk: 'ten#members#unique#email=a', sk: '#unique', kind: 'unique', entity: 'members', field: 'email', recordId: 'mem_a', tenantId: 'ten' });
    const event: TransactItem = { Put: { TableName: 'E', Item: { pk: 'e', sk: 'e' } } };

    const error = await transact([record, copy, unique, event]).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UniqueViolationError);
    expect(error).toMatchObject({ status: 409, code: 'UNIQUE_VIOLATION', details: { email: expect.any(String) } });
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(1);
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
