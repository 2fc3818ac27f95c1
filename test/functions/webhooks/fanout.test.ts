/**
 * The fan-out function with DynamoDB and SQS mocked (aws-sdk-client-mock): one message per
 * subscribed webhook, inserts only, and a record whose messages the queue refuses is reported
 * as the batch item failure (the stream resumes there).
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/webhooks/fanout.js';
import { SqsDeliveryQueue, useDeliveryQueue } from '../../../shared/webhooks/queue.js';
import { invalidateSubscriptions } from '../../../shared/webhooks/subscriptions.js';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);

function streamRecord(seq: string, type: string, eventName: 'INSERT' | 'REMOVE' = 'INSERT'): DynamoDBRecord {
  const item = { pk: 'ten_f#tasks', sk: `2026-01-01T00:00:0${seq}.000Z#x`, id: `evt_${seq}`, type, entity: 'tasks', recordId: `tsk_${seq}`, tenantId: 'ten_f', ownerId: 'usr_1', data: { id: `tsk_${seq}` }, createdAt: `2026-01-01T00:00:0${seq}.000Z`, expiresAt: 1 };
  return { eventName, eventSource: 'aws:dynamodb', dynamodb: { SequenceNumber: seq, NewImage: marshall(item) as never } };
}

function lockTimeout(): Error {
  return Object.assign(new Error('This action timed out because it too long waiting for a lock. This request will succeed in actual DynamoDB API'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
}

const webhook = (id: string, events: string[], extra: Record<string, unknown> = {}) => ({ pk: 'TENANT#ten_f', sk: `WEBHOOK#${id}`, id, tenantId: 'ten_f', url: 'https://93.184.215.14/', events, secret: 'x', status: 'active', createdBy: 'usr_admin', creatorRole: 'admin', ...extra });

beforeAll(() => {
  useDeliveryQueue(new SqsDeliveryQueue('https://sqs.us-east-1.amazonaws.com/000000000000/q', new SQSClient({ region: 'us-east-1' })));
});

afterAll(() => {
  useDeliveryQueue(undefined);
  ddb.restore();
  sqs.restore();
});

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  invalidateSubscriptions('ten_f');
  ddb.on(QueryCommand).resolves({
    Items: [
      webhook('whk_a', ['task.created']),
      webhook('whk_b', ['task.created', 'task.updated']),
      webhook('whk_c', ['task.deleted']),
      webhook('whk_off', ['task.created'], { status: 'disabled' }),
      // A user's webhook sees only that user's private records.
      webhook('whk_user', ['task.created'], { createdBy: 'usr_other', creatorRole: 'user' }),
    ],
  });
  ddb.on(PutCommand).resolves({});
});

describe('fan-out handler', () => {
  it('sends one message per subscribed, active, permitted webhook', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const result = await handler({ Records: [streamRecord('1', 'task.created'), streamRecord('2', 'task.updated'), streamRecord('3', 'task.created', 'REMOVE')] });
    expect(result.batchItemFailures).toEqual([]);
    const sent = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries!.map((e) => JSON.parse(e.MessageBody!).webhookId));
    expect(sent).toEqual([['whk_a', 'whk_b'], ['whk_b']]);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(3);
    // The subscriptions were read once for the batch (cached).
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(1);
  });

  it('reports the first record whose messages the queue refused, so that it and every later one are retried', async () => {
    // The queue refuses the messages of records 2 and 3 (their delivery log entries were written with their event ids).
    const refusedDeliveries = new Set<string>();
    ddb.on(PutCommand).callsFake((input: { Item: { id: string; eventId: string } }) => {
      if (['evt_2', 'evt_3'].includes(input.Item.eventId)) refusedDeliveries.add(input.Item.id);
      return {};
    });
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string; MessageBody: string }[] }) => ({
      Failed: input.Entries.filter((e) => refusedDeliveries.has(JSON.parse(e.MessageBody).deliveryId)).map((e) => ({ Id: e.Id, Code: 'InternalError', SenderFault: false })),
    }));

    const result = await handler({ Records: [streamRecord('1', 'task.created'), streamRecord('2', 'task.created'), streamRecord('3', 'task.created')] });

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '2' }]);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(3);
  });

  it("retries an engine-busy answer in place (DynamoDB Local's lock timeout, throttling): no record fails", async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    ddb
      .on(PutCommand)
      .rejectsOnce(lockTimeout())
      .rejectsOnce(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }))
      .resolves({});

    const result = await handler({ Records: [streamRecord('1', 'task.created')] });

    expect(result.batchItemFailures).toEqual([]);
    expect(sqs.commandCalls(SendMessageBatchCommand)[0].args[0].input.Entries).toHaveLength(2);
  });

  it('reports the first record when the subscriptions cannot be read', async () => {
    ddb.on(QueryCommand).rejects(new Error('the engine is down'));
    const result = await handler({ Records: [streamRecord('5', 'task.created')] });
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '5' }]);
  });
});
