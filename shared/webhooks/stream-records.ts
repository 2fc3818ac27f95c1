/**
 * What a stream event source mapping sends to its on-failure destination when it gives up on a
 * batch (Lambda's format for DynamoDB streams: the batch's shard and sequence numbers, not its
 * records), and reading those records again from the stream while it still holds them (24 hours).
 * The same API serves DynamoDB Streams on AWS and DynamoDB Local.
 */
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type DynamoDBStreamsClient,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';

export interface StreamBatchInfo {
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  approximateArrivalOfFirstRecord?: string;
  approximateArrivalOfLastRecord?: string;
  batchSize: number;
  streamArn: string;
}

/** The message Lambda sends to a stream mapping's on-failure destination. */
export interface StreamFailureMessage {
  requestContext: { requestId: string; functionArn: string; condition: 'RetryAttemptsExhausted' | 'RecordAgeExceeded' | string; approximateInvokeCount: number };
  responseContext?: { statusCode?: number; executedVersion?: string; functionError?: string };
  version: string;
  timestamp: string;
  DDBStreamBatchInfo: StreamBatchInfo;
}

/** The batch a failure message names, or undefined when the message is not one. */
export function parseStreamFailure(body: string): StreamBatchInfo | undefined {
  try {
    const info = (JSON.parse(body) as Partial<StreamFailureMessage>).DDBStreamBatchInfo;
    if (info && typeof info.shardId === 'string' && typeof info.startSequenceNumber === 'string' && typeof info.endSequenceNumber === 'string' && typeof info.streamArn === 'string') {
      return info;
    }
  } catch {
    // not JSON: not a failure message
  }
  return undefined;
}

const compare = (a: string, b: string): number => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

/** The shard of the stream whose sequence number range holds `sequenceNumber`. */
export async function shardOf(streams: DynamoDBStreamsClient, streamArn: string, sequenceNumber: string): Promise<string | undefined> {
  let start: string | undefined;
  do {
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
    for (const shard of StreamDescription?.Shards ?? []) {
      const range = shard.SequenceNumberRange;
      if (!range?.StartingSequenceNumber || compare(sequenceNumber, range.StartingSequenceNumber) < 0) continue;
      if (range.EndingSequenceNumber && compare(sequenceNumber, range.EndingSequenceNumber) > 0) continue;
      return shard.ShardId;
    }
    start = StreamDescription?.LastEvaluatedShardId;
  } while (start);
  return undefined;
}

/** Thrown when the stream no longer holds the batch (past its 24 hours, or the table's stream was replaced). */
export class StreamRecordsGoneError extends Error {
  override name = 'StreamRecordsGoneError';
}

/** GetRecords pages read past an empty page before giving up on reaching the batch's end. */
const MAX_EMPTY_PAGES = 20;

/** The records of the batch, from its first sequence number to its last, read from the stream. */
export async function readStreamBatch(streams: DynamoDBStreamsClient, batch: StreamBatchInfo): Promise<StreamRecord[]> {
  let iterator: string | undefined;
  try {
    ({ ShardIterator: iterator } = await streams.send(
      new GetShardIteratorCommand({ StreamArn: batch.streamArn, ShardId: batch.shardId, ShardIteratorType: 'AT_SEQUENCE_NUMBER', SequenceNumber: batch.startSequenceNumber }),
    ));
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TrimmedDataAccessException' || name === 'ResourceNotFoundException' || name === 'ValidationException') {
      throw new StreamRecordsGoneError(`the stream no longer holds records ${batch.startSequenceNumber}–${batch.endSequenceNumber} of ${batch.shardId} (${name})`);
    }
    throw error;
  }
  const records: StreamRecord[] = [];
  let empty = 0;
  while (iterator) {
    const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
    const got = page.Records ?? [];
    empty = got.length ? 0 : empty + 1;
    for (const record of got) {
      const sequence = record.dynamodb?.SequenceNumber;
      if (!sequence || compare(sequence, batch.startSequenceNumber) < 0) continue;
      if (compare(sequence, batch.endSequenceNumber) > 0) return records;
      records.push(record);
      if (sequence === batch.endSequenceNumber) return records;
    }
    if (empty > MAX_EMPTY_PAGES) break;
    iterator = page.NextShardIterator;
  }
  if (!records.length) throw new StreamRecordsGoneError(`no record ${batch.startSequenceNumber}–${batch.endSequenceNumber} found in ${batch.shardId}`);
  return records;
}
