/**
 * Fan-out: for each change event, one delivery per subscribed webhook — its log entry first
 * (pending), then a queue message naming it. A stream record fanned out twice (a retried batch)
 * finds its deliveries already logged and sends their messages again: at least once, and the
 * delivery function skips a delivery that already succeeded.
 */
import { logger } from '../logger.js';
import type { LoadedEntity } from '../registry/index.js';
import { payloadOf, type ChangeEvent } from './events.js';
import type { DeliveryMessage } from './delivery.js';
import type { DeliveryQueue, OutgoingMessage } from './queue.js';
import { createDelivery, pendingDelivery } from './store.js';
import { subscribers, tenantWebhooks } from './subscriptions.js';

const SQS_BATCH = 10;

/** Fans one event out; throws when any of its messages could not be sent (the record is retried). */
export async function fanOutEvent(event: ChangeEvent, entityOf: (slug: string) => LoadedEntity | undefined, queue: DeliveryQueue): Promise<number> {
  const webhooks = await tenantWebhooks(event.tenantId);
  const targets = subscribers(event, webhooks, entityOf(event.entity));
  logger.debug('webhook fan-out', { eventId: event.id, type: event.type, webhooks: webhooks.length, deliveries: targets.length });
  if (!targets.length) return 0;
  const payload = payloadOf(event);
  const now = Date.now();
  const messages: OutgoingMessage[] = await Promise.all(
    targets.map(async (webhook, i) => {
      const delivery = pendingDelivery({ webhookId: webhook.id, tenantId: event.tenantId }, { id: event.id, type: event.type, createdAt: event.createdAt, payload }, new Date(now).toISOString(), now);
      await createDelivery(delivery);
      const message: DeliveryMessage = { tenantId: event.tenantId, webhookId: webhook.id, deliveryId: delivery.id };
      return { id: String(i), body: JSON.stringify(message) };
    }),
  );
  const failed: string[] = [];
  for (let i = 0; i < messages.length; i += SQS_BATCH) failed.push(...(await queue.sendBatch(messages.slice(i, i + SQS_BATCH))));
  logger.debug('webhook deliveries queued', { eventId: event.id, messages: messages.length, failed: failed.length });
  if (failed.length) throw new Error(`${failed.length} of ${messages.length} delivery messages were not accepted by the queue`);
  return messages.length;
}
