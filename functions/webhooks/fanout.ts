/**
 * The fan-out function: consumes the Events table's DynamoDB stream (inserts only, by the event
 * source mapping's filter) and queues one delivery per subscribed webhook. Reports partial batch
 * failures: the stream resumes from the first record that failed. The fan-out code and the AWS
 * SDK load with the first batch (shared/http/on-first-use.ts), not at cold start.
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { onFirstUse } from '../../shared/http/on-first-use.js';
import { loadLogger, logger } from '../../shared/logger.js';
import { findEntity, loadRegistry } from '../../shared/registry/index.js';

const fanOutCode = onFirstUse(() =>
  Promise.all([import('../../shared/webhooks/events.js'), import('../../shared/webhooks/fanout.js'), import('../../shared/webhooks/queue.js')]),
);

export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  // The logger loads on first use; loaded first, every line of the invocation is written before it returns.
  await loadLogger();
  await loadRegistry();
  // A failed load fails the whole batch: nothing was queued, so every record is retried.
  const [{ changeEventFromImage }, { fanOutEvent }, { deliveryQueue }] = await fanOutCode();
  const queue = deliveryQueue();
  logger.debug('webhook fan-out batch', { records: event.Records.length });
  for (const record of event.Records) {
    if (record.eventName !== 'INSERT') continue;
    const change = changeEventFromImage(record.dynamodb?.NewImage as never);
    if (!change) continue;
    try {
      await fanOutEvent(change, findEntity, queue);
    } catch (error) {
      logger.error('webhook fan-out failed', { eventId: change.id, error: (error as Error).message });
      // In order: this record and every later one are retried.
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
}
