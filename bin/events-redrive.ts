/**
 * `npm run events:redrive`: feeds again what the webhook pipeline gave up on (shared/webhooks/redrive.ts).
 *
 * 1. The fan-out failure queue: each stream batch in it is read again from the events table's
 *    stream and its changes fanned out, skipping the deliveries already made.
 * 2. The delivery dead-letter queue: deliveries the delivery function crashed on are marked
 *    failed in the deliveries log; then every failed one is made pending again and queued for a
 *    new round of attempts (`--no-replay`: only mark them, and leave the messages where they are).
 *
 * On AWS (FANOUT_FAILURE_QUEUE_URL set): the queues of the stack outputs, with the operator's
 * credentials (AWS_PROFILE, AWS_REGION):
 *   FANOUT_FAILURE_QUEUE_URL, WEBHOOK_DEAD_LETTER_QUEUE_URL, WEBHOOK_QUEUE_URL, TABLE_WEBHOOKS
 * Locally: the queues of DATA_DIR (default .data) while `npm start` is stopped (the two would
 * share the queue journals); DynamoDB Local is started on DATA_DIR unless DYNAMODB_ENDPOINT names
 * a running engine. The next `npm start` delivers what was queued.
 *
 * Prints a JSON report; exits 3 when a batch could not be redriven because the stream no longer
 * holds it (the report lists it), 1 on any other failure.
 */
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { join, resolve } from 'node:path';
import { startDynamoLocal, type DynamoLocal } from '../infra/local/dynamodb-local.js';
import { fanoutFailureQueue, localMessageSource } from '../infra/local/stream-failures.js';
import { acquireLock, deliveryQueuePort, deliveryQueues } from '../infra/local/webhooks.js';
import { config, resetConfig } from '../shared/config.js';
import { findEntity, loadRegistry } from '../shared/registry/index.js';
import { SqsDeliveryQueue } from '../shared/webhooks/queue.js';
import { redriveDeadLetters, redriveFanoutFailures, SqsMessageSource, type DeadLetterReport, type FanoutRedriveReport, type MessageSource } from '../shared/webhooks/redrive.js';
import type { DeliveryQueue } from '../shared/webhooks/queue.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `Usage: npm run events:redrive [-- --no-replay]
  Feeds the webhook fan-out failures and the delivery dead letters in again (docs/deploying-on-aws.md).
  --no-replay   mark dead-lettered deliveries failed, but leave them (and their messages) as they are`;

interface Sources {
  fanoutFailures: MessageSource;
  deadLetters: MessageSource;
  queue: DeliveryQueue;
  streams: DynamoDBStreamsClient;
  close(): Promise<void>;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (see the stack outputs)`);
  return value;
}

function awsSources(): Sources {
  const streams = new DynamoDBStreamsClient({ region: config().region, maxAttempts: 5 });
  return {
    fanoutFailures: new SqsMessageSource(required('FANOUT_FAILURE_QUEUE_URL')),
    deadLetters: new SqsMessageSource(required('WEBHOOK_DEAD_LETTER_QUEUE_URL')),
    queue: new SqsDeliveryQueue(required('WEBHOOK_QUEUE_URL')),
    streams,
    close: async () => streams.destroy(),
  };
}

async function localSources(): Promise<Sources> {
  const dataDir = resolve(process.env.DATA_DIR || '.data');
  const dir = join(dataDir, 'webhooks');
  if (!acquireLock(dir)) throw new Error(`A running \`npm start\` holds ${dir}: stop it first, then run the redrive again.`);
  let engine: DynamoLocal | undefined;
  try {
    if (!config().dynamoEndpoint) {
      engine = await startDynamoLocal({ dataDir });
      process.env.DYNAMODB_ENDPOINT = engine.endpoint;
      resetConfig();
    }
  } catch (error) {
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, 'owner.pid'), { force: true });
    throw error;
  }
  const { dynamoEndpoint, region } = config();
  const streams = new DynamoDBStreamsClient({ region, maxAttempts: 3, endpoint: dynamoEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const { queue, deadLetter } = deliveryQueues(dir);
  const failures = fanoutFailureQueue(dir);
  return {
    fanoutFailures: localMessageSource(failures),
    deadLetters: localMessageSource(deadLetter),
    queue: deliveryQueuePort(queue),
    streams,
    close: async () => {
      queue.close();
      deadLetter.close();
      failures.close();
      streams.destroy();
      await engine?.stop();
      const { rmSync } = await import('node:fs');
      rmSync(join(dir, 'owner.pid'), { force: true });
    },
  };
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  const unknown = args.filter((a) => a !== '--no-replay');
  if (unknown.length) {
    console.error(`Unknown option ${unknown.join(' ')}\n${USAGE}`);
    return 1;
  }
  await loadRegistry();
  const sources = process.env.FANOUT_FAILURE_QUEUE_URL ? awsSources() : await localSources();
  let fanout: FanoutRedriveReport;
  let deadLetters: DeadLetterReport;
  try {
    fanout = await redriveFanoutFailures({ source: sources.fanoutFailures, streams: sources.streams, queue: sources.queue, entityOf: findEntity });
    deadLetters = await redriveDeadLetters({ source: sources.deadLetters, queue: sources.queue, replay: !args.includes('--no-replay') });
  } finally {
    await sources.close();
  }
  console.log(JSON.stringify({ fanoutFailures: fanout, deadLetters }, null, 2));
  return fanout.expired.length ? 3 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`events:redrive failed: ${(error as Error).message}`);
    process.exit(1);
  },
);
