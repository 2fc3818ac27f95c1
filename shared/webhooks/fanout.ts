/**
 * Fan-out: for each change event, one delivery per subscribed webhook, as a queue message.
 *
 * The message carries the delivery itself, and its first attempt logs it (delivery.ts): the
 * fan-out makes no database write, so a busy engine, where every request waits its turn, does not
 * hold the change events back. Delivery ids are derived from webhook and event, so a stream
 * record fanned out twice sends the same deliveries again, and the delivery function skips one
 * already logged as succeeded or failed. A batch that fails part-way queues nothing from its first
 * failed event on: the stream hands that event and every later one over again, and those queued
 * now would be queued twice.
 *
 * A delivery too large to travel in a message (over 24 KB) is logged first (pending), and
 * its message names it; those of a stream batch are read and written together (one engine request
 * per 100 reads, per 25 writes), and one already logged is not written again.
 */
import { config } from '../config.js';
import { logger } from '../logger.js';
import { pool } from '../pool.js';
import type { LoadedEntity } from '../registry/index.js';
import { payloadOf, type ChangeEvent } from './events.js';
import type { DeliveryMessage } from './delivery.js';
import type { DeliveryQueue, OutgoingMessage } from './queue.js';
import { createDeliveries, loggedDeliveries, pendingDelivery, type StoredDelivery } from './store.js';
import { subscribers, tenantWebhooks } from './subscriptions.js';

const SQS_BATCH = 10;
/** A message up to this size carries its delivery: SQS takes 256 KB per batch, so 10 messages of at most 24 KB. */
const INLINE_MAX_BYTES = 24_000;

type EntityOf = (slug: string) => LoadedEntity | undefined;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Fans a batch of events out, in order. Returns, for each event, whether all of its deliveries
 * were logged and queued (false: that event must be fanned out again; from the first such event
 * on, nothing is queued, except what a queue batch sent at the same time as a failing one took).
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
  await pool([...new Set(events.map((e) => e.tenantId))], concurrency, async (tenantId) => {
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
  holdFrom(ok);
  const deliveries = planned.filter((p) => ok[p.event]).map((p) => ({ ...p, body: messageBody(p.delivery) }));
  if (!deliveries.length) return ok;

  // Large deliveries are logged first: those already logged (a retried batch) are not written again.
  const large = deliveries.filter((p) => !p.body.inline);
  let logged = new Set<string>();
  if (large.length) {
    try {
      logged = await loggedDeliveries(large.map((p) => p.delivery));
    } catch (error) {
      fail(new Set(large.map((p) => p.event)), 'delivery log unreadable', error);
    }
  }
  const fresh = large.filter((p) => ok[p.event] && !logged.has(p.delivery.id));
  await pool(chunks(fresh, 25), concurrency, async (chunk) => {
    try {
      await createDeliveries(chunk.map((p) => p.delivery));
    } catch (error) {
      fail(new Set(chunk.map((p) => p.event)), 'delivery log not written', error);
    }
  });

  // The queue messages of every event before the first failure (its large deliveries all logged).
  holdFrom(ok);
  const outgoing = deliveries.filter((p) => ok[p.event]);
  await pool(chunks(outgoing, SQS_BATCH), concurrency, async (chunk) => {
    const messages: OutgoingMessage[] = chunk.map((p, i) => ({ id: String(i), body: p.body.text }));
    try {
      const failed = new Set(await queue.sendBatch(messages));
      if (failed.size) fail(new Set(chunk.filter((_, i) => failed.has(String(i))).map((p) => p.event)), `${failed.size} of ${messages.length} delivery messages refused by the queue`);
    } catch (error) {
      fail(new Set(chunk.map((p) => p.event)), 'delivery messages not sent', error);
    }
  });
  logger.debug('webhook deliveries queued', { events: events.length, deliveries: deliveries.length, logged: large.length });
  return ok;
}

/**
 * Marks every event after the first failed one as not handled: the stream resumes from the first
 * failure and hands the later ones over again, so they are queued then, once.
 */
function holdFrom(ok: boolean[]): void {
  const first = ok.indexOf(false);
  if (first >= 0) ok.fill(false, first);
}

/** A delivery's queue message: the delivery inside it, or (too large) only its ids. */
function messageBody(delivery: StoredDelivery): { text: string; inline: boolean } {
  const ids: DeliveryMessage = { tenantId: delivery.tenantId, webhookId: delivery.webhookId, deliveryId: delivery.id };
  const inline = JSON.stringify({ ...ids, delivery });
  return Buffer.byteLength(inline) <= INLINE_MAX_BYTES ? { text: inline, inline: true } : { text: JSON.stringify(ids), inline: false };
}
