/**
 * One delivery attempt and what follows from it: the delivery's log entry, the next retry (the
 * queue message's visibility: nothing waits inside a function), the dead-letter queue after the
 * last retry, and disabling a webhook whose deliveries have all failed for WEBHOOK_DISABLE_AFTER_SECONDS.
 */
import { config } from '../config.js';
import { logger } from '../logger.js';
import { decryptSecret } from './secrets.js';
import { postWebhook } from './send.js';
import { deliveryHeaders } from './signing.js';
import { getDelivery, getWebhook, markFailing, recordAttempt, updateWebhook, webhooksAndDeliveries, type StoredDelivery, type StoredWebhook } from './store.js';

/** What a queue message asks for. */
export interface DeliveryMessage {
  tenantId: string;
  webhookId: string;
  deliveryId: string;
  /**
   * The delivery itself, not yet logged: the fan-out sends it in the message (fanout.ts) and its
   * first attempt logs it. Absent when the delivery is logged already (a large payload, a replay).
   */
  delivery?: StoredDelivery;
}

export type QueueOutcome =
  /** Nothing more to do: delete the message. */
  | { kind: 'done' }
  /** Attempt again after this many seconds (the message's visibility). */
  | { kind: 'retry'; afterSeconds: number }
  /** The last attempt failed: let the message go to the dead-letter queue. */
  | { kind: 'dead-letter' };

/** The wait before retry number `attempt` (1-based), with ±20 % jitter so failed receivers are not hit all at once. */
export function backoffSeconds(attempt: number, schedule: readonly number[] = config().webhooks.retryScheduleSeconds, random = Math.random): number | undefined {
  const base = schedule[attempt - 1];
  if (base === undefined) return undefined;
  return Math.max(0, Math.round(base * (0.8 + 0.4 * random())));
}

/** Attempts in the queue's flow: the first and one per scheduled retry (the queue's maxReceiveCount). */
export function maxAttempts(schedule: readonly number[] = config().webhooks.retryScheduleSeconds): number {
  return schedule.length + 1;
}

/** A delivery carried in a message: its own ids, pending and never attempted. */
function carriesDelivery(value: unknown, message: DeliveryMessage): value is StoredDelivery {
  const d = value as Partial<StoredDelivery> | undefined;
  return (
    !!d &&
    typeof d === 'object' &&
    d.id === message.deliveryId &&
    d.webhookId === message.webhookId &&
    d.tenantId === message.tenantId &&
    typeof d.eventId === 'string' &&
    typeof d.eventType === 'string' &&
    typeof d.payload === 'string' &&
    d.status === 'pending' &&
    d.attempts === 0
  );
}

export function parseMessage(body: string): DeliveryMessage | undefined {
  try {
    const m = JSON.parse(body) as Partial<DeliveryMessage>;
    if (typeof m.tenantId === 'string' && typeof m.webhookId === 'string' && typeof m.deliveryId === 'string') {
      const message: DeliveryMessage = { tenantId: m.tenantId, webhookId: m.webhookId, deliveryId: m.deliveryId };
      if (carriesDelivery(m.delivery, message)) message.delivery = m.delivery;
      return message;
    }
  } catch {
    // falls through: a message that is not ours is dropped
  }
  return undefined;
}

async function attempt(webhook: StoredWebhook, delivery: StoredDelivery) {
  const secret = await decryptSecret(webhook.secret, webhook.id);
  const { timeoutMs, allowInsecure } = config().webhooks;
  return postWebhook(webhook.url, deliveryHeaders(secret, delivery.eventId, delivery.payload), delivery.payload, { timeoutMs, allowInsecure });
}

async function webhookSucceeded(webhook: StoredWebhook): Promise<void> {
  if (webhook.failingSince) await updateWebhook(webhook.tenantId, webhook.id, { failingSince: undefined });
}

async function webhookFailed(webhook: StoredWebhook, now: Date): Promise<void> {
  const stored = await markFailing(webhook.tenantId, webhook.id, now.toISOString());
  if (!stored?.failingSince || stored.status !== 'active') return;
  if (now.getTime() - Date.parse(stored.failingSince) >= config().webhooks.disableAfterSeconds * 1000) {
    await updateWebhook(webhook.tenantId, webhook.id, { status: 'disabled', disabledAt: now.toISOString(), updatedAt: now.toISOString() });
    logger.warn('webhook disabled: every delivery failed for the disable period', { webhookId: webhook.id, tenantId: webhook.tenantId });
  }
}

/** A message's webhook and delivery, when the caller read them already (a batch of messages read together). */
export interface Loaded {
  webhook: StoredWebhook | undefined;
  delivery: StoredDelivery | undefined;
}

/**
 * A queue message's attempt. `receiveCount` is SQS's ApproximateReceiveCount (the redrive
 * limit); the retry schedule follows the delivery's own attempt count. A deleted or disabled
 * webhook gets no further attempts.
 */
export async function deliverFromQueue(message: DeliveryMessage, receiveCount: number, loaded?: Loaded): Promise<QueueOutcome> {
  const { webhook, delivery: logged } = loaded ?? (await load(message));
  // Not logged yet: the message carries it, and this attempt logs it (create: the delivery).
  const delivery = logged ?? message.delivery;
  const create = logged ? undefined : delivery;
  if (!delivery || delivery.status !== 'pending') return { kind: 'done' };
  const now = new Date();
  if (!webhook || webhook.status !== 'active') {
    // A delivery of a deleted or disabled webhook that was never logged leaves no entry behind.
    if (!logged) return { kind: 'done' };
    await recordAttempt(message.webhookId, message.deliveryId, {
      status: 'failed',
      responseCode: null,
      responseTimeMs: 0,
      error: webhook ? 'webhook disabled' : 'webhook deleted',
      lastAttemptAt: now.toISOString(),
      nextAttemptAt: null,
    });
    return { kind: 'done' };
  }
  const result = await attempt(webhook, delivery);
  if (result.ok) {
    await recordAttempt(webhook.id, delivery.id, { ...outcome(result), status: 'succeeded', lastAttemptAt: now.toISOString(), nextAttemptAt: null }, create);
    await webhookSucceeded(webhook);
    return { kind: 'done' };
  }
  // Attempts are counted in the delivery's log (only POSTs made count), so a receive that ended
  // in an engine error before any POST uses no retry of the schedule. The queue's own receive
  // count still ends the flow at its redrive limit: no retry is promised beyond it.
  const attemptNumber = delivery.attempts + 1;
  const exhausted = attemptNumber >= maxAttempts() || receiveCount >= maxAttempts();
  const wait = exhausted ? undefined : backoffSeconds(attemptNumber);
  if (wait === undefined) {
    await recordAttempt(webhook.id, delivery.id, { ...outcome(result), status: 'failed', lastAttemptAt: now.toISOString(), nextAttemptAt: null }, create);
    await webhookFailed(webhook, now);
    return { kind: 'dead-letter' };
  }
  const next = new Date(now.getTime() + wait * 1000).toISOString();
  await recordAttempt(webhook.id, delivery.id, { ...outcome(result), status: 'pending', lastAttemptAt: now.toISOString(), nextAttemptAt: next }, create);
  await webhookFailed(webhook, now);
  return { kind: 'retry', afterSeconds: wait };
}

async function load(message: DeliveryMessage): Promise<Loaded> {
  const [webhook, delivery] = await Promise.all([getWebhook(message.tenantId, message.webhookId), getDelivery(message.webhookId, message.deliveryId)]);
  return { webhook, delivery };
}

/**
 * The webhooks and deliveries of a batch of messages in one read (a busy engine makes every
 * request wait its turn: one for the batch instead of two a message).
 */
export async function loadBatch(messages: readonly DeliveryMessage[]): Promise<(message: DeliveryMessage) => Loaded> {
  const found = await webhooksAndDeliveries(messages);
  return (m) => ({ webhook: found.webhook(m.tenantId, m.webhookId), delivery: found.delivery(m.webhookId, m.deliveryId) });
}

function outcome(result: Awaited<ReturnType<typeof postWebhook>>) {
  return { responseCode: result.responseCode ?? null, responseTimeMs: result.responseTimeMs, error: result.error ?? null, responseBody: result.responseBody };
}

/**
 * An attempt asked for through the API (replay of a delivery, test ping): made now, once. A
 * failure leaves a pending delivery pending (its queue message keeps retrying) and any other failed.
 */
export async function deliverNow(webhook: StoredWebhook, delivery: StoredDelivery): Promise<StoredDelivery> {
  const now = new Date();
  const result = await attempt(webhook, delivery);
  const status = result.ok ? 'succeeded' : delivery.status === 'pending' && delivery.attempts > 0 ? 'pending' : 'failed';
  const stored = await recordAttempt(webhook.id, delivery.id, {
    ...outcome(result),
    status,
    lastAttemptAt: now.toISOString(),
    nextAttemptAt: status === 'pending' ? delivery.nextAttemptAt : null,
  });
  if (result.ok) await webhookSucceeded(webhook);
  return stored ?? delivery;
}
