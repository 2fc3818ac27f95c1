/**
 * The delivery queue as the fan-out and delivery functions see it: send messages, change a
 * received message's visibility (the retry back-off). On AWS it is SQS (WEBHOOK_QUEUE_URL); the
 * local runtime installs its own durable queue with the same semantics (infra/local).
 */
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../config.js';

export interface OutgoingMessage {
  /** Unique within one call. */
  id: string;
  body: string;
  delaySeconds?: number;
}

export interface DeliveryQueue {
  /** Sends up to 10 messages; returns the ids of those that were not accepted. */
  sendBatch(messages: OutgoingMessage[]): Promise<string[]>;
  /** The message becomes visible again after `seconds` (0: at once). */
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
}

/** SQS allows a visibility of at most 12 hours. */
export const MAX_VISIBILITY_SECONDS = 43_200;

export class SqsDeliveryQueue implements DeliveryQueue {
  private readonly client: SQSClient;

  constructor(
    private readonly queueUrl: string,
    client?: SQSClient,
  ) {
    this.client = client ?? new SQSClient({ region: config().region, maxAttempts: 3 });
  }

  async sendBatch(messages: OutgoingMessage[]): Promise<string[]> {
    if (!messages.length) return [];
    const result = await this.client.send(
      new SendMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: messages.map((m) => ({ Id: m.id, MessageBody: m.body, ...(m.delaySeconds ? { DelaySeconds: m.delaySeconds } : {}) })),
      }),
    );
    return (result.Failed ?? []).map((f) => f.Id ?? '');
  }

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    await this.client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.round(seconds))) }),
    );
  }
}

let current: DeliveryQueue | undefined;

/** Installs the queue every handler of this process uses (the local runtime; unit tests). */
export function useDeliveryQueue(queue: DeliveryQueue | undefined): void {
  current = queue;
}

export function deliveryQueue(): DeliveryQueue {
  if (!current) {
    const url = config().webhooks.queueUrl;
    if (!url) throw new Error('WEBHOOK_QUEUE_URL is not set');
    current = new SqsDeliveryQueue(url);
  }
  return current;
}
