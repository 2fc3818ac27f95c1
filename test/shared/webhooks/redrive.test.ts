/**
 * The dead-letter redrive with DynamoDB mocked (aws-sdk-client-mock): a handed-over success (a
 * delivery whose POST succeeded and whose log write failed) is logged, never replayed; a delivery
 * dead-lettered twice (its change fanned out twice) is marked and replayed once.
 */
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import type { DeliveryQueue, OutgoingMessage } from '../../../shared/webhooks/queue.js';
import { redriveDeadLetters, type MessageSource } from '../../../shared/webhooks/redrive.js';

const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());

function source(bodies: string[]): MessageSource & { deleted: string[] } {
  const deleted: string[] = [];
  let left = bodies.map((body, i) => ({ receiptHandle: `rh-${i}`, body }));
  return {
    deleted,
    receive: async () => {
      const batch = left;
      left = [];
      return batch;
    },
    delete: async (receiptHandle) => void deleted.push(receiptHandle),
    release: async () => undefined,
    finish: async () => undefined,
  };
}

describe('redriveDeadLetters', () => {
  it('logs a handed-over success as succeeded and sends nothing', async () => {
    ddb.on(GetCommand).resolves({ Item: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_1', id: 'dlv_1', webhookId: 'whk_1', tenantId: 'ten_1', status: 'pending', attempts: 0 } });
    ddb.on(UpdateCommand).resolves({ Attributes: {} });
    const sent: OutgoingMessage[] = [];
    const queue: DeliveryQueue = { sendBatch: async (messages) => (sent.push(...messages), []), changeVisibility: async () => undefined };
    const outcome = { status: 'succeeded', responseCode: 200, responseTimeMs: 4, error: null, lastAttemptAt: '2026-01-01T00:00:01.000Z', nextAttemptAt: null };
    const messages = source([JSON.stringify({ tenantId: 'ten_1', webhookId: 'whk_1', deliveryId: 'dlv_1', outcome })]);

    const report = await redriveDeadLetters({ source: messages, queue, replay: true });

    expect(report).toMatchObject({ messages: 1, alreadyDelivered: 1, markedFailed: 0, replayed: 0 });
    expect(sent).toEqual([]);
    expect(messages.deleted).toEqual(['rh-0']);
    const update = ddb.commandCalls(UpdateCommand)[0].args[0].input;
    expect(update.ExpressionAttributeValues).toMatchObject({ ':status': 'succeeded', ':code': 200 });
  });

  it('marks and replays a delivery dead-lettered twice once, and deletes its second message', async () => {
    ddb.reset();
    ddb.on(GetCommand).callsFake((input) =>
      String(input.Key.sk).startsWith('DELIVERY#')
        ? { Item: { pk: 'WEBHOOK#whk_1', sk: 'DELIVERY#dlv_1', id: 'dlv_1', webhookId: 'whk_1', tenantId: 'ten_1', status: 'failed', attempts: 2 } }
        : { Item: { pk: 'TENANT#ten_1', sk: 'WEBHOOK#whk_1', id: 'whk_1', tenantId: 'ten_1', status: 'active' } },
    );
    ddb.on(UpdateCommand).resolves({ Attributes: { id: 'dlv_1', webhookId: 'whk_1', tenantId: 'ten_1', status: 'pending' } });
    const sent: OutgoingMessage[] = [];
    const queue: DeliveryQueue = { sendBatch: async (messages) => (sent.push(...messages), []), changeVisibility: async () => undefined };
    const body = JSON.stringify({ tenantId: 'ten_1', webhookId: 'whk_1', deliveryId: 'dlv_1' });
    const messages = source([body, body]);

    const report = await redriveDeadLetters({ source: messages, queue, replay: true });

    expect(report).toMatchObject({ messages: 2, replayed: 1, duplicates: 1, markedFailed: 0 });
    expect(sent).toHaveLength(1);
    expect(messages.deleted).toEqual(['rh-0', 'rh-1']);
  });
});
