/**
 * The fan-out function: consumes the Events table's DynamoDB stream (inserts only, by the event
 * source mapping's filter) and queues one delivery per subscribed webhook. Reports partial batch
 * failures: the stream resumes from the first record that failed. The fan-out code and the AWS
 * SDK load with the first batch (shared/on-first-use.ts), not at cold start.
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { config } from '../../shared/config.js';
import { onFirstUse } from '../../shared/on-first-use.js';
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
  // The records of a batch are fanned out several at a time (each waits on DynamoDB
  // and the queue, not on the CPU); on failures the first failed record is reported, so it and
  // every later one are retried (a later one already fanned out is queued again: at least once).
  const outcomes: boolean[] = new Array(event.Records.length).fill(true);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < event.Records.length; i = next++) {
      const record = event.Records[i];
      if (record.eventName !== 'INSERT') continue;
      const change = changeEventFromImage(record.dynamodb?.NewImage as never);
      if (!change) continue;
      try {
        await fanOutEvent(change, findEntity, queue);
      } catch (error) {
        logger.error('webhook fan-out failed', { eventId: change.id, error: (error as Error).message });
        outcomes[i] = false;
      }
    }
  };
  // WEBHOOK_FANOUT_CONCURRENCY (default 16; docs/delivery-guarantees.md has the measurement).
  await Promise.all(Array.from({ length: Math.min(config().webhooks.fanoutConcurrency, event.Records.length) }, worker));
  const failed = outcomes.indexOf(false);
  return { batchItemFailures: failed < 0 ? [] : [{ itemIdentifier: event.Records[failed].dynamodb?.SequenceNumber ?? '' }] };
}
