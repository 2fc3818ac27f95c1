/**
 * Nothing lost between a change and its webhooks, and nothing delivered twice when it is fed
 * again. Two places hold what did not go through, on AWS and locally alike:
 *
 * - The fan-out failure queue: the stream's event source mapping gives up on a record after
 *   FANOUT_RETRY_ATTEMPTS retries or at FANOUT_MAX_RECORD_AGE_SECONDS, and sends the batch's
 *   description (shard, sequence numbers) there. `redriveFanoutFailures` reads those records again
 *   from the stream and fans each change out once more, idempotently: a delivery already logged
 *   and attempted (succeeded, failed, or waiting for its retry) is not queued again; one logged but
 *   never attempted (its message was never accepted) is.
 * - The delivery dead-letter queue: a delivery's message lands there after its last attempt, or
 *   after the delivery function crashed or timed out on every receive — then its log entry is still
 *   pending. `redriveDeadLetters` marks such deliveries failed in the log and, with `replay`, makes
 *   every failed one pending again and queues it for a fresh round of attempts. A delivery that
 *   succeeded meanwhile is not repeated.
 *
 * No HTTP here: `npm run events:redrive` (bin/events-redrive.ts) calls these with SQS or the
 * local runtime's queues.
 */
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { config } from '../config.js';
import { logger } from '../logger.js';
import type { LoadedEntity } from '../registry/index.js';
import { parseMessage, type DeliveryMessage } from './delivery.js';
import { changeEventFromImage, payloadOf, type ChangeEvent } from './events.js';
import type { DeliveryQueue, OutgoingMessage } from './queue.js';
import { createDelivery, getDelivery, getWebhook, markDeliveryFailed, pendingDelivery, recordAttempt, reopenDelivery } from './store.js';
import { parseStreamFailure, readStreamBatch, StreamRecordsGoneError } from './stream-records.js';
import { subscribers, tenantWebhooks } from './subscriptions.js';

/** Retries of a failing stream batch before its records go to the failure queue (AWS and local). */
export const FANOUT_RETRY_ATTEMPTS = 10;
/** A stream record older than this goes to the failure queue instead of being retried: 6 hours of the stream's 24. */
export const FANOUT_MAX_RECORD_AGE_SECONDS = 6 * 3600;
/** The log's error for a delivery whose message reached the dead-letter queue without an attempt recording its end. */
export const CRASHED_DELIVERY_ERROR = 'the delivery function failed on every attempt (crash or timeout) before recording an outcome';

/**
 * A queue to drain: what the redrive reads, deletes once handled, or leaves in the queue. A
 * received message stays leased (invisible) for the rest of the run, so each is read once.
 */
export interface MessageSource {
  /** Up to 10 messages not received in this run yet; empty when none is left. */
  receive(): Promise<{ receiptHandle: string; body: string }[]>;
  delete(receiptHandle: string): Promise<void>;
  /** Leaves the message in the queue: visible again when the run ends (`finish`). */
  release(receiptHandle: string): Promise<void>;
  finish(): Promise<void>;
}

const SQS_BATCH = 10;

async function sendAll(queue: DeliveryQueue, messages: DeliveryMessage[]): Promise<void> {
  const outgoing: OutgoingMessage[] = messages.map((m, i) => ({ id: String(i % SQS_BATCH), body: JSON.stringify(m) }));
  for (let i = 0; i < outgoing.length; i += SQS_BATCH) {
    const failed = await queue.sendBatch(outgoing.slice(i, i + SQS_BATCH));
    if (failed.length) throw new Error(`${failed.length} delivery messages were not accepted by the queue`);
  }
}

/**
 * Fans one change out again: one delivery per subscribed webhook, queued unless it was already
 * logged and attempted. Returns how many were queued and how many were left alone.
 */
export async function refanOutEvent(event: ChangeEvent, entityOf: (slug: string) => LoadedEntity | undefined, queue: DeliveryQueue): Promise<{ queued: number; skipped: number }> {
  const targets = subscribers(event, await tenantWebhooks(event.tenantId), entityOf(event.entity));
  const payload = payloadOf(event);
  const now = Date.now();
  const messages: DeliveryMessage[] = [];
  let skipped = 0;
  for (const webhook of targets) {
    const delivery = pendingDelivery({ webhookId: webhook.id, tenantId: event.tenantId }, { id: event.id, type: event.type, createdAt: event.createdAt, payload }, new Date(now).toISOString(), now);
    if (!(await createDelivery(delivery))) {
      const logged = await getDelivery(webhook.id, delivery.id);
      if (!logged || logged.status !== 'pending' || logged.attempts > 0) {
        skipped++;
        continue;
      }
    }
    messages.push({ tenantId: event.tenantId, webhookId: webhook.id, deliveryId: delivery.id });
  }
  await sendAll(queue, messages);
  return { queued: messages.length, skipped };
}

export interface FanoutRedriveReport {
  /** Failure messages read. */
  messages: number;
  /** Changes fanned out again. */
  events: number;
  /** Deliveries queued. */
  queued: number;
  /** Deliveries already logged and attempted, left alone. */
  alreadyDelivered: number;
  /** Failure messages left in the queue because the stream no longer holds their records (lost: listed). */
  expired: { shardId: string; startSequenceNumber: string; endSequenceNumber: string; reason: string }[];
  /** Messages that are not stream failures, left in the queue. */
  unreadable: number;
}

export async function redriveFanoutFailures(options: {
  source: MessageSource;
  streams: DynamoDBStreamsClient;
  queue: DeliveryQueue;
  entityOf: (slug: string) => LoadedEntity | undefined;
}): Promise<FanoutRedriveReport> {
  const report: FanoutRedriveReport = { messages: 0, events: 0, queued: 0, alreadyDelivered: 0, expired: [], unreadable: 0 };
  for (let batch = await options.source.receive(); batch.length; batch = await options.source.receive()) {
    for (const message of batch) {
      report.messages++;
      const info = parseStreamFailure(message.body);
      if (!info) {
        report.unreadable++;
        await options.source.release(message.receiptHandle);
        continue;
      }
      let records;
      try {
        records = await readStreamBatch(options.streams, info);
      } catch (error) {
        if (!(error instanceof StreamRecordsGoneError)) throw error;
        report.expired.push({ shardId: info.shardId, startSequenceNumber: info.startSequenceNumber, endSequenceNumber: info.endSequenceNumber, reason: error.message });
        await options.source.release(message.receiptHandle);
        continue;
      }
      for (const record of records) {
        // The mapping's filter: inserts only (a change event is written once, then expires).
        if (record.eventName !== 'INSERT') continue;
        const change = changeEventFromImage(record.dynamodb?.NewImage as never);
        if (!change) continue;
        const { queued, skipped } = await refanOutEvent(change, options.entityOf, options.queue);
        report.events++;
        report.queued += queued;
        report.alreadyDelivered += skipped;
        logger.info('change fanned out again', { eventId: change.id, queued, skipped });
      }
      // Deleted only once every change of the batch is queued: a redrive cut short runs again safely.
      await options.source.delete(message.receiptHandle);
    }
  }
  return report;
}

export interface DeadLetterReport {
  messages: number;
  /** Deliveries still pending (the function crashed on every attempt), now marked failed. */
  markedFailed: number;
  /** Failed deliveries made pending again and queued. */
  replayed: number;
  /** Deliveries that succeeded meanwhile (or whose message carried its success, now logged): nothing to repeat, message deleted. */
  alreadyDelivered: number;
  /** Deliveries gone (expired after 30 days) or whose webhook is deleted or disabled: message deleted. */
  dropped: number;
  /**
   * Messages of a delivery this run handled already: a change fanned out twice (the stream hands a
   * change over again after a crash) queues its delivery twice, under the same id. Deleted (left
   * as they are with `--no-replay`), so the delivery is marked and replayed once.
   */
  duplicates: number;
  unreadable: number;
}

export async function redriveDeadLetters(options: { source: MessageSource; queue: DeliveryQueue; replay: boolean }): Promise<DeadLetterReport> {
  const report: DeadLetterReport = { messages: 0, markedFailed: 0, replayed: 0, alreadyDelivered: 0, dropped: 0, duplicates: 0, unreadable: 0 };
  const handled = new Set<string>();
  for (let batch = await options.source.receive(); batch.length; batch = await options.source.receive()) {
    for (const message of batch) {
      report.messages++;
      const parsed = parseMessage(message.body);
      if (!parsed) {
        report.unreadable++;
        await options.source.release(message.receiptHandle);
        continue;
      }
      const id = `${parsed.webhookId}/${parsed.deliveryId}`;
      if (handled.has(id)) {
        report.duplicates++;
        await (options.replay ? options.source.delete(message.receiptHandle) : options.source.release(message.receiptHandle));
        continue;
      }
      handled.add(id);
      let delivery = await getDelivery(parsed.webhookId, parsed.deliveryId);
      // Never attempted, so never logged: the message carries it; logged now, it is handled as any other.
      if (!delivery && parsed.delivery) {
        await createDelivery(parsed.delivery);
        delivery = await getDelivery(parsed.webhookId, parsed.deliveryId);
      }
      if (!delivery) {
        report.dropped++;
        await options.source.delete(message.receiptHandle);
        continue;
      }
      if (delivery.status === 'pending' && parsed.outcome) {
        // A success whose log write failed, handed over to the queue: logged now, never sent again.
        await recordAttempt(delivery.webhookId, delivery.id, parsed.outcome, { keepSuccess: true });
        delivery = { ...delivery, status: 'succeeded' };
      }
      if (delivery.status === 'succeeded') {
        report.alreadyDelivered++;
        await options.source.delete(message.receiptHandle);
        continue;
      }
      if (delivery.status === 'pending') {
        const marked = await markDeliveryFailed(delivery.webhookId, delivery.id, CRASHED_DELIVERY_ERROR, new Date().toISOString());
        if (marked) {
          report.markedFailed++;
          logger.warn('dead-lettered delivery marked failed', { webhookId: delivery.webhookId, deliveryId: delivery.id });
          delivery = marked;
        }
      }
      if (!options.replay) {
        await options.source.release(message.receiptHandle);
        continue;
      }
      const webhook = await getWebhook(parsed.tenantId, parsed.webhookId);
      if (!webhook || webhook.status !== 'active') {
        report.dropped++;
        await options.source.delete(message.receiptHandle);
        continue;
      }
      if (await reopenDelivery(delivery.webhookId, delivery.id)) {
        // Logged now: the message names it.
        await sendAll(options.queue, [{ tenantId: parsed.tenantId, webhookId: parsed.webhookId, deliveryId: parsed.deliveryId }]);
        report.replayed++;
      }
      await options.source.delete(message.receiptHandle);
    }
  }
  await options.source.finish();
  return report;
}

/** An SQS queue as a MessageSource: long polling (every server asked), each message leased for the run (5 minutes by default). */
export class SqsMessageSource implements MessageSource {
  private readonly client: SQSClient;
  private readonly released: string[] = [];

  constructor(
    private readonly queueUrl: string,
    client?: SQSClient,
    private readonly leaseSeconds = 300,
  ) {
    this.client = client ?? new SQSClient({ region: config().region, maxAttempts: 5 });
  }

  async receive(): Promise<{ receiptHandle: string; body: string }[]> {
    const { Messages } = await this.client.send(
      new ReceiveMessageCommand({ QueueUrl: this.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: this.leaseSeconds }),
    );
    return (Messages ?? []).map((m) => ({ receiptHandle: m.ReceiptHandle!, body: m.Body ?? '' }));
  }

  async delete(receiptHandle: string): Promise<void> {
    await this.client.send(new DeleteMessageCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle }));
  }

  async release(receiptHandle: string): Promise<void> {
    this.released.push(receiptHandle);
  }

  async finish(): Promise<void> {
    for (const receiptHandle of this.released.splice(0)) {
      await this.client.send(new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: 0 }));
    }
  }
}
