/**
 * Webhook delivery on AWS: the Events table's stream → the fan-out function (inserts only,
 * partial batch failures) → the delivery queue → the delivery function (partial batch failures)
 * → receivers. Failed attempts wait in the queue (the message's visibility is the back-off);
 * after the last one the queue's redrive policy moves the message to the dead-letter queue,
 * whose depth raises `deadLetterAlarm`. Both queues are encrypted; each function gets only the
 * grants it needs.
 *
 * No change is dropped silently: a stream record whose fan-out still fails after
 * FANOUT_RETRY_ATTEMPTS retries, or that is older than FANOUT_MAX_RECORD_AGE, is passed over (so
 * the shard moves on) and its batch's description (shard, sequence numbers) goes to the encrypted
 * `fanoutFailureQueue`, whose depth raises `fanoutFailureAlarm`. `npm run events:redrive`
 * (shared/webhooks/redrive.ts) reads those records again from the stream and fans them out, skipping
 * the deliveries already made. The stream keeps records 24 hours: a record reaches the failure
 * queue at most FANOUT_MAX_RECORD_AGE after its change, which leaves 18 hours to redrive it.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import path from 'node:path';
import { DEPLOYMENT_SECRET_ARN_ENV } from '../../shared/deployment-secret.js';
import { config } from '../../shared/config.js';
// The local runtime applies the same limits (infra/local/stream-failures.ts).
import { FANOUT_MAX_RECORD_AGE_SECONDS, FANOUT_RETRY_ATTEMPTS as FANOUT_RETRY_ATTEMPTS_SHARED } from '../../shared/webhooks/redrive.js';
import { BASE_ENVIRONMENT, createBundledFunction, PROJECT_ROOT, registryEnvironment } from './functions.js';
import { tableEnvName, type Tables } from './tables.js';

export const DELIVERY_TIMEOUT = Duration.seconds(30);
export const FANOUT_TIMEOUT = Duration.seconds(60);
/**
 * Retries of a failing stream batch (halved on each error, so one bad record is isolated). A
 * failing record holds up its shard while it is retried: ten retries wait out a throttle or a
 * short outage without stalling every later change for long.
 */
export const FANOUT_RETRY_ATTEMPTS = FANOUT_RETRY_ATTEMPTS_SHARED;
/**
 * A record older than this goes to the failure queue instead of being retried (the fan-out was
 * down or far behind): well inside the stream's 24-hour retention, so the redrive can still read it.
 */
export const FANOUT_MAX_RECORD_AGE = Duration.seconds(FANOUT_MAX_RECORD_AGE_SECONDS);
/** How long the stream keeps a record (DynamoDB Streams, fixed). */
export const STREAM_RETENTION = Duration.hours(24);

export interface WebhookDeliveryProps {
  tables: Tables;
  deploymentSecret: secretsmanager.ISecret;
  /** Extra environment for both functions (WEBHOOK_RETRY_SCHEDULE, ...). */
  environment?: Record<string, string>;
  /** Retry waits in seconds (default: the WEBHOOK_RETRY_SCHEDULE default); sets the queue's maxReceiveCount. */
  retryScheduleSeconds?: number[];
  /** For tests only: code instead of bundling the handlers. */
  code?: lambda.Code;
}

export class WebhookDelivery extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly fanoutFunction: lambda.Function;
  readonly deliveryFunction: lambda.Function;
  /** Raised when any delivery ends in the dead-letter queue; infra/aws/observability.ts sends it to the alarm topic. */
  readonly deadLetterAlarm: cloudwatch.Alarm;
  /** Where the stream's event source mapping sends the batches it gave up on (redriven by `npm run events:redrive`). */
  readonly fanoutFailureQueue: sqs.Queue;
  /** Raised when any stream batch is in the failure queue. */
  readonly fanoutFailureAlarm: cloudwatch.Alarm;
  /** Raised when an auto entity's busiest listing key stays near its ceiling (controlWriteShards). */
  writeShardsAlarm?: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);
    const { events, webhooks } = props.tables;
    if (!events || !webhooks) throw new Error('shared/tables.ts must define the events and webhooks tables for webhook delivery');
    const schedule = props.retryScheduleSeconds ?? config().webhooks.retryScheduleSeconds;

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // At least 6 times the consumer's timeout, as Lambda's SQS event source advises.
      visibilityTimeout: Duration.seconds(6 * DELIVERY_TIMEOUT.toSeconds()),
      retentionPeriod: Duration.days(4),
      // The first attempt and one per scheduled retry; then the dead-letter queue.
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: schedule.length + 1 },
    });

    const environment: Record<string, string> = {
      ...BASE_ENVIRONMENT,
      [tableEnvName('events')]: events.tableName,
      [tableEnvName('webhooks')]: webhooks.tableName,
      [DEPLOYMENT_SECRET_ARN_ENV]: props.deploymentSecret.secretArn,
      WEBHOOK_QUEUE_URL: this.queue.queueUrl,
      WEBHOOK_RETRY_SCHEDULE: schedule.join(','),
      // The fan-out reads the registry (which events a webhook may subscribe to).
      ...registryEnvironment(),
      ...props.environment,
    };
    const entry = (file: string) => path.join(PROJECT_ROOT, 'functions', 'webhooks', file);

    this.fanoutFailureQueue = new sqs.Queue(this, 'FanoutFailureQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS keeps a message; the records it points at stay in the stream 24 hours.
      retentionPeriod: Duration.days(14),
    });

    this.fanoutFunction = createBundledFunction(this, 'Fanout', {
      description: 'Entity Record API: webhook fan-out (Events stream → delivery queue)',
      entry: entry('fanout.ts'),
      code: props.code,
      timeout: FANOUT_TIMEOUT,
      environment,
    });
    webhooks.grantReadWriteData(this.fanoutFunction);
    this.queue.grantSendMessages(this.fanoutFunction);
    this.fanoutFunction.addEventSource(
      new sources.DynamoEventSource(events, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        reportBatchItemFailures: true,
        retryAttempts: FANOUT_RETRY_ATTEMPTS,
        maxRecordAge: FANOUT_MAX_RECORD_AGE,
        bisectBatchOnError: true,
        onFailure: new sources.SqsDlq(this.fanoutFailureQueue),
        filters: [lambda.FilterCriteria.filter({ eventName: lambda.FilterRule.isEqual('INSERT') })],
      }),
    );

    this.deliveryFunction = createBundledFunction(this, 'Deliver', {
      description: 'Entity Record API: webhook delivery (signed POST, retries by visibility)',
      entry: entry('deliver.ts'),
      code: props.code,
      timeout: DELIVERY_TIMEOUT,
      environment,
    });
    webhooks.grantReadWriteData(this.deliveryFunction);
    props.deploymentSecret.grantRead(this.deliveryFunction);
    this.queue.grant(this.deliveryFunction, 'sqs:ChangeMessageVisibility');
    this.deliveryFunction.addEventSource(new sources.SqsEventSource(this.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 50 }));

    this.deadLetterAlarm = new cloudwatch.Alarm(this, 'DeadLetterAlarm', {
      alarmDescription: 'Webhook deliveries ended in the dead-letter queue (every retry failed)',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.fanoutFailureAlarm = new cloudwatch.Alarm(this, 'FanoutFailureAlarm', {
      alarmDescription: 'Change events whose webhook fan-out failed past its retries: run `npm run events:redrive` within 18 hours (docs/deploying-on-aws.md)',
      metric: this.fanoutFailureQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * The write-shards controller in the fan-out (functions/webhooks/write-shards.ts): it counts each
   * batch's change events into load items of the limits table, reads the migration states and
   * records a change in the records table, and invokes the migration job to run it; a schedule
   * invokes it every 5 minutes so that a quiet entity is merged with no events coming. The alarm:
   * an auto entity's busiest listing key at or above 80 % of its ceiling for 5 minutes (the
   * controller is not keeping up, or the entity is at 32 shards).
   */
  controlWriteShards(props: { records: dynamodb.ITable; limits: dynamodb.ITable; migrationFunction: lambda.IFunction }): void {
    const fn = this.fanoutFunction;
    fn.addEnvironment(tableEnvName('records'), props.records.tableName);
    fn.addEnvironment(tableEnvName('limits'), props.limits.tableName);
    fn.addEnvironment('MIGRATION_FUNCTION_NAME', props.migrationFunction.functionName);
    props.records.grantReadWriteData(fn);
    props.limits.grantReadWriteData(fn);
    // The function itself (its unqualified ARN), not every version (grantInvoke's `:*`).
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.migrationFunction.functionArn] }));
    new events.Rule(this, 'WriteShardsSchedule', {
      description: 'Entity Record API: runs the write-shards controller while no change events come (merges of quiet entities)',
      schedule: events.Schedule.rate(Duration.minutes(5)),
      targets: [new targets.LambdaFunction(fn, { event: events.RuleTargetInput.fromObject({ source: 'write-shards-schedule' }) })],
    });
    this.writeShardsAlarm = new cloudwatch.Alarm(this, 'WriteShardsAlarm', {
      alarmDescription: "An auto entity's busiest listing key took 80 % of its write ceiling for 5 minutes: the write-shards controller has not split it (see GET /api/v1/migrations) or it is at 32 shards (docs/capacity.md)",
      metric: new cloudwatch.Metric({ namespace: 'EntityRecordApi', metricName: 'WriteShardsKeyLoad', period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 80,
      evaluationPeriods: 5,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
