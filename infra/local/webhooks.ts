/**
 * Webhooks under `npm start`: the fan-out function fed from DynamoDB Local's stream of the Events
 * table (stream-poller.ts) and the delivery function fed from a durable local queue with a
 * dead-letter queue (queue.ts) — the very handlers Lambda runs, with Lambda-shaped events.
 * State lives in DATA_DIR/webhooks/ (queue journals, stream checkpoint). One process owns a
 * DATA_DIR's webhooks at a time (a lock file): a second server on the same DATA_DIR serves the
 * API but leaves deliveries to the first.
 */
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { SQSEvent, SQSRecord, SQSBatchResponse, DynamoDBStreamEvent, DynamoDBBatchResponse } from 'aws-lambda';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { config } from '../../shared/config.js';
import { createDynamoClient } from '../../shared/data/client.js';
import { logger } from '../../shared/logger.js';
import { maxAttempts } from '../../shared/webhooks/delivery.js';
import { useDeliveryQueue, type DeliveryQueue } from '../../shared/webhooks/queue.js';
import { LocalQueue, type ReceivedMessage } from './queue.js';
import { StreamPoller } from './stream-poller.js';
import type { Running } from './supervisor.js';
import { fanoutFailureQueue, withFailureDestination } from './stream-failures.js';

/** The delivery function's timeout; the queue's visibility timeout is 6 times it, as on AWS. */
export const DELIVERY_TIMEOUT_SECONDS = 30;
/** Batches handled at once (Lambda would scale out concurrent invocations). */
const CONSUMERS = Number(process.env.WEBHOOK_LOCAL_CONCURRENCY) || 8;

export interface LocalWebhooks {
  queue: LocalQueue;
  deadLetter: LocalQueue;
  /** For the supervisor: the delivery workers now running, and starting them again. */
  running(): Running;
  restart(): Promise<Running>;
  /** Stream records the fan-out gave up on (stream-failures.ts). */
  fanoutFailures: LocalQueue;
  stop(): Promise<void>;
}

/** Takes DATA_DIR/webhooks for this process (a server, or `npm run events:redrive`); false when another live process holds it. */
export function acquireLock(dir: string): boolean {
  const file = join(dir, 'owner.pid');
  for (let i = 0; i < 2; i++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(file, 'utf8'));
      try {
        if (pid && pid !== process.pid) {
          process.kill(pid, 0);
          return false;
        }
      } catch {
        // The owner is gone (kill -9): take over.
      }
      rmSync(file, { force: true });
    }
  }
  return false;
}

function sqsRecord(queue: LocalQueue, m: ReceivedMessage): SQSRecord {
  return {
    messageId: m.messageId,
    receiptHandle: m.receiptHandle,
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount),
      SentTimestamp: String(m.sentAt),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(m.firstReceivedAt),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:local:000000000000:${queue.name}`,
    awsRegion: config().region,
  };
}

interface Workers {
  /** Settles when a worker failed (the others end after their batch). */
  ended: Promise<string>;
  /** Settles when every worker of this generation has ended. */
  done: Promise<void>;
}

function startWorkers(consume: (live: () => boolean) => Promise<void>): Workers {
  let live = true;
  let reportEnd!: (reason: string) => void;
  const ended = new Promise<string>((resolveEnded) => (reportEnd = resolveEnded));
  const done = Promise.all(
    Array.from({ length: CONSUMERS }, () =>
      consume(() => live).catch((error: unknown) => {
        live = false;
        logger.error('a delivery worker failed', { error: (error as Error).message });
        reportEnd(`a delivery worker failed: ${(error as Error).message}`);
      }),
    ),
  ).then(() => undefined);
  return { ended, done };
}

export async function startLocalWebhooks(dataDir: string | undefined): Promise<LocalWebhooks | undefined> {
  let dir: string | undefined;
  if (dataDir) {
    dir = join(resolve(dataDir), 'webhooks');
    mkdirSync(dir, { recursive: true });
    if (!acquireLock(dir)) {
      logger.warn('another process delivers the webhooks of this DATA_DIR; this one does not', { dataDir });
      return undefined;
    }
  }
  const { queue, deadLetter } = deliveryQueues(dir);
  const fanoutFailures = fanoutFailureQueue(dir);
  const port: DeliveryQueue = deliveryQueuePort(queue);
  useDeliveryQueue(port);

  const fanout = (await import('../../functions/webhooks/fanout.js')) as { handler: (e: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse> };
  const deliver = (await import('../../functions/webhooks/deliver.js')) as { handler: (e: SQSEvent) => Promise<SQSBatchResponse> };

  const dynamo = createDynamoClient();
  const { dynamoEndpoint, region } = config();
  const streams = new DynamoDBStreamsClient({
    region,
    maxAttempts: 3,
    ...(dynamoEndpoint ? { endpoint: dynamoEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
  const poller = new StreamPoller({
    dynamo,
    streams,
    tableName: config().tables.events,
    // The mapping's retry limit, record age and on-failure destination, as on AWS.
    handler: withFailureDestination((event) => fanout.handler(event), { destination: fanoutFailures, streams, functionName: 'local-webhook-fanout' }),
    checkpointFile: dir && join(dir, 'events-stream.json'),
    // The event source mapping's filter on AWS (infra/aws/webhooks.ts): inserts only.
    filter: (record) => record.eventName === 'INSERT',
    region,
    batchSize: 1000,
  });
  poller.start();

  let running = true;
  const consume = async (live: () => boolean) => {
    while (running && live()) {
      const batch = queue.receive(10);
      if (!batch.length) {
        await queue.waitForMessages(1_000);
        continue;
      }
      try {
        const response = await deliver.handler({ Records: batch.map((m) => sqsRecord(queue, m)) });
        const failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        for (const m of batch) if (!failed.has(m.messageId)) queue.delete(m.receiptHandle);
      } catch (error) {
        // As on Lambda: the whole batch comes back after its visibility timeout.
        logger.error('delivery handler failed', { error: (error as Error).message });
      }
    }
  };
  // The workers, run as one part under the supervisor: a worker that throws outside a delivery
  // (the queue's journal cannot be written) ends its generation; the supervisor starts another.
  let workers = startWorkers(consume);

  return {
    queue,
    deadLetter,
    running: () => ({ ended: workers.ended }),
    restart: async () => {
      await workers.done;
      if (!running) throw new Error('the webhook workers were stopped');
      workers = startWorkers(consume);
      return { ended: workers.ended };
    },
    fanoutFailures,
    stop: async () => {
      running = false;
      queue.wakeWaiters();
      await poller.stop();
      await workers.done;
      queue.close();
      deadLetter.close();
      fanoutFailures.close();
      streams.destroy();
      dynamo.destroy();
      useDeliveryQueue(undefined);
      if (dir) rmSync(join(dir, 'owner.pid'), { force: true });
    },
  };
}

/** The delivery queue and its dead-letter queue of a DATA_DIR's webhooks directory (in memory without one). */
export function deliveryQueues(dir: string | undefined): { queue: LocalQueue; deadLetter: LocalQueue } {
  const deadLetter = new LocalQueue({ name: 'webhook-deliveries-dlq', file: dir && join(dir, 'deliveries-dlq.jsonl'), visibilityTimeoutSeconds: 30 });
  const queue = new LocalQueue({
    name: 'webhook-deliveries',
    file: dir && join(dir, 'deliveries.jsonl'),
    visibilityTimeoutSeconds: 6 * DELIVERY_TIMEOUT_SECONDS,
    maxReceiveCount: maxAttempts(),
    deadLetter,
  });
  return { queue, deadLetter };
}

/** The local delivery queue as the fan-out and delivery functions see it. */
export function deliveryQueuePort(queue: LocalQueue): DeliveryQueue {
  return {
    async sendBatch(messages) {
      for (const m of messages) queue.send(m.body, m.delaySeconds ?? 0);
      return [];
    },
    async changeVisibility(receiptHandle, seconds) {
      queue.changeVisibility(receiptHandle, seconds);
    },
  };
}
