/**
 * The stream event source mapping's failure handling, locally (infra/aws/webhooks.ts on AWS):
 * a record whose handler still fails after `maxRetryAttempts` retries, or that is older than
 * `maxRecordAgeSeconds`, is passed over so the stream moves on, and a message in Lambda's
 * on-failure format (shard, sequence numbers) goes to a durable local queue
 * (DATA_DIR/webhooks/events-fanout-failures.jsonl). `npm run events:redrive` feeds it in again
 * (shared/webhooks/redrive.ts). Retry counts live in memory: a restart gives a record its retries again.
 *
 * Also the local queues as the redrive's MessageSource.
 */
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { logger } from '../../shared/logger.js';
import { FANOUT_MAX_RECORD_AGE_SECONDS, FANOUT_RETRY_ATTEMPTS, type MessageSource } from '../../shared/webhooks/redrive.js';
import { shardOf, type StreamFailureMessage } from '../../shared/webhooks/stream-records.js';
import { LocalQueue } from './queue.js';
import type { StreamHandler } from './stream-poller.js';

export const FANOUT_FAILURE_QUEUE = 'webhook-fanout-failures';

/** The failure queue of a DATA_DIR's webhooks directory (in memory without one). */
export function fanoutFailureQueue(dir: string | undefined): LocalQueue {
  return new LocalQueue({ name: FANOUT_FAILURE_QUEUE, file: dir && join(dir, 'events-fanout-failures.jsonl'), visibilityTimeoutSeconds: 300 });
}

export interface StreamFailureOptions {
  destination: LocalQueue;
  streams: DynamoDBStreamsClient;
  functionName: string;
  /** Default FANOUT_RETRY_ATTEMPTS, or WEBHOOK_FANOUT_RETRY_ATTEMPTS. */
  maxRetryAttempts?: number;
  /** Default FANOUT_MAX_RECORD_AGE_SECONDS, or WEBHOOK_FANOUT_MAX_RECORD_AGE_SECONDS. */
  maxRecordAgeSeconds?: number;
}

function envNumber(name: string): number | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${value}`);
  return n;
}

const sequenceOf = (record: DynamoDBRecord) => record.dynamodb?.SequenceNumber ?? '';

/** `handler` with the mapping's retry limit, maximum record age and on-failure destination. */
export function withFailureDestination(handler: StreamHandler, options: StreamFailureOptions): StreamHandler {
  const maxRetries = options.maxRetryAttempts ?? envNumber('WEBHOOK_FANOUT_RETRY_ATTEMPTS') ?? FANOUT_RETRY_ATTEMPTS;
  const maxAgeSeconds = options.maxRecordAgeSeconds ?? envNumber('WEBHOOK_FANOUT_MAX_RECORD_AGE_SECONDS') ?? FANOUT_MAX_RECORD_AGE_SECONDS;
  /** Invocations that failed at a record, by its sequence number. */
  const invocations = new Map<string, number>();

  async function giveUp(record: DynamoDBRecord, condition: string, count: number): Promise<void> {
    const sequence = sequenceOf(record);
    const streamArn = record.eventSourceARN ?? '';
    const arrival = record.dynamodb?.ApproximateCreationDateTime;
    const at = arrival ? new Date(arrival * 1000).toISOString() : undefined;
    const message: StreamFailureMessage = {
      requestContext: { requestId: randomUUID(), functionArn: `arn:aws:lambda:local:000000000000:function:${options.functionName}`, condition, approximateInvokeCount: count },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'batch item failure' },
      version: '1.0',
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId: (await shardOf(options.streams, streamArn, sequence)) ?? '',
        startSequenceNumber: sequence,
        endSequenceNumber: sequence,
        approximateArrivalOfFirstRecord: at,
        approximateArrivalOfLastRecord: at,
        batchSize: 1,
        streamArn,
      },
    };
    options.destination.send(JSON.stringify(message));
    logger.error('stream record sent to the fan-out failure queue; run `npm run events:redrive`', { condition, sequence, invocations: count });
  }

  return async function handleWithFailureDestination(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
    let records = event.Records;
    while (records.length) {
      let failedAt: string | undefined;
      try {
        const response = await handler({ Records: records });
        const failures = (response?.batchItemFailures ?? []).map((f) => f.itemIdentifier).filter((id) => records.some((r) => sequenceOf(r) === id));
        failedAt = failures.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))[0];
      } catch (error) {
        logger.error('stream handler failed', { error: (error as Error).message });
        failedAt = sequenceOf(records[0]);
      }
      if (failedAt === undefined) return { batchItemFailures: [] };
      const index = records.findIndex((r) => sequenceOf(r) === failedAt);
      const record = records[index];
      const count = (invocations.get(failedAt) ?? 0) + 1;
      const arrival = record.dynamodb?.ApproximateCreationDateTime;
      const tooOld = arrival !== undefined && Date.now() / 1000 - arrival > maxAgeSeconds;
      if (!tooOld && count <= maxRetries) {
        invocations.set(failedAt, count);
        return { batchItemFailures: [{ itemIdentifier: failedAt }] };
      }
      invocations.delete(failedAt);
      await giveUp(record, tooOld ? 'RecordAgeExceeded' : 'RetryAttemptsExhausted', count);
      // The records after it go on, as the mapping goes on after a batch it gave up on.
      records = records.slice(index + 1);
    }
    return { batchItemFailures: [] };
  };
}

/** A local queue as the redrive's MessageSource; what it leaves in the queue is visible again when it finishes. */
export function localMessageSource(queue: LocalQueue): MessageSource {
  const released: string[] = [];
  return {
    async receive() {
      return queue.receive(10, 3600).map((m) => ({ receiptHandle: m.receiptHandle, body: m.body }));
    },
    async delete(receiptHandle) {
      queue.delete(receiptHandle);
    },
    async release(receiptHandle) {
      released.push(receiptHandle);
    },
    async finish() {
      for (const receiptHandle of released.splice(0)) queue.changeVisibility(receiptHandle, 0);
    },
  };
}
