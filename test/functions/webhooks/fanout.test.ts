/**
 * The fan-out function with DynamoDB and SQS mocked (aws-sdk-client-mock): one message per
 * subscribed webhook, inserts only, and a record whose messages the queue refuses is reported
 * as the batch item failure (the stream resumes there).
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/webhooks/fanout.js';
import { SqsDeliveryQueue, useDeliveryQueue } from '../../../shared/webhooks/queue.js';
import { invalidateSubscriptions } from '../../../shared/webhooks/subscriptions.js';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);

/** A change event's stream record; `large`: a record whose delivery is too large to travel in its message (over 24 KB). */
function streamRecord(seq: string, type: string, eventName: 'INSERT' | 'REMOVE' = 'INSERT', large = false, tenantId = 'ten_f'): DynamoDBRecord {
  const data = { id: `tsk_${seq}`, ...(large ? { description: 'x'.repeat(30_000) } : {}) };
  const item = { pk: `${tenantId}#tasks`, sk: `2026-01-01T00:00:0${seq}.000Z#x`, id: `evt_${seq}`, type, entity: 'tasks', recordId: `tsk_${seq}`, tenantId, ownerId: 'usr_1', data, createdAt: `2026-01-01T00:00:0${seq}.000Z`, expiresAt: 1 };
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
  ddb.on(BatchGetCommand).resolves({ Responses: {} });
  ddb.on(BatchWriteCommand).resolves({});
});

/** The delivery log entries the fan-out wrote (BatchWriteItem puts). */
function written(): { id: string; eventId: string; webhookId: string }[] {
  return ddb.commandCalls(BatchWriteCommand).flatMap((c) => Object.values(c.args[0].input.RequestItems!).flat().map((r) => r.PutRequest!.Item as never));
}

describe('fan-out handler', () => {
  it('sends one message per subscribed, active, permitted webhook, carrying its delivery, and writes nothing', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const result = await handler({ Records: [streamRecord('1', 'task.created'), streamRecord('2', 'task.updated'), streamRecord('3', 'task.created', 'REMOVE')] });
    expect(result.batchItemFailures).toEqual([]);
    const sent = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries!.map((e) => JSON.parse(e.MessageBody!)));
    // One queue batch for the stream batch: record 1 to whk_a and whk_b, record 2 to whk_b.
    expect(sent.map((batch) => batch.map((m) => m.webhookId))).toEqual([['whk_a', 'whk_b', 'whk_b']]);
    expect(sent[0][0].delivery).toMatchObject({ id: sent[0][0].deliveryId, webhookId: 'whk_a', eventId: 'evt_1', eventType: 'task.created', status: 'pending', attempts: 0 });
    expect(JSON.parse(sent[0][0].delivery.payload)).toMatchObject({ id: 'evt_1', type: 'task.created', data: { id: 'tsk_1' } });
    // The delivery function logs them; the subscriptions were read once (cached).
    expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(0);
    expect(ddb.commandCalls(BatchWriteCommand)).toHaveLength(0);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(1);
  });

  it('logs a delivery too large for its message first (pending), and the message names it', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });

    const result = await handler({ Records: [streamRecord('1', 'task.updated', 'INSERT', true)] });

    expect(result.batchItemFailures).toEqual([]);
    expect(written()).toEqual([expect.objectContaining({ webhookId: 'whk_b', eventId: 'evt_1', status: 'pending', attempts: 0 })]);
    const message = JSON.parse(sqs.commandCalls(SendMessageBatchCommand)[0].args[0].input.Entries![0].MessageBody!);
    expect(message).toEqual({ tenantId: 'ten_f', webhookId: 'whk_b', deliveryId: written()[0].id });
  });

  it('reports the first record whose messages the queue refused, so that it and every later one are retried', async () => {
    // The queue refuses the messages of records 2 and 3.
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string; MessageBody: string }[] }) => ({
      Failed: input.Entries.filter((e) => ['evt_2', 'evt_3'].includes(JSON.parse(e.MessageBody).delivery.eventId)).map((e) => ({ Id: e.Id, Code: 'InternalError', SenderFault: false })),
    }));

    const result = await handler({ Records: [streamRecord('1', 'task.created'), streamRecord('2', 'task.created'), streamRecord('3', 'task.created')] });

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '2' }]);
    // Six messages (two webhooks take task.created), sent 10 to a batch.
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(1);
  });

  it("retries an engine-busy answer in place (DynamoDB Local's lock timeout, throttling): no record fails", async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    ddb
      .on(BatchWriteCommand)
      .rejectsOnce(lockTimeout())
      .rejectsOnce(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }))
      .resolves({});

    const result = await handler({ Records: [streamRecord('1', 'task.created', 'INSERT', true)] });

    expect(result.batchItemFailures).toEqual([]);
    expect(sqs.commandCalls(SendMessageBatchCommand)[0].args[0].input.Entries).toHaveLength(2);
  });

  it('writes again what the engine left unprocessed (its way of saying busy): no record fails', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    ddb
      .on(BatchWriteCommand)
      .callsFakeOnce((input: { RequestItems: Record<string, unknown[]> }) => ({ UnprocessedItems: { [Object.keys(input.RequestItems)[0]]: Object.values(input.RequestItems)[0].slice(1) } }))
      .resolves({});

    const result = await handler({ Records: [streamRecord('1', 'task.created', 'INSERT', true)] });

    expect(result.batchItemFailures).toEqual([]);
    expect(written().map((d) => d.webhookId)).toEqual(['whk_a', 'whk_b', 'whk_b']);
  });

  it('does not log again a large delivery already logged (a retried batch), and queues its message again', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    ddb.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { pk: string; sk: string }[] }> }) => {
      const [table, { Keys }] = Object.entries(input.RequestItems)[0];
      return { Responses: { [table]: Keys.filter((k) => k.pk === 'WEBHOOK#whk_a') } };
    });

    const result = await handler({ Records: [streamRecord('1', 'task.created', 'INSERT', true)] });

    expect(result.batchItemFailures).toEqual([]);
    expect(written().map((d) => d.webhookId)).toEqual(['whk_b']);
    expect(sqs.commandCalls(SendMessageBatchCommand)[0].args[0].input.Entries).toHaveLength(2);
  });

  it('reports the first record whose large delivery could not be logged, and queues nothing for it', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    ddb.on(BatchWriteCommand).rejects(new Error('the engine is down'));

    const result = await handler({ Records: [streamRecord('1', 'task.updated', 'INSERT', true), streamRecord('2', 'task.created', 'INSERT', true)] });

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '1' }]);
    // Nothing is queued for an event whose log entries are not all written.
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('queues nothing from the first failed record on: the later ones, handed over again, are queued once', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    // The second record's tenant has its subscriptions unreadable; the first and third's are read.
    invalidateSubscriptions('ten_g');
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'TENANT#ten_g', ':prefix': 'WEBHOOK#' } }).rejects(new Error('the engine is down'));

    const result = await handler({ Records: [streamRecord('1', 'task.created'), streamRecord('2', 'task.created', 'INSERT', false, 'ten_g'), streamRecord('3', 'task.created')] });

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '2' }]);
    const sent = sqs.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries!.map((e) => JSON.parse(e.MessageBody!).delivery.eventId));
    expect(sent).toEqual(['evt_1', 'evt_1']);
  });

  it('reports the first record when the subscriptions cannot be read', async () => {
    ddb.on(QueryCommand).rejects(new Error('the engine is down'));
    const result = await handler({ Records: [streamRecord('5', 'task.created')] });
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '5' }]);
  });
});
