/**
 * One delivery attempt and what follows from it: the delivery's log entry, the next retry (the
 * queue message's visibility: nothing waits inside a function), the dead-letter queue after the
 * last retry, and disabling a webhook whose deliveries have all failed for WEBHOOK_DISABLE_AFTER_SECONDS.
 *
 * A delivery logged as succeeded is not sent again by the queue's flow (the few cases where it
 * still can are listed in docs/delivery-guarantees.md):
 * - a message of a delivery the log says is done is acknowledged without sending;
 * - a success whose log write fails (the engine unreachable) is handed back to the queue, which
 *   does not depend on the database, in a message that logs it without sending (`outcome`);
 * - two copies of one delivery's message in this process (a stream record fanned out again, a
 *   queue's second copy) never send at the same time: the later one comes back after the earlier
 *   one's outcome is logged, and reads it;
 * - a logged success is not overwritten by another copy's failed attempt.
 */
import { config } from '../config.js';
import { logger } from '../logger.js';
import { deliveryQueue } from './queue.js';
import { decryptSecret } from './secrets.js';
import { postWebhook } from './send.js';
import { deliveryHeaders } from './signing.js';
import { getDelivery, getWebhook, markFailing, recordAttempt, updateWebhook, webhooksAndDeliveries, type AttemptRecord, type StoredDelivery, type StoredWebhook } from './store.js';

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
  /**
   * A succeeded attempt whose log write failed: this message logs it, and sends nothing
   * (handOver). Absent on every message the fan-out and the redrive send.
   */
  outcome?: AttemptRecord;
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

/** A handed-over success, as handOver writes it. */
function succeededOutcome(value: unknown): AttemptRecord | undefined {
  const o = value as Partial<AttemptRecord> | undefined;
  if (!o || typeof o !== 'object' || o.status !== 'succeeded' || typeof o.lastAttemptAt !== 'string' || typeof o.responseTimeMs !== 'number') return undefined;
  return {
    status: 'succeeded',
    responseCode: typeof o.responseCode === 'number' ? o.responseCode : null,
    responseTimeMs: o.responseTimeMs,
    error: null,
    ...(typeof o.responseBody === 'string' ? { responseBody: o.responseBody } : {}),
    lastAttemptAt: o.lastAttemptAt,
    nextAttemptAt: null,
  };
}

export function parseMessage(body: string): DeliveryMessage | undefined {
  try {
    const m = JSON.parse(body) as Partial<DeliveryMessage>;
    if (typeof m.tenantId === 'string' && typeof m.webhookId === 'string' && typeof m.deliveryId === 'string') {
      const message: DeliveryMessage = { tenantId: m.tenantId, webhookId: m.webhookId, deliveryId: m.deliveryId };
      if (carriesDelivery(m.delivery, message)) message.delivery = m.delivery;
      const outcome = succeededOutcome(m.outcome);
      if (outcome) message.outcome = outcome;
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
  /** When the read was sent (epoch ms): an attempt of this process that settled since makes it stale. */
  readAt: number;
}

/** After another copy's attempt, a message comes back this soon and reads the log again. */
export const COPY_RETRY_SECONDS = 2;
/** A handed-over outcome waits this long first: the engine has just failed a write. */
export const HANDOVER_DELAY_SECONDS = 2;

/**
 * This process's attempts, by `<webhook>/<delivery>`: those under way, and when each last
 * settled (its outcome logged or handed over), kept a minute. A copy of a message whose log
 * was read before its delivery's attempt here settled must read it again before sending.
 */
const underWay = new Set<string>();
const settledAt = new Map<string, number>();
const SETTLED_KEPT_MS = 60_000;

function settle(key: string): void {
  underWay.delete(key);
  settledAt.delete(key);
  const now = Date.now();
  settledAt.set(key, now);
  for (const [old, at] of settledAt) {
    if (at >= now - SETTLED_KEPT_MS) break;
    settledAt.delete(old);
  }
}

/**
 * A queue message's attempt. `receiveCount` is SQS's ApproximateReceiveCount (the redrive
 * limit); the retry schedule follows the delivery's own attempt count. A deleted or disabled
 * webhook gets no further attempts.
 */
export async function deliverFromQueue(message: DeliveryMessage, receiveCount: number, loaded?: Loaded): Promise<QueueOutcome> {
  const { webhook, delivery: logged, readAt } = loaded ?? (await load(message));
  // Not logged yet: the message carries it, and this attempt logs it (create: the delivery).
  const delivery = logged ?? message.delivery;
  const create = logged ? undefined : delivery;
  // Done already (succeeded, or failed for good): acknowledged without sending.
  if (!delivery || delivery.status !== 'pending') return { kind: 'done' };
  if (message.outcome) {
    // A success handed over by an attempt whose log write failed: logged now, not sent again.
    if (!webhook && !logged) return { kind: 'done' };
    await recordAttempt(message.webhookId, message.deliveryId, message.outcome, { create, keepSuccess: true });
    if (webhook) await webhookSucceeded(webhook);
    return { kind: 'done' };
  }
  const now = new Date();
  if (!webhook || webhook.status !== 'active') {
    // A delivery of a deleted or disabled webhook that was never logged leaves no entry behind.
    if (!logged) return { kind: 'done' };
    await recordAttempt(
      message.webhookId,
      message.deliveryId,
      { status: 'failed', responseCode: null, responseTimeMs: 0, error: webhook ? 'webhook disabled' : 'webhook deleted', lastAttemptAt: now.toISOString(), nextAttemptAt: null },
      { keepSuccess: true },
    );
    return { kind: 'done' };
  }
  // Another copy of this delivery's message is being attempted here, or settled after this log
  // was read: this one comes back and reads the log again (no attempt is counted).
  const key = `${delivery.webhookId}/${delivery.id}`;
  if (underWay.has(key) || (settledAt.get(key) ?? -Infinity) >= readAt) return { kind: 'retry', afterSeconds: COPY_RETRY_SECONDS };
  underWay.add(key);
  try {
    return await attemptOnce(message, webhook, delivery, create, receiveCount, now);
  } finally {
    settle(key);
  }
}

async function attemptOnce(message: DeliveryMessage, webhook: StoredWebhook, delivery: StoredDelivery, create: StoredDelivery | undefined, receiveCount: number, now: Date): Promise<QueueOutcome> {
  const result = await attempt(webhook, delivery);
  if (result.ok) {
    const success: AttemptRecord = { ...outcome(result), status: 'succeeded', lastAttemptAt: now.toISOString(), nextAttemptAt: null };
    try {
      await recordAttempt(webhook.id, delivery.id, success, { create, keepSuccess: true });
    } catch (error) {
      await handOver(message, create, success, error);
      return { kind: 'done' };
    }
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
    await recordAttempt(webhook.id, delivery.id, { ...outcome(result), status: 'failed', lastAttemptAt: now.toISOString(), nextAttemptAt: null }, { create, keepSuccess: true });
    await webhookFailed(webhook, now);
    return { kind: 'dead-letter' };
  }
  const next = new Date(now.getTime() + wait * 1000).toISOString();
  await recordAttempt(webhook.id, delivery.id, { ...outcome(result), status: 'pending', lastAttemptAt: now.toISOString(), nextAttemptAt: next }, { create, keepSuccess: true });
  await webhookFailed(webhook, now);
  return { kind: 'retry', afterSeconds: wait };
}

/**
 * The receiver has the delivery, but its log could not say so (the engine unreachable): the
 * outcome goes back to the queue, which does not depend on the database, in a message of its own
 * that logs it without sending. Only when the queue refuses it too is the log's error thrown:
 * the message then comes back and may send the delivery again (its outcome lost to both).
 */
async function handOver(message: DeliveryMessage, create: StoredDelivery | undefined, success: AttemptRecord, error: unknown): Promise<void> {
  const body: DeliveryMessage = { tenantId: message.tenantId, webhookId: message.webhookId, deliveryId: message.deliveryId, ...(create ? { delivery: create } : {}), outcome: success };
  const refused = await deliveryQueue()
    .sendBatch([{ id: '0', body: JSON.stringify(body), delaySeconds: HANDOVER_DELAY_SECONDS }])
    .catch(() => ['0']);
  if (refused.length) throw error;
  logger.warn('a delivery succeeded but its log could not be written; its outcome is queued to be logged', { deliveryId: message.deliveryId, error: (error as Error).message });
}

async function load(message: DeliveryMessage): Promise<Loaded> {
  const readAt = Date.now();
  const [webhook, delivery] = await Promise.all([getWebhook(message.tenantId, message.webhookId), getDelivery(message.webhookId, message.deliveryId)]);
  return { webhook, delivery, readAt };
}

/**
 * The webhooks and deliveries of a batch of messages in one read (a busy engine makes every
 * request wait its turn: one for the batch instead of two a message).
 */
export async function loadBatch(messages: readonly DeliveryMessage[]): Promise<(message: DeliveryMessage) => Loaded> {
  const readAt = Date.now();
  const found = await webhooksAndDeliveries(messages);
  return (m) => ({ webhook: found.webhook(m.tenantId, m.webhookId), delivery: found.delivery(m.webhookId, m.deliveryId), readAt });
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
