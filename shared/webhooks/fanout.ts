/**
 * Fan-out: for each change event, one delivery per subscribed webhook — its log entry first
 * (pending), then a queue message naming it. A stream batch is fanned out together: the log
 * entries of all its events are read and written in batches (one engine request per 100 reads,
 * per 25 writes), since a busy engine makes every single request wait its turn. A stream record
 * fanned out twice (a retried batch) finds its deliveries already logged and sends their messages
 * again: at least once, and the delivery function skips a delivery that already succeeded.
 */
import { config } from '../config.js';
import { logger } from '../logger.js';
import type { LoadedEntity } from '../registry/index.js';
import { payloadOf, type ChangeEvent } from './events.js';
import type { DeliveryMessage } from './delivery.js';
import type { DeliveryQueue, OutgoingMessage } from './queue.js';
import { createDeliveries, loggedDeliveries, pendingDelivery, type StoredDelivery } from './store.js';
import { subscribers, tenantWebhooks } from './subscriptions.js';

const SQS_BATCH = 10;

type EntityOf = (slug: string) => LoadedEntity | undefined;

/** Runs the tasks with at most `limit` at once; each task's failure is its own. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await work(items[i]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Fans a batch of events out. Returns, for each event, whether all of its deliveries were logged
 * and queued (false: that event must be fanned out again).
 */
export async function fanOutEvents(events: readonly ChangeEvent[], entityOf: EntityOf, queue: DeliveryQueue): Promise<boolean[]> {
  const ok = events.map(() => true);
  const fail = (indexes: Iterable<number>, what: string, error?: unknown) => {
    for (const i of indexes) ok[i] = false;
    logger.error(`webhook fan-out failed: ${what}`, error ? { error: (error as Error).message } : {});
  };
  const concurrency = config().webhooks.fanoutConcurrency;

  // Who subscribes: one read per tenant (cached for a few seconds).
  const planned: { event: number; delivery: StoredDelivery }[] = [];
  const now = Date.now();
  await inParallel([...new Set(events.map((e) => e.tenantId))], concurrency, async (tenantId) => {
    const mine = events.map((e, i) => ({ e, i })).filter(({ e }) => e.tenantId === tenantId);
    try {
      const webhooks = await tenantWebhooks(tenantId);
      for (const { e, i } of mine) {
        const targets = subscribers(e, webhooks, entityOf(e.entity));
        if (!targets.length) continue;
        const payload = payloadOf(e);
        for (const webhook of targets) {
          const delivery = pendingDelivery({ webhookId: webhook.id, tenantId }, { id: e.id, type: e.type, createdAt: e.createdAt, payload }, new Date(now).toISOString(), now);
          planned.push({ event: i, delivery });
        }
      }
    } catch (error) {
      fail(mine.map(({ i }) => i), 'subscriptions unreadable', error);
    }
  });
  const deliveries = planned.filter((p) => ok[p.event]);
  if (!deliveries.length) return ok;

  // The log entries: those already logged (a retried batch) are not written again.
  let logged: Set<string>;
  try {
    logged = await loggedDeliveries(deliveries.map((p) => p.delivery));
  } catch (error) {
    fail(new Set(deliveries.map((p) => p.event)), 'delivery log unreadable', error);
    return ok;
  }
  const fresh = deliveries.filter((p) => !logged.has(`${p.delivery.webhookId}|${p.delivery.id}`));
  await inParallel(chunks(fresh, 25), concurrency, async (chunk) => {
    try {
      await createDeliveries(chunk.map((p) => p.delivery));
    } catch (error) {
      fail(new Set(chunk.map((p) => p.event)), 'delivery log not written', error);
    }
  });

  // The queue messages of every event whose log entries are all written.
  const outgoing = deliveries.filter((p) => ok[p.event]);
  await inParallel(chunks(outgoing, SQS_BATCH), concurrency, async (chunk) => {
    const messages: OutgoingMessage[] = chunk.map((p, i) => {
      const message: DeliveryMessage = { tenantId: p.delivery.tenantId, webhookId: p.delivery.webhookId, deliveryId: p.delivery.id };
      return { id: String(i), body: JSON.stringify(message) };
    });
    try {
      const failed = new Set(await queue.sendBatch(messages));
      if (failed.size) fail(new Set(chunk.filter((_, i) => failed.has(String(i))).map((p) => p.event)), `${failed.size} of ${messages.length} delivery messages refused by the queue`);
    } catch (error) {
      fail(new Set(chunk.map((p) => p.event)), 'delivery messages not sent', error);
    }
  });
  logger.debug('webhook deliveries queued', { events: events.length, deliveries: deliveries.length, alreadyLogged: logged.size });
  return ok;
}
