/**
 * Reads a table's DynamoDB stream from DynamoDB Local, as Lambda's event source mapping does on
 * AWS, and invokes a handler with Lambda-shaped DynamoDB stream events: shards are followed
 * (a closed shard's children start after it), only records passing `filter` are handed over,
 * partial batch failures resume from the first failed record, and the position of each shard is
 * checkpointed in a file so a restart neither loses nor replays the stream.
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { logger } from '../../shared/logger.js';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface StreamPollerOptions {
  dynamo: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  tableName: string;
  handler: StreamHandler;
  /** Where shard positions are kept; undefined keeps them in memory. */
  checkpointFile?: string;
  /** Records the handler gets (Lambda's filter criteria); the others are passed over. */
  filter?: (record: DynamoDBRecord) => boolean;
  idleMs?: number;
  batchSize?: number;
  region?: string;
}

interface Checkpoint {
  streamArn?: string;
  /** Per shard: the last sequence number handled, and whether the shard is finished. */
  shards: Record<string, { sequence?: string; closed?: boolean }>;
}

interface ShardState {
  iterator?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class StreamPoller {
  private checkpoint: Checkpoint = { shards: {} };
  private readonly active = new Map<string, ShardState>();
  private running = false;
  private loop?: Promise<void>;
  private lastDescribe = 0;
  private streamArn?: string;

  constructor(private readonly options: StreamPollerOptions) {
    if (options.checkpointFile && existsSync(options.checkpointFile)) {
      try {
        this.checkpoint = JSON.parse(readFileSync(options.checkpointFile, 'utf8')) as Checkpoint;
      } catch {
        logger.warn('stream checkpoint unreadable; starting from the oldest record', { file: options.checkpointFile });
      }
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let worked = false;
      try {
        if (!this.streamArn || Date.now() - this.lastDescribe > 5_000) await this.describe();
        for (const [shardId, state] of [...this.active]) {
          if (!this.running) break;
          worked = (await this.pollShard(shardId, state)) || worked;
        }
      } catch (error) {
        logger.warn('stream poll failed; retrying', { error: (error as Error).message });
        await sleep(1_000);
      }
      if (!worked) await sleep(this.options.idleMs ?? 100);
    }
  }

  private async describe(): Promise<void> {
    this.lastDescribe = Date.now();
    const { Table } = await this.options.dynamo.send(new DescribeTableCommand({ TableName: this.options.tableName }));
    const arn = Table?.LatestStreamArn;
    if (!arn) throw new Error(`table ${this.options.tableName} has no stream`);
    if (arn !== this.checkpoint.streamArn) {
      // A new stream (the table was created again): earlier positions mean nothing.
      this.checkpoint = { streamArn: arn, shards: {} };
      this.active.clear();
      this.save();
    }
    this.streamArn = arn;
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const { StreamDescription } = await this.options.streams.send(new DescribeStreamCommand({ StreamArn: arn, ExclusiveStartShardId: start }));
      shards.push(...(StreamDescription?.Shards ?? []));
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
    const known = new Set(shards.map((s) => s.ShardId!));
    for (const shard of shards) {
      const id = shard.ShardId!;
      if (this.checkpoint.shards[id]?.closed || this.active.has(id)) continue;
      // A child waits until its parent (if still in the stream) is finished: records stay in order.
      const parent = shard.ParentShardId;
      if (parent && known.has(parent) && !this.checkpoint.shards[parent]?.closed) continue;
      this.active.set(id, {});
    }
  }

  private async iteratorFor(shardId: string): Promise<string | undefined> {
    const sequence = this.checkpoint.shards[shardId]?.sequence;
    const { ShardIterator } = await this.options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: this.streamArn,
        ShardId: shardId,
        ...(sequence ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: sequence } : { ShardIteratorType: 'TRIM_HORIZON' }),
      }),
    );
    return ShardIterator;
  }

  /** One GetRecords on the shard and the handler for what it returned; true when records came. */
  private async pollShard(shardId: string, state: ShardState): Promise<boolean> {
    state.iterator ??= await this.iteratorFor(shardId);
    if (!state.iterator) return this.closeShard(shardId);
    let page;
    try {
      page = await this.options.streams.send(new GetRecordsCommand({ ShardIterator: state.iterator, Limit: this.options.batchSize ?? 100 }));
    } catch (error) {
      // An expired iterator, or DynamoDB Local's TrimmedDataAccessException on an iterator taken
      // while the shard was empty: a fresh iterator from the checkpoint reads on.
      const name = (error as Error).name;
      if (name === 'ExpiredIteratorException' || name === 'TrimmedDataAccessException') {
        logger.debug('stream iterator renewed', { shardId, reason: name });
        state.iterator = undefined;
        return false;
      }
      throw error;
    }
    const records = page.Records ?? [];
    if (records.length) logger.debug('stream records', { shardId, records: records.length, first: records[0].dynamodb?.SequenceNumber });
    if (records.length) {
      const handled = await this.deliver(shardId, records);
      if (handled < records.length) {
        // Resume after the last handled record, after a pause (Lambda retries the same way).
        state.iterator = undefined;
        await sleep(500);
        return true;
      }
    }
    state.iterator = page.NextShardIterator;
    if (!state.iterator) return this.closeShard(shardId);
    // DynamoDB Local: an iterator taken while the shard was empty may miss the first records for a
    // long while (then fails as trimmed); until a record was read, take a fresh one at each poll.
    if (!records.length && !this.checkpoint.shards[shardId]?.sequence) state.iterator = undefined;
    return records.length > 0;
  }

  private closeShard(shardId: string): boolean {
    this.checkpoint.shards[shardId] = { ...this.checkpoint.shards[shardId], closed: true };
    this.active.delete(shardId);
    this.save();
    this.lastDescribe = 0;
    return true;
  }

  /** Hands the records over; returns how many are done (checkpointed). */
  private async deliver(shardId: string, records: StreamRecord[]): Promise<number> {
    const lambdaRecords = records.map((r) => this.lambdaRecord(r));
    const selected = lambdaRecords.filter((r) => (this.options.filter ? this.options.filter(r) : true));
    let done = records.length;
    if (selected.length) {
      let failedAt: string | undefined;
      try {
        const response = await this.options.handler({ Records: selected });
        const failures = (response?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
        if (failures.length) failedAt = failures.sort((a, b) => (BigInt(a || '0') < BigInt(b || '0') ? -1 : 1))[0] || selected[0].dynamodb!.SequenceNumber;
      } catch (error) {
        logger.error('stream handler failed; the batch is retried', { error: (error as Error).message });
        failedAt = selected[0].dynamodb!.SequenceNumber;
      }
      if (failedAt !== undefined) done = records.findIndex((r) => r.dynamodb?.SequenceNumber === failedAt);
    }
    if (done > 0) {
      this.checkpoint.shards[shardId] = { ...this.checkpoint.shards[shardId], sequence: records[done - 1].dynamodb!.SequenceNumber };
      this.save();
    }
    return Math.max(0, done);
  }

  private lambdaRecord(r: StreamRecord): DynamoDBRecord {
    const d = r.dynamodb ?? {};
    return {
      eventID: r.eventID,
      eventName: r.eventName as DynamoDBRecord['eventName'],
      eventVersion: r.eventVersion ?? '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: r.awsRegion ?? this.options.region ?? 'local',
      eventSourceARN: this.streamArn,
      dynamodb: {
        ...(d.ApproximateCreationDateTime ? { ApproximateCreationDateTime: Math.floor(new Date(d.ApproximateCreationDateTime).getTime() / 1000) } : {}),
        Keys: d.Keys as never,
        NewImage: d.NewImage as never,
        OldImage: d.OldImage as never,
        SequenceNumber: d.SequenceNumber,
        SizeBytes: d.SizeBytes,
        StreamViewType: d.StreamViewType as never,
      },
    };
  }

  private save(): void {
    const file = this.options.checkpointFile;
    if (!file) return;
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.checkpoint));
    renameSync(tmp, file);
  }
}
