/**
 * The delivery function with SQS and DynamoDB mocked (aws-sdk-client-mock) and the HTTP attempt
 * stubbed: partial batch failures, the back-off as the message's visibility, the last attempt
 * left to the dead-letter queue, deleted webhooks dropped.
 */
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { encryptSecret } from '../../../shared/webhooks/secrets.js';
import { SqsDeliveryQueue, useDeliveryQueue } from '../../../shared/webhooks/queue.js';

const post = vi.hoisted(() => vi.fn());
vi.mock('../../../shared/webhooks/send.js', () => ({ postWebhook: post }));
const { handler } = await import('../../../functions/webhooks/deliver.js');
const { deliverFromQueue } = await import('../../../shared/webhooks/delivery.js');

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);

function record(id: string, deliveryId: string, receiveCount = 1, webhookId = 'whk_1'): SQSRecord {
  return {
    messageId: id,
    receiptHandle: `rh-${id}`,
    body: JSON.stringify({ tenantId: 'ten_1', webhookId, deliveryId }),
    attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:q',
    awsRegion: 'us-east-1',
  };
}

/** The engine gone (killed): the write's connection refused. */
function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
}

function lockTimeout(): Error {
  return Object.assign(new Error('This action timed out because it too long waiting for a lock. This request will succeed in actual DynamoDB API'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
}

const delivery = (id: string) => ({ pk: 'WEBHOOK#whk_1', sk: `DELIVERY#${id}`, id, webhookId: 'whk_1', tenantId: 'ten_1', eventId: `evt_${id}`, eventType: 'task.created', payload: '{}', status: 'pending', attempts: 0 });

beforeAll(async () => {
  const secret = await encryptSecret('unit-secret-1', 'whk_1');
  ddb.on(GetCommand, { Key: { pk: 'TENANT#ten_1', sk: 'WEBHOOK#whk_1' } }).resolves({
    Item: { pk: 'TENANT#ten_1', sk: 'WEBHOOK#whk_1', id: 'whk_1', tenantId: 'ten_1', url: 'https://93.184.215.14/h', events: ['task.created'], secret, status: 'active' },
  });
  useDeliveryQueue(new SqsDeliveryQueue('https://sqs.us-east-1.amazonaws.com/000000000000/q', new SQSClient({ region: 'us-east-1' })));
});

afterAll(() => {
  useDeliveryQueue(undefined);
  ddb.restore();
  sqs.restore();
});

beforeEach(() => {
  ddb.resetHistory();
  sqs.reset();
  post.mockReset();
  ddb.on(UpdateCommand).resolves({ Attributes: {} });
  for (const id of ['dlv_ok', 'dlv_fail', 'dlv_last']) ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: `DELIVERY#${id}` } }).resolves({ Item: delivery(id) });
  ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_broken' } }).rejects(new Error('ProvisionedThroughputExceededException'));
  // A batch read answers what the single reads above answer, and fails as a whole when one of them fails.
  ddb.on(BatchGetCommand).callsFake(async (input: { RequestItems: Record<string, { Keys: Record<string, string>[] }> }) => {
    const [table, { Keys }] = Object.entries(input.RequestItems)[0];
    const items = await Promise.all(Keys.map((Key) => ddb.send(new GetCommand({ TableName: table, Key }) as never) as Promise<{ Item?: unknown }>));
    return { Responses: { [table]: items.flatMap((out) => (out.Item ? [out.Item] : [])) } };
  });
});

describe('delivery handler', () => {
  it('reports only the failed messages and sets their visibility to the back-off', async () => {
    post.mockImplementation(async (_url: string, headers: Record<string, string>) =>
      headers['webhook-id'] === 'evt_dlv_ok' ? { ok: true, responseCode: 200, responseTimeMs: 5 } : { ok: false, responseCode: 500, responseTimeMs: 5, error: 'receiver answered 500' },
    );
    const event: SQSEvent = { Records: [record('m1', 'dlv_ok'), record('m2', 'dlv_fail'), record('m3', 'dlv_broken')] };
    const result = await handler(event);
    expect(result.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m2', 'm3']);
    const visibility = sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input);
    expect(visibility).toHaveLength(2);
    const receiverFailed = visibility.find((v) => v.ReceiptHandle === 'rh-m2')!;
    // The first retry of the default schedule: 5 s ± 20 %.
    expect(receiverFailed.VisibilityTimeout).toBeGreaterThanOrEqual(4);
    expect(receiverFailed.VisibilityTimeout).toBeLessThanOrEqual(6);
    // Our own error (the delivery could not be read): back in a few seconds, not after the visibility timeout.
    const ours = visibility.find((v) => v.ReceiptHandle === 'rh-m3')!;
    expect(ours.VisibilityTimeout).toBeGreaterThanOrEqual(2);
    expect(ours.VisibilityTimeout).toBeLessThanOrEqual(4);
    const statuses = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input.ExpressionAttributeValues?.[':status']).filter(Boolean);
    expect(statuses.sort()).toEqual(['pending', 'succeeded']);
  });

  it('after the last attempt marks the delivery failed and lets the message go to the dead-letter queue', async () => {
    post.mockResolvedValue({ ok: false, responseCode: 503, responseTimeMs: 3, error: 'receiver answered 503' });
    const result = await handler({ Records: [record('m4', 'dlv_last', 7)] });
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm4' }]);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0].args[0].input.VisibilityTimeout).toBe(0);
    const update = ddb.commandCalls(UpdateCommand).find((c) => c.args[0].input.ExpressionAttributeValues?.[':status']);
    expect(update!.args[0].input.ExpressionAttributeValues).toMatchObject({ ':status': 'failed', ':next': null });
  });

  it('disables a webhook whose deliveries have all failed for 5 days', async () => {
    post.mockResolvedValue({ ok: false, responseCode: 500, responseTimeMs: 3, error: 'receiver answered 500' });
    const longAgo = new Date(Date.now() - 6 * 24 * 3600 * 1000).toISOString();
    ddb.on(UpdateCommand, { UpdateExpression: 'SET failingSince = if_not_exists(failingSince, :now)' }).resolves({ Attributes: { id: 'whk_1', tenantId: 'ten_1', status: 'active', failingSince: longAgo } });
    await handler({ Records: [record('m7', 'dlv_fail', 2)] });
    const disabling = ddb.commandCalls(UpdateCommand).find((c) => Object.values(c.args[0].input.ExpressionAttributeValues ?? {}).includes('disabled'));
    expect(disabling).toBeDefined();
  });

  it('keeps a webhook active while its failures are younger than 5 days', async () => {
    post.mockResolvedValue({ ok: false, responseCode: 500, responseTimeMs: 3, error: 'receiver answered 500' });
    ddb.on(UpdateCommand, { UpdateExpression: 'SET failingSince = if_not_exists(failingSince, :now)' }).resolves({ Attributes: { id: 'whk_1', tenantId: 'ten_1', status: 'active', failingSince: new Date().toISOString() } });
    await handler({ Records: [record('m8', 'dlv_fail', 2)] });
    expect(ddb.commandCalls(UpdateCommand).some((c) => Object.values(c.args[0].input.ExpressionAttributeValues ?? {}).includes('disabled'))).toBe(false);
  });

  it('drops the message of a deleted webhook without an attempt', async () => {
    ddb.on(GetCommand, { Key: { pk: 'TENANT#ten_1', sk: 'WEBHOOK#whk_gone' } }).resolves({});
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_gone', sk: 'DELIVERY#dlv_x' } }).resolves({ Item: { ...delivery('dlv_x'), webhookId: 'whk_gone' } });
    const result = await handler({ Records: [record('m5', 'dlv_x', 2, 'whk_gone')] });
    expect(result.batchItemFailures).toEqual([]);
    expect(post).not.toHaveBeenCalled();
  });

  it("retries DynamoDB Local's lock timeout in place: one POST, the delivery succeeds, no batch failure", async () => {
    post.mockResolvedValue({ ok: true, responseCode: 200, responseTimeMs: 4 });
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_busy' } }).rejectsOnce(lockTimeout()).resolves({ Item: delivery('dlv_busy') });
    ddb.on(UpdateCommand).rejectsOnce(lockTimeout()).resolves({ Attributes: {} });

    const result = await handler({ Records: [record('m9', 'dlv_busy')] });

    expect(result.batchItemFailures).toEqual([]);
    expect(post).toHaveBeenCalledTimes(1);
    const statuses = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input.ExpressionAttributeValues?.[':status']).filter(Boolean);
    expect(statuses).toEqual(['succeeded', 'succeeded']);
  });

  it('follows the retry schedule by the attempts made, not by receives lost to errors of ours', async () => {
    post.mockResolvedValue({ ok: false, responseCode: 500, responseTimeMs: 3, error: 'receiver answered 500' });
    // One POST made so far, but received 3 times (two receives ended in an error of ours).
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_second' } }).resolves({ Item: { ...delivery('dlv_second'), attempts: 1 } });

    await handler({ Records: [record('m10', 'dlv_second', 3)] });

    // The second retry of the default schedule: 300 s ± 20 % (the third would be 1,800 s).
    const wait = sqs.commandCalls(ChangeMessageVisibilityCommand)[0].args[0].input.VisibilityTimeout!;
    expect(wait).toBeGreaterThanOrEqual(240);
    expect(wait).toBeLessThanOrEqual(360);
  });

  it("reads the batch's webhooks and deliveries in one request", async () => {
    post.mockResolvedValue({ ok: true, responseCode: 200, responseTimeMs: 5 });
    ddb.resetHistory();

    const result = await handler({ Records: [record('m1', 'dlv_ok'), record('m2', 'dlv_fail')] });

    expect(result.batchItemFailures).toEqual([]);
    const reads = ddb.commandCalls(BatchGetCommand);
    expect(reads).toHaveLength(1);
    // The one webhook and the two deliveries.
    expect(Object.values(reads[0].args[0].input.RequestItems!)[0].Keys).toHaveLength(3);
    expect(post).toHaveBeenCalledTimes(2);
  });

  it('delivers a delivery its message carries and logs it with the attempt (the fan-out logged nothing)', async () => {
    post.mockResolvedValue({ ok: true, responseCode: 200, responseTimeMs: 5 });
    const carried = { ...delivery('dlv_new'), status: 'pending', attempts: 0, createdAt: '2026-01-01T00:00:00.000Z', expiresAt: 1 };
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_new' } }).resolves({});
    const message = { ...record('m1', 'dlv_new'), body: JSON.stringify({ tenantId: 'ten_1', webhookId: 'whk_1', deliveryId: 'dlv_new', delivery: carried }) };

    const result = await handler({ Records: [message] });

    expect(result.batchItemFailures).toEqual([]);
    expect(post).toHaveBeenCalledTimes(1);
    const update = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input).find((i) => i.Key?.sk === 'DELIVERY#dlv_new')!;
    // Written if missing (or there but not succeeded), not conditional on the entry existing; the outcome and the event alike.
    expect(update.ConditionExpression).toBe('(attribute_not_exists(pk) OR #status <> :succeeded)');
    expect(update.UpdateExpression).toContain('if_not_exists');
    expect(Object.values(update.ExpressionAttributeValues!)).toEqual(expect.arrayContaining(['succeeded', 'evt_dlv_new', 'task.created']));
  });

  it('leaves no log entry for a carried delivery whose webhook is gone', async () => {
    const carried = { ...delivery('dlv_x'), webhookId: 'whk_gone', status: 'pending', attempts: 0 };
    ddb.on(GetCommand, { Key: { pk: 'TENANT#ten_1', sk: 'WEBHOOK#whk_gone' } }).resolves({});
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_gone', sk: 'DELIVERY#dlv_x' } }).resolves({});
    const message = { ...record('m1', 'dlv_x', 1, 'whk_gone'), body: JSON.stringify({ tenantId: 'ten_1', webhookId: 'whk_gone', deliveryId: 'dlv_x', delivery: carried }) };

    const result = await handler({ Records: [message] });

    expect(result.batchItemFailures).toEqual([]);
    expect(post).not.toHaveBeenCalled();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('hands a success whose log write failed over to the queue: the message is done, nothing is retried', async () => {
    post.mockResolvedValue({ ok: true, responseCode: 200, responseTimeMs: 5 });
    const carried = { ...delivery('dlv_new'), createdAt: '2026-01-01T00:00:00.000Z', expiresAt: 1 };
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_new' } }).resolves({});
    ddb.on(UpdateCommand).rejects(refused());
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [{ Id: '0', MessageId: 'x', MD5OfMessageBody: '' }], Failed: [] });
    const message = { ...record('m1', 'dlv_new'), body: JSON.stringify({ tenantId: 'ten_1', webhookId: 'whk_1', deliveryId: 'dlv_new', delivery: carried }) };

    const result = await handler({ Records: [message] });

    expect(result.batchItemFailures).toEqual([]);
    expect(post).toHaveBeenCalledTimes(1);
    const [entry] = sqs.commandCalls(SendMessageBatchCommand)[0].args[0].input.Entries!;
    expect(entry.DelaySeconds).toBe(2);
    expect(JSON.parse(entry.MessageBody!)).toMatchObject({ deliveryId: 'dlv_new', delivery: carried, outcome: { status: 'succeeded', responseCode: 200, nextAttemptAt: null } });
  });

  it('logs a handed-over success without sending it again', async () => {
    const carried = { ...delivery('dlv_new'), createdAt: '2026-01-01T00:00:00.000Z', expiresAt: 1 };
    const outcome = { status: 'succeeded', responseCode: 200, responseTimeMs: 5, error: null, lastAttemptAt: '2026-01-01T00:00:01.000Z', nextAttemptAt: null };
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_new' } }).resolves({});
    const message = { ...record('m2', 'dlv_new'), body: JSON.stringify({ tenantId: 'ten_1', webhookId: 'whk_1', deliveryId: 'dlv_new', delivery: carried, outcome }) };

    const result = await handler({ Records: [message] });

    expect(result.batchItemFailures).toEqual([]);
    expect(post).not.toHaveBeenCalled();
    const update = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input).find((i) => i.Key?.sk === 'DELIVERY#dlv_new')!;
    expect(update.ExpressionAttributeValues).toMatchObject({ ':status': 'succeeded', ':code': 200, ':last': '2026-01-01T00:00:01.000Z' });
    expect(update.UpdateExpression).toContain('if_not_exists');
  });

  it('acknowledges a handed-over success the log already has, writing nothing', async () => {
    const outcome = { status: 'succeeded', responseCode: 200, responseTimeMs: 5, error: null, lastAttemptAt: '2026-01-01T00:00:01.000Z', nextAttemptAt: null };
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_done' } }).resolves({ Item: { ...delivery('dlv_done'), status: 'succeeded', attempts: 1 } });
    const message = { ...record('m3', 'dlv_done'), body: JSON.stringify({ tenantId: 'ten_1', webhookId: 'whk_1', deliveryId: 'dlv_done', outcome }) };

    const result = await handler({ Records: [message] });

    expect(result.batchItemFailures).toEqual([]);
    expect(post).not.toHaveBeenCalled();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('retries the message when the queue refuses the handed-over success too (its outcome is lost to both)', async () => {
    post.mockResolvedValue({ ok: true, responseCode: 200, responseTimeMs: 5 });
    ddb.on(UpdateCommand).rejects(refused());
    sqs.on(SendMessageBatchCommand).rejects(new Error('queue unreachable'));

    const result = await handler({ Records: [record('m4', 'dlv_ok')] });

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm4' }]);
    const wait = sqs.commandCalls(ChangeMessageVisibilityCommand)[0].args[0].input.VisibilityTimeout!;
    expect(wait).toBeGreaterThanOrEqual(2);
    expect(wait).toBeLessThanOrEqual(4);
  });

  it('sends one of two copies of a delivery in a batch; the other comes back and finds it logged', async () => {
    post.mockResolvedValue({ ok: true, responseCode: 200, responseTimeMs: 5 });

    const first = await handler({ Records: [record('m1', 'dlv_ok'), record('m1-copy', 'dlv_ok')] });
    ddb.on(GetCommand, { Key: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_ok' } }).resolves({ Item: { ...delivery('dlv_ok'), status: 'succeeded', attempts: 1 } });
    const again = await handler({ Records: [record('m1-copy', 'dlv_ok', 2)] });

    expect(post).toHaveBeenCalledTimes(1);
    expect(first.batchItemFailures).toHaveLength(1);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0].args[0].input.VisibilityTimeout).toBe(2);
    expect(again.batchItemFailures).toEqual([]);
  });

  it('does not send a copy whose log was read before another copy here settled', async () => {
    post.mockResolvedValue({ ok: true, responseCode: 200, responseTimeMs: 5 });
    const webhook = { id: 'whk_1', tenantId: 'ten_1', url: 'https://93.184.215.14/h', events: ['task.created'], secret: await encryptSecret('unit-secret-1', 'whk_1'), status: 'active' } as never;
    const pending = { ...delivery('dlv_race'), createdAt: '2026-01-01T00:00:00.000Z', expiresAt: 1 } as never;
    const message = { tenantId: 'ten_1', webhookId: 'whk_1', deliveryId: 'dlv_race' };
    const readBefore = Date.now() - 1;

    const sent = await deliverFromQueue(message, 1, { webhook, delivery: pending, readAt: Date.now() });
    const stale = await deliverFromQueue(message, 1, { webhook, delivery: pending, readAt: readBefore });

    expect(sent).toEqual({ kind: 'done' });
    expect(stale).toEqual({ kind: 'retry', afterSeconds: 2 });
    expect(post).toHaveBeenCalledTimes(1);
  });

  it('never records an attempt of the queue over a logged success', async () => {
    post.mockResolvedValue({ ok: false, responseCode: 500, responseTimeMs: 3, error: 'receiver answered 500' });
    ddb.on(UpdateCommand).rejects(Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' }));

    const result = await handler({ Records: [record('m5', 'dlv_fail')] });

    const update = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input).find((i) => i.Key?.sk === 'DELIVERY#dlv_fail')!;
    expect(update.ConditionExpression).toBe('attribute_exists(pk) AND #status <> :succeeded');
    expect(update.ExpressionAttributeValues![':succeeded']).toBe('succeeded');
    // Retried as scheduled; the next receive reads the success and sends nothing.
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm5' }]);
  });

  it('drops a message that is not a delivery', async () => {
    const result = await handler({ Records: [{ ...record('m6', 'dlv_ok'), body: 'garbage' }] });
    expect(result.batchItemFailures).toEqual([]);
  });
});
