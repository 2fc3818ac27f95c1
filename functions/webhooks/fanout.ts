/**
 * The fan-out function: consumes the Events table's DynamoDB stream (inserts only, by the event
 * source mapping's filter) and queues one delivery per subscribed webhook. Reports partial batch
 * failures: the stream resumes from the first record that failed. The fan-out code and the AWS
 * SDK load with the first batch (shared/on-first-use.ts), not at cold start.
 *
 * It is also the write-shards controller's stream consumer (write-shards.ts): it counts each
 * batch's change events per shard, and on AWS runs the controller, also when invoked by its
 * schedule (an EventBridge event, no Records) while no events come.
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { onFirstUse } from '../../shared/on-first-use.js';
import { loadLogger, logger } from '../../shared/logger.js';
import { findEntity, loadRegistry } from '../../shared/registry/index.js';
import { controlOnAws, countLoad } from './write-shards.js';

const fanOutCode = onFirstUse(() =>
  Promise.all([import('../../shared/webhooks/events.js'), import('../../shared/webhooks/fanout.js'), import('../../shared/webhooks/queue.js')]),
);

export async function handler(event: DynamoDBStreamEvent | { source: string }): Promise<DynamoDBBatchResponse> {
  // The logger loads on first use; loaded first, every line of the invocation is written before it returns.
  await loadLogger();
  await loadRegistry();
  if (!('Records' in event)) {
    await controlOnAws(true);
    return { batchItemFailures: [] };
  }
  // A failed load fails the whole batch: nothing was queued, so every record is retried.
  const [{ changeEventFromImage }, { fanOutEvents }, { deliveryQueue }] = await fanOutCode();
  logger.debug('webhook fan-out batch', { records: event.Records.length });
  const changes = event.Records.map((record) => (record.eventName === 'INSERT' ? changeEventFromImage(record.dynamodb?.NewImage as never) : undefined));
  const fannedOut = changes.flatMap((change, i) => (change ? [{ change, i }] : []));
  // The whole batch at once (shared/webhooks/fanout.ts); the first record that failed is reported,
  // so it and every later one are retried (nothing was queued for them, so they are queued once).
  const ok = await fanOutEvents(
    fannedOut.map((f) => f.change),
    findEntity,
    deliveryQueue(),
  );
  const firstFailed = fannedOut.find((_, n) => !ok[n]);
  // Counted once a batch is fanned out whole (a retried batch would count its events again).
  if (!firstFailed) {
    await countLoad(event.Records);
    await controlOnAws(false);
  }
  return { batchItemFailures: firstFailed ? [{ itemIdentifier: event.Records[firstFailed.i].dynamodb?.SequenceNumber ?? '' }] : [] };
}
