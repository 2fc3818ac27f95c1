/**
 * The local stream mapping's failure handling (infra/local/stream-failures.ts), without I/O: the
 * stream's DescribeStream is mocked (aws-sdk-client-mock), the failure queue is in memory.
 */
import { DescribeStreamCommand, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { fanoutFailureQueue, withFailureDestination } from '../../../infra/local/stream-failures.js';
import { parseStreamFailure } from '../../../shared/webhooks/stream-records.js';

const STREAM = 'arn:aws:dynamodb:ddblocal:000000000000:table/events/stream/2026-11-25T10:00:00.000';
const streams = mockClient(DynamoDBStreamsClient);

function record(sequence: string, ageSeconds = 1): DynamoDBRecord {
  return { eventName: 'INSERT', eventSourceARN: STREAM, dynamodb: { SequenceNumber: sequence, ApproximateCreationDateTime: Math.floor(Date.now() / 1000) - ageSeconds } };
}

beforeEach(() => {
  streams.reset();
  streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '100' } }] } });
});

describe('local stream failure destination', () => {
  it('retries a failing record maxRetryAttempts times, then queues its description and hands on the records after it', async () => {
    const destination = fanoutFailureQueue(undefined);
    const seen: string[][] = [];
    const handler = withFailureDestination(
      async (event: DynamoDBStreamEvent) => {
        seen.push(event.Records.map((r) => r.dynamodb!.SequenceNumber!));
        return { batchItemFailures: event.Records.some((r) => r.dynamodb!.SequenceNumber === '200') ? [{ itemIdentifier: '200' }] : [] };
      },
      { destination, streams: new DynamoDBStreamsClient({ region: 'us-east-1' }), functionName: 'fanout', maxRetryAttempts: 2, maxRecordAgeSeconds: 3600 },
    );
    const batch = { Records: [record('100'), record('200'), record('300')] };

    const responses = [await handler(batch), await handler({ Records: batch.Records.slice(1) }), await handler({ Records: batch.Records.slice(1) })];

    expect(responses).toEqual([{ batchItemFailures: [{ itemIdentifier: '200' }] }, { batchItemFailures: [{ itemIdentifier: '200' }] }, { batchItemFailures: [] }]);
    // The third failure gave up on 200 and handed 300 on by itself.
    expect(seen.at(-1)).toEqual(['300']);
    const [message] = destination.receive(10);
    expect(JSON.parse(message.body)).toMatchObject({ requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 } });
    expect(parseStreamFailure(message.body)).toMatchObject({ shardId: 'shard-1', startSequenceNumber: '200', endSequenceNumber: '200', batchSize: 1, streamArn: STREAM });
  });

  it('gives up at once on a record older than the maximum record age', async () => {
    const destination = fanoutFailureQueue(undefined);
    const handler = withFailureDestination(async () => { throw new Error('down'); }, {
      destination,
      streams: new DynamoDBStreamsClient({ region: 'us-east-1' }),
      functionName: 'fanout',
      maxRetryAttempts: 10,
      maxRecordAgeSeconds: 60,
    });

    const response = await handler({ Records: [record('100', 120)] });

    expect(response).toEqual({ batchItemFailures: [] });
    expect(JSON.parse(destination.receive(10)[0].body)).toMatchObject({ requestContext: { condition: 'RecordAgeExceeded' } });
  });

  it('passes a batch that succeeds through untouched', async () => {
    const destination = fanoutFailureQueue(undefined);
    const handler = withFailureDestination(async () => ({ batchItemFailures: [] }), { destination, streams: new DynamoDBStreamsClient({ region: 'us-east-1' }), functionName: 'fanout' });

    expect(await handler({ Records: [record('100')] })).toEqual({ batchItemFailures: [] });
    expect(destination.size).toBe(0);
  });
});
