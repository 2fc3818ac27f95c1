/**
 * The write-shards controller in the stream consumer (the webhook fan-out): each batch's change
 * events are counted per entity and shard (shared/migrations/shard-load.ts recordLoad), and on
 * AWS (MIGRATION_FUNCTION_NAME set) the controller runs at most every SHARDS_CHECK_SECONDS per
 * container, and on the schedule that invokes the fan-out when no events come (merges of quiet
 * entities). A change it starts is run by the migration job, invoked asynchronously; under
 * `npm start` the local runtime runs the controller and the migration itself (infra/local/migrations.ts).
 * Neither ever fails a batch: a load not counted, or a check missed, is retried by the next.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { onFirstUse } from '../../shared/on-first-use.js';
import { config } from '../../shared/config.js';
import { logger } from '../../shared/logger.js';
import { allEntities, autoShards, findEntity } from '../../shared/registry/index.js';

const code = onFirstUse(() => Promise.all([import('../../shared/migrations/shard-load.js'), import('@aws-sdk/client-lambda')]));

/** Seconds the job waits after a change is recorded before its pass (every API function reads states at least every 20 s). */
const SETTLE_MS = 30_000;

let lastCheck = 0;
let lastMergeCheck = 0;
let lambda: import('@aws-sdk/client-lambda').LambdaClient | undefined;

/** The change events of a stream batch, counted for the controller: those of auto entities only (no write for the others). */
export async function countLoad(records: readonly DynamoDBRecord[]): Promise<void> {
  try {
    const [{ loadOfEvents, recordLoad }] = await code();
    const events = records.flatMap((r) => {
      const pk = r.dynamodb?.Keys?.pk?.S;
      const image = r.dynamodb?.NewImage;
      const entity = image?.entity?.S;
      const createdAt = image?.createdAt?.S;
      const definition = entity ? findEntity(entity) : undefined;
      return r.eventName === 'INSERT' && pk && entity && createdAt && definition && autoShards(definition) ? [{ pk, entity, createdAt, perTenant: !definition.access.public }] : [];
    });
    if (events.length) await recordLoad(loadOfEvents(events, config().writeShards.windowSeconds * 1000));
  } catch (error) {
    logger.warn('write shards: the batch load was not counted', { error: (error as Error).message });
  }
}

/** One EMF line: each auto entity's busiest key load (percent of a key's ceiling) and shard count, and the changes started. */
function metrics(outcomes: readonly import('../../shared/migrations/shard-load.js').ShardControlOutcome[], ceiling: number): void {
  for (const o of outcomes) {
    const rate = o.decision.measure?.rate ?? 0;
    console.log(
      JSON.stringify({
        _aws: {
          Timestamp: Date.now(),
          CloudWatchMetrics: [
            {
              Namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'EntityRecordApi',
              // Per entity, and across entities (the alarm's).
              Dimensions: [['Entity'], []],
              Metrics: [
                { Name: 'WriteShardsKeyLoad', Unit: 'Percent' },
                { Name: 'WriteShards', Unit: 'Count' },
                { Name: 'WriteShardsChanges', Unit: 'Count' },
              ],
            },
          ],
        },
        Entity: o.entity,
        WriteShardsKeyLoad: Math.round((rate / ceiling) * 1000) / 10,
        WriteShards: o.started ? o.started.target.layout.writeShards ?? 1 : o.shards,
        WriteShardsChanges: o.started ? 1 : 0,
      }),
    );
  }
}

/** Runs the controller on AWS (due checks only; `scheduled`: the merge check too) and starts the job for a change it recorded. */
export async function controlOnAws(scheduled: boolean): Promise<void> {
  const job = process.env.MIGRATION_FUNCTION_NAME;
  if (!job) return;
  const settings = config().writeShards;
  const now = Date.now();
  if (!scheduled && now - lastCheck < settings.checkSeconds * 1000) return;
  lastCheck = now;
  const merge = now - lastMergeCheck >= settings.mergeCheckSeconds * 1000;
  if (merge) lastMergeCheck = now;
  try {
    const [{ controlShards, KEY_CEILING }, { InvokeCommand, LambdaClient }] = await code();
    const outcomes = await controlShards(allEntities(), { now, merge, settleMs: SETTLE_MS });
    metrics(outcomes, KEY_CEILING);
    if (outcomes.some((o) => o.started)) {
      lambda ??= new LambdaClient({});
      await lambda.send(new InvokeCommand({ FunctionName: job, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify({ action: 'run', notBefore: now + SETTLE_MS })) }));
    }
  } catch (error) {
    logger.warn('write shards: the controller did not run', { error: (error as Error).message });
  }
}
