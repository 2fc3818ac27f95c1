/**
 * What an operator watches: CloudWatch alarms sent to an optional SNS topic, and one dashboard.
 *
 * Alarms (each with a threshold from CDK context, defaults in DEFAULT_THRESHOLDS):
 *   - the API's 5xx rate (stage metrics 5XXError / Count, once the period has MIN_REQUESTS requests);
 *   - p99 latency per family, as the p99 of its function's Duration: one function serves one
 *     family, so this is the family's own time. API Gateway's per-method Latency exists too
 *     (detailed metrics), but a family spans dozens of methods and CloudWatch cannot merge
 *     percentiles across dimensions (metric math has no percentile of a union, Metrics Insights
 *     has no percentiles), so a per-family gateway p99 is not expressible. The event stream is
 *     left out: its Duration is how long a client stays connected;
 *   - Lambda errors and throttles per function (the families' and webhook delivery's);
 *   - DynamoDB throttle events per table (reads and writes of the table and its indexes);
 *   - the webhook dead-letter queue's depth (WebhookDelivery.deadLetterAlarm).
 * Each alarm notifies the topic when it fires and when it clears: an existing topic by ARN
 * (context alarmTopicArn), or one created with an e-mail subscription (context alarmEmail), or
 * none (the alarms still show in the console and on the dashboard).
 */
import { Duration, Stack, Token } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { STREAMING_FAMILIES } from '../../shared/routes.js';
import { tables as tableDefinitions } from '../../shared/tables.js';
import type { FamilyFunctions } from './functions.js';
import { pascal, type TableId, type Tables } from './tables.js';
import type { WebhookDelivery } from './webhooks.js';

export const PERIOD = Duration.minutes(5);
/** The 5xx rate is judged only over periods with at least this many requests (1 failure in 3 is not an outage). */
export const MIN_REQUESTS = 20;

export interface AlarmThresholds {
  /** 5xx responses as a percentage of requests over 5 minutes, in 2 of 3 periods. */
  serverErrorRatePercent: number;
  /** p99 of each family's function duration (ms) over 5 minutes, in 2 of 3 periods; by family. */
  latencyP99Ms: Readonly<Record<string, number>>;
  /** Lambda errors (uncaught exceptions, timeouts, crashes) per function in 5 minutes. */
  lambdaErrors: number;
  /** Lambda throttled invocations per function in 5 minutes. */
  lambdaThrottles: number;
  /** DynamoDB read + write throttle events per table (and its indexes) in 5 minutes. */
  dynamoThrottles: number;
}

/** p99 latency threshold of a family not named in FAMILY_LATENCY_P99_MS. */
export const DEFAULT_LATENCY_P99_MS = 3000;
/** Families whose requests do more by design: bulk import, batches of sub-requests, text generation, uploads through the API. */
export const FAMILY_LATENCY_P99_MS: Readonly<Record<string, number>> = { import: 10_000, batch: 10_000, plugins: 10_000, upload: 10_000 };

export const DEFAULT_THRESHOLDS: Readonly<Omit<AlarmThresholds, 'latencyP99Ms'>> = {
  serverErrorRatePercent: 1,
  lambdaErrors: 1,
  lambdaThrottles: 1,
  dynamoThrottles: 1,
};

export function latencyThresholdFor(family: string, overrides: Readonly<Record<string, number>> = {}): number {
  return overrides[family] ?? overrides.default ?? FAMILY_LATENCY_P99_MS[family] ?? DEFAULT_LATENCY_P99_MS;
}

export interface ObservabilityOptions {
  /** Create the alarms (default true). */
  alarms?: boolean;
  /** Create the dashboard (default true). */
  dashboard?: boolean;
  /** An existing SNS topic the alarms notify. */
  alarmTopicArn?: string;
  /** Create a topic with this e-mail subscribed (the address confirms by mail). */
  alarmEmail?: string;
  /** Thresholds; latencyP99Ms by family, `default` for every family not named. */
  thresholds?: Partial<AlarmThresholds>;
}

export interface ObservabilityProps extends ObservabilityOptions {
  api: apigateway.RestApi;
  functions: FamilyFunctions;
  tables: Tables;
  webhooks?: WebhookDelivery;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}$/;

type ContextGetter = (key: string) => unknown;

function optionalString(get: ContextGetter, key: string): string | undefined {
  const value = get(key);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`context "${key}" must be a string, got ${JSON.stringify(value)}`);
  return value.trim();
}

export function booleanContext(get: ContextGetter, key: string, fallback: boolean): boolean {
  const value = get(key);
  if (value === undefined || value === '') return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context "${key}" must be true or false, got ${JSON.stringify(value)}`);
}

export function numberContext(get: ContextGetter, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = get(key);
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`context "${key}" must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** alarmLatencyP99Ms: a number (every family) or an object of family → ms, `default` for the others. */
function latencyContext(get: ContextGetter, families: readonly string[]): Record<string, number> | undefined {
  let value = get('alarmLatencyP99Ms');
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string') value = value.trim().startsWith('{') ? JSON.parse(value) : Number(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) throw new Error(`context "alarmLatencyP99Ms" must be a positive number of milliseconds, got ${value}`);
    return { default: value };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('context "alarmLatencyP99Ms" must be a number or an object of family → milliseconds');
  const out: Record<string, number> = {};
  for (const [family, ms] of Object.entries(value)) {
    if (family !== 'default' && !families.includes(family)) throw new Error(`context "alarmLatencyP99Ms": '${family}' is not a family of shared/routes.ts (or 'default')`);
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) throw new Error(`context "alarmLatencyP99Ms": '${family}' must be a positive number of milliseconds`);
    out[family] = ms;
  }
  return out;
}

/** The options from CDK context (bin/app.ts); throws on a value that cannot be meant. */
export function observabilityOptionsFromContext(get: ContextGetter, families: readonly string[]): ObservabilityOptions {
  const thresholds: Partial<AlarmThresholds> = {};
  const rate = numberContext(get, 'alarm5xxRatePercent', 0.01, 100);
  if (rate !== undefined) thresholds.serverErrorRatePercent = rate;
  const latency = latencyContext(get, families);
  if (latency) thresholds.latencyP99Ms = latency;
  const errors = numberContext(get, 'alarmLambdaErrors', 1);
  if (errors !== undefined) thresholds.lambdaErrors = errors;
  const throttles = numberContext(get, 'alarmLambdaThrottles', 1);
  if (throttles !== undefined) thresholds.lambdaThrottles = throttles;
  const dynamo = numberContext(get, 'alarmDynamoThrottles', 1);
  if (dynamo !== undefined) thresholds.dynamoThrottles = dynamo;
  return {
    alarms: booleanContext(get, 'alarms', true),
    dashboard: booleanContext(get, 'dashboard', true),
    alarmTopicArn: optionalString(get, 'alarmTopicArn'),
    alarmEmail: optionalString(get, 'alarmEmail'),
    thresholds,
  };
}

export class Observability extends Construct {
  /** The topic the alarms notify; undefined when none was asked for. */
  readonly topic?: sns.ITopic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard?: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;
    const stage = props.api.deploymentStage;
    const thresholds: AlarmThresholds = { ...DEFAULT_THRESHOLDS, latencyP99Ms: {}, ...props.thresholds };
    const functions = [...props.functions.byFamily];
    const latencyFamilies = functions.filter(([family]) => !(STREAMING_FAMILIES as readonly string[]).includes(family));
    const webhookFunctions: [string, lambda.IFunction][] = props.webhooks
      ? [
          ['webhook-fanout', props.webhooks.fanoutFunction],
          ['webhook-delivery', props.webhooks.deliveryFunction],
        ]
      : [];
    const allFunctions = [...functions, ...webhookFunctions];
    const tables = Object.entries(props.tables).filter((entry): entry is [TableId, dynamodb.ITable] => entry[1] !== undefined);

    const requests = stage.metricCount({ period: PERIOD, statistic: 'Sum', label: 'Requests' });
    const serverErrors = stage.metricServerError({ period: PERIOD, statistic: 'Sum', label: '5xx' });
    const clientErrors = stage.metricClientError({ period: PERIOD, statistic: 'Sum', label: '4xx' });
    const serverErrorRate = new cloudwatch.MathExpression({
      expression: `IF(requests >= ${MIN_REQUESTS}, 100 * errors / requests, 0)`,
      usingMetrics: { requests, errors: serverErrors },
      period: PERIOD,
      label: '5xx rate (%)',
    });
    const tableThrottles = (tableId: TableId, table: dynamodb.ITable): cloudwatch.MathExpression => {
      const indexes = tableDefinitions.find((t) => t.id === tableId)?.globalIndexes ?? [];
      const metrics: Record<string, cloudwatch.IMetric> = {};
      for (const [i, index] of [undefined, ...indexes.map((x) => x.name)].entries()) {
        const dimensionsMap = { TableName: table.tableName, ...(index ? { GlobalSecondaryIndexName: index } : {}) };
        metrics[`${tableId}_r${i}`] = table.metric('ReadThrottleEvents', { period: PERIOD, statistic: 'Sum', dimensionsMap });
        metrics[`${tableId}_w${i}`] = table.metric('WriteThrottleEvents', { period: PERIOD, statistic: 'Sum', dimensionsMap });
      }
      return new cloudwatch.MathExpression({
        expression: Object.keys(metrics).join(' + '),
        usingMetrics: metrics,
        period: PERIOD,
        label: tableId,
      });
    };

    if (props.alarms ?? true) {
      if (props.alarmTopicArn && props.alarmEmail) throw new Error('context: set alarmTopicArn or alarmEmail, not both');
      if (props.alarmTopicArn) {
        if (!Token.isUnresolved(props.alarmTopicArn) && !TOPIC_ARN.test(props.alarmTopicArn)) {
          throw new Error(`context alarmTopicArn: '${props.alarmTopicArn}' is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)`);
        }
        this.topic = sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn);
      } else if (props.alarmEmail) {
        if (!EMAIL.test(props.alarmEmail)) throw new Error(`context alarmEmail: '${props.alarmEmail}' is not an e-mail address`);
        const topic = new sns.Topic(this, 'AlarmTopic', { displayName: 'Entity Record API alarms', enforceSSL: true });
        topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
        this.topic = topic;
      }

      const add = (alarm: cloudwatch.Alarm): void => {
        if (this.topic) {
          alarm.addAlarmAction(new actions.SnsAction(this.topic));
          alarm.addOkAction(new actions.SnsAction(this.topic));
        }
        this.alarms.push(alarm);
      };
      const common = { treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING };

      add(
        new cloudwatch.Alarm(this, 'ServerErrorRate', {
          ...common,
          alarmName: `${stackName}-api-5xx-rate`,
          alarmDescription: `More than ${thresholds.serverErrorRatePercent}% of API requests answered 5xx (periods with at least ${MIN_REQUESTS} requests)`,
          metric: serverErrorRate,
          threshold: thresholds.serverErrorRatePercent,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
        }),
      );
      for (const [family, fn] of latencyFamilies) {
        const ms = latencyThresholdFor(family, thresholds.latencyP99Ms);
        add(
          new cloudwatch.Alarm(this, `${pascal(family)}LatencyP99`, {
            ...common,
            alarmName: `${stackName}-${family}-latency-p99`,
            alarmDescription: `p99 duration of the ${family} function above ${ms} ms`,
            metric: fn.metricDuration({ period: PERIOD, statistic: 'p99' }),
            threshold: ms,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluationPeriods: 3,
            datapointsToAlarm: 2,
          }),
        );
      }
      for (const [name, fn] of allFunctions) {
        add(
          new cloudwatch.Alarm(this, `${pascal(name)}Errors`, {
            ...common,
            alarmName: `${stackName}-${name}-errors`,
            alarmDescription: `The ${name} function failed (uncaught error, timeout or crash) ${thresholds.lambdaErrors} or more times in 5 minutes`,
            metric: fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
            threshold: thresholds.lambdaErrors,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
          }),
        );
        add(
          new cloudwatch.Alarm(this, `${pascal(name)}Throttles`, {
            ...common,
            alarmName: `${stackName}-${name}-throttles`,
            alarmDescription: `Invocations of the ${name} function throttled ${thresholds.lambdaThrottles} or more times in 5 minutes (reserved or account concurrency reached)`,
            metric: fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
            threshold: thresholds.lambdaThrottles,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
          }),
        );
      }
      for (const [tableId, table] of tables) {
        add(
          new cloudwatch.Alarm(this, `${pascal(tableId)}TableThrottles`, {
            ...common,
            alarmName: `${stackName}-${tableId}-table-throttles`,
            alarmDescription: `DynamoDB throttled at least ${thresholds.dynamoThrottles} reads or writes of the ${tableId} table or its indexes in 5 minutes`,
            metric: tableThrottles(tableId, table),
            threshold: thresholds.dynamoThrottles,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
          }),
        );
      }
      if (props.webhooks) {
        add(props.webhooks.deadLetterAlarm);
        add(props.webhooks.fanoutFailureAlarm);
        if (props.webhooks.writeShardsAlarm) add(props.webhooks.writeShardsAlarm);
      }
    }

    if (props.dashboard ?? true) {
      const graph = (title: string, left: cloudwatch.IMetric[], extra: Partial<cloudwatch.GraphWidgetProps> = {}) =>
        new cloudwatch.GraphWidget({ title, left, width: 12, height: 6, ...extra });
      const byFunction = (list: [string, lambda.IFunction][], metric: (fn: lambda.IFunction) => cloudwatch.Metric) =>
        list.map(([name, fn]) => metric(fn).with({ label: name }));
      const dashboard = (this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
        // Dashboards are global to the account (alarms are per region): the region in the name
        // lets the same stack run in two regions of one account.
        dashboardName: `${stackName}-${Stack.of(this).region}`,
        defaultInterval: Duration.hours(3),
      }));
      dashboard.addWidgets(
        graph('API requests', [requests]),
        graph('API 4xx and 5xx', [clientErrors, serverErrors], { right: [serverErrorRate] }),
        graph('API latency (gateway)', [
          stage.metricLatency({ period: PERIOD, statistic: 'p50', label: 'p50' }),
          stage.metricLatency({ period: PERIOD, statistic: 'p99', label: 'p99' }),
          stage.metricIntegrationLatency({ period: PERIOD, statistic: 'p99', label: 'integration p99' }),
        ]),
        graph('Latency p50 by family (function duration, ms)', byFunction(latencyFamilies, (fn) => fn.metricDuration({ period: PERIOD, statistic: 'p50' }))),
        graph('Latency p99 by family (function duration, ms)', byFunction(latencyFamilies, (fn) => fn.metricDuration({ period: PERIOD, statistic: 'p99' }))),
        graph('Lambda errors', byFunction(allFunctions, (fn) => fn.metricErrors({ period: PERIOD, statistic: 'Sum' }))),
        graph('Lambda throttles', byFunction(allFunctions, (fn) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }))),
        graph(
          'Lambda concurrency (max)',
          byFunction(allFunctions, (fn) => fn.metric('ConcurrentExecutions', { period: PERIOD, statistic: 'Maximum' })),
        ),
        graph(
          'DynamoDB consumed read capacity',
          tables.map(([tableId, table]) => table.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum', label: tableId })),
        ),
        graph(
          'DynamoDB consumed write capacity',
          tables.map(([tableId, table]) => table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum', label: tableId })),
        ),
        graph(
          'DynamoDB throttle events (reads + writes)',
          tables.map(([tableId, table]) => tableThrottles(tableId, table)),
        ),
      );
      if (props.webhooks) {
        const { queue, deadLetterQueue } = props.webhooks;
        dashboard.addWidgets(
          graph('Webhook delivery queue', [
            queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'waiting' }),
            queue.metricApproximateNumberOfMessagesNotVisible({ period: PERIOD, statistic: 'Maximum', label: 'in flight or backing off' }),
          ], { right: [queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum', label: 'oldest (s)' })] }),
          graph('Webhook dead-letter queue and fan-out failures', [
            deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'dead letters' }),
            props.webhooks.fanoutFailureQueue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'fan-out failures' }),
          ]),
        );
      }
      if (this.alarms.length) {
        dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: Math.min(12, 2 + Math.ceil(this.alarms.length / 4)) }));
      }
    }
  }
}
