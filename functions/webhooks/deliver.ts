/**
 * The delivery function: consumes the delivery queue, one POST per message. A failed attempt
 * sets the message's visibility to the next back-off wait and reports it as a batch item
 * failure; after the last attempt its visibility is cleared, so the queue's redrive policy moves
 * it to the dead-letter queue. The delivery code and the AWS SDK load with the first batch
 * (shared/on-first-use.ts), not at cold start.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { onFirstUse } from '../../shared/on-first-use.js';
import { loadLogger, logger } from '../../shared/logger.js';

/** After an error of ours, the message is received again within this (plus up to as much jitter). */
const ENGINE_RETRY_SECONDS = 2;

const deliveryCode = onFirstUse(() => Promise.all([import('../../shared/webhooks/delivery.js'), import('../../shared/webhooks/queue.js')]));

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  // The logger loads on first use; loaded first, every line of the invocation is written before it returns.
  await loadLogger();
  // A failed load fails the whole batch: every message is received again after its visibility timeout.
  const [{ deliverFromQueue, loadBatch, parseMessage }, { deliveryQueue }] = await deliveryCode();
  const queue = deliveryQueue();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  const messages = event.Records.map((record) => parseMessage(record.body));
  // The batch's webhooks and deliveries in one read; if that fails, each message reads its own.
  const loaded = await loadBatch(messages.filter((m) => m !== undefined)).catch((error: unknown) => {
    logger.warn('reading a delivery batch failed; each delivery reads its own', { error: (error as Error).message });
    return undefined;
  });
  await Promise.all(
    event.Records.map(async (record, i) => {
      const message = messages[i];
      if (!message) {
        logger.warn('dropping a delivery message that is not ours', { messageId: record.messageId });
        return;
      }
      try {
        const outcome = await deliverFromQueue(message, Number(record.attributes.ApproximateReceiveCount) || 1, loaded?.(message));
        if (outcome.kind === 'done') return;
        await queue.changeVisibility(record.receiptHandle, outcome.kind === 'retry' ? outcome.afterSeconds : 0);
        failures.push({ itemIdentifier: record.messageId });
      } catch (error) {
        // Our own fault (the engine still busy after the in-place retries, say), not the
        // receiver's: tried again in a few seconds, not after the visibility timeout, and the
        // schedule's attempts (counted per POST made) are untouched.
        logger.error('webhook delivery failed', { deliveryId: message.deliveryId, error: (error as Error).message });
        failures.push({ itemIdentifier: record.messageId });
        try {
          await queue.changeVisibility(record.receiptHandle, ENGINE_RETRY_SECONDS + Math.round(Math.random() * ENGINE_RETRY_SECONDS));
        } catch {
          // The visibility timeout brings it back instead.
        }
      }
    }),
  );
  return { batchItemFailures: failures };
}
