/**
 * Operator options of the stack (CDK context in bin/app.ts), synthesized offline without bundling:
 * logs, throttling, concurrency, alarms and their topic, the dashboard.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { DEFAULT_THRESHOLDS, latencyThresholdFor, MIN_REQUESTS, observabilityOptionsFromContext } from '../../../infra/aws/observability.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';
import { families, STREAMING_FAMILIES } from '../../../shared/routes.js';
import { tables } from '../../../shared/tables.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
const INLINE_CODE = lambda.Code.fromInline('export const handler = async () => ({ statusCode: 200 });');

function synth(props: EntityRecordApiStackProps = {}): { stack: EntityRecordApiStack; template: Template } {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new EntityRecordApiStack(app, 'Ops', { code: INLINE_CODE, ...props });
  return { stack, template: Template.fromStack(stack) };
}

describe('operator options', { timeout: 180_000 }, () => {
  it('writes Lambda logs as JSON for every family function', () => {
    const { stack, template } = synth();
    const resources = template.toJSON().Resources as Record<string, { Properties: { LoggingConfig?: unknown } }>;

    for (const family of families) {
      const id = stack.getLogicalId(stack.functions.get(family).node.defaultChild as never);
      expect(resources[id].Properties.LoggingConfig, family).toMatchObject({ LogFormat: 'JSON' });
    }
  });

  it('keeps access logs off by default, so a deploy needs no account-wide API Gateway role', () => {
    const { template } = synth();

    template.hasResourceProperties('AWS::ApiGateway::Stage', { AccessLogSetting: Match.absent() });
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
  });

  it('writes JSON access logs with the request id, status and latency when asked', () => {
    const { template } = synth({ accessLogs: true, cloudWatchRole: true });

    const [stage] = Object.values(template.findResources('AWS::ApiGateway::Stage'));
    const format = JSON.parse(stage.Properties.AccessLogSetting.Format) as Record<string, string>;
    expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status', latencyMs: '$context.responseLatency', ip: '$context.identity.sourceIp' });
    expect(JSON.stringify(format)).not.toContain('apiKey');
    template.resourceCountIs('AWS::ApiGateway::Account', 1);
    // The caller type comes from the functions' own request line, joined by the gateway's request id.
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ REQUEST_LOG: 'on' }) } });
  });

  it('takes stage throttling and per-family reserved concurrency from the options', () => {
    const { stack, template } = synth({ throttling: { rateLimit: 50, burstLimit: 100 }, reservedConcurrency: { import: 5 } });

    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })],
    });
    const resources = template.toJSON().Resources as Record<string, { Properties: { ReservedConcurrentExecutions?: number } }>;
    for (const family of families) {
      const id = stack.getLogicalId(stack.functions.get(family).node.defaultChild as never);
      expect(resources[id].Properties.ReservedConcurrentExecutions, family).toBe(family === 'import' ? 5 : undefined);
    }
  });
});

type Resource = { Type: string; Properties: Record<string, any> };

function resourcesOf(template: Template, type: string): [string, Resource][] {
  return Object.entries(template.toJSON().Resources as Record<string, Resource>).filter(([, r]) => r.Type === type);
}

function alarmsOf(template: Template): Map<string, Resource['Properties']> {
  return new Map(resourcesOf(template, 'AWS::CloudWatch::Alarm').map(([, r]) => [String(r.Properties.AlarmName ?? r.Properties.AlarmDescription), r.Properties]));
}

/** Functions that get error and throttle alarms: every family's, and webhook fan-out and delivery. */
const ALARMED_FUNCTIONS = [...families, 'webhook-fanout', 'webhook-delivery'];

describe('alarms and dashboard', { timeout: 180_000 }, () => {
  it('by default alarms on 5xx rate, p99 per family, Lambda errors and throttles, DynamoDB throttles and dead letters, with no action', () => {
    const { stack, template } = synth();
    const alarms = alarmsOf(template);

    const rate = alarms.get('Ops-api-5xx-rate')!;
    expect(rate.Threshold).toBe(DEFAULT_THRESHOLDS.serverErrorRatePercent);
    expect(rate.Metrics.find((m: { Expression?: string }) => m.Expression).Expression).toBe(`IF(requests >= ${MIN_REQUESTS}, 100 * errors / requests, 0)`);
    expect(rate.Metrics.map((m: any) => m.MetricStat?.Metric.MetricName).filter(Boolean).sort()).toEqual(['5XXError', 'Count']);
    for (const family of families) {
      const latency = alarms.get(`Ops-${family}-latency-p99`);
      if ((STREAMING_FAMILIES as readonly string[]).includes(family)) {
        expect(latency, `${family}: a stream's duration is its connection time`).toBeUndefined();
        continue;
      }
      expect(latency, family).toMatchObject({ MetricName: 'Duration', ExtendedStatistic: 'p99', Threshold: latencyThresholdFor(family) });
      expect(latency!.Dimensions).toEqual([{ Name: 'FunctionName', Value: { Ref: stack.getLogicalId(stack.functions.get(family).node.defaultChild as never) } }]);
    }
    for (const name of ALARMED_FUNCTIONS) {
      expect(alarms.get(`Ops-${name}-errors`), name).toMatchObject({ MetricName: 'Errors', Statistic: 'Sum', Threshold: 1 });
      expect(alarms.get(`Ops-${name}-throttles`), name).toMatchObject({ MetricName: 'Throttles', Statistic: 'Sum', Threshold: 1 });
    }
    for (const table of tables) {
      const throttles = alarms.get(`Ops-${table.id}-table-throttles`)!;
      const names = throttles.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric.MetricName);
      expect(names.sort(), table.id).toEqual(Array.from({ length: 1 + table.globalIndexes.length }, () => ['ReadThrottleEvents', 'WriteThrottleEvents']).flat().sort());
    }
    const queueAlarms = [...alarms.values()].filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible').map((a) => a.Dimensions[0].Value);
    expect(queueAlarms).toEqual(
      [stack.webhooks!.deadLetterQueue, stack.webhooks!.fanoutFailureQueue].map((queue) => ({ 'Fn::GetAtt': [stack.getLogicalId(queue.node.defaultChild as never), 'QueueName'] })),
    );

    const nonStreaming = families.filter((f) => !(STREAMING_FAMILIES as readonly string[]).includes(f)).length;
    // + the webhook dead-letter and fan-out failure alarms, and the write-shards alarm.
    expect(alarms.size).toBe(1 + nonStreaming + 2 * ALARMED_FUNCTIONS.length + tables.length + 3);
    for (const alarm of alarms.values()) {
      expect(alarm.AlarmActions ?? [], alarm.AlarmName).toEqual([]);
      expect(alarm.TreatMissingData).toBe('notBreaching');
    }
    template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  it('creates a topic with the e-mail subscribed and sends every alarm to it, raised and cleared', () => {
    const { stack, template } = synth({ observability: { alarmEmail: 'ops@example.com' } });

    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    const topic = { Ref: stack.getLogicalId(stack.observability.topic!.node.defaultChild as never) };
    const alarms = alarmsOf(template);
    expect(alarms.size).toBeGreaterThan(40);
    for (const alarm of alarms.values()) {
      expect(alarm.AlarmActions, alarm.AlarmName).toEqual([topic]);
      expect(alarm.OKActions, alarm.AlarmName).toEqual([topic]);
    }
    // Publishing to the topic needs TLS.
    const [[, policy]] = resourcesOf(template, 'AWS::SNS::TopicPolicy');
    expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain('aws:SecureTransport');
  });

  it('sends the alarms to an existing topic by ARN, with the thresholds given, and leaves the dashboard out when asked', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';
    const { template } = synth({
      observability: {
        alarmTopicArn: arn,
        dashboard: false,
        thresholds: { serverErrorRatePercent: 5, latencyP99Ms: { default: 1500, import: 30_000 }, lambdaErrors: 3, dynamoThrottles: 10 },
      },
    });

    template.resourceCountIs('AWS::SNS::Topic', 0);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    const alarms = alarmsOf(template);
    for (const alarm of alarms.values()) expect(alarm.AlarmActions, alarm.AlarmName).toEqual([arn]);
    expect(alarms.get('Ops-api-5xx-rate')!.Threshold).toBe(5);
    expect(alarms.get('Ops-import-latency-p99')!.Threshold).toBe(30_000);
    expect(alarms.get('Ops-entities-latency-p99')!.Threshold).toBe(1500);
    expect(alarms.get('Ops-batch-latency-p99')!.Threshold).toBe(1500);
    expect(alarms.get('Ops-entities-errors')!.Threshold).toBe(3);
    expect(alarms.get('Ops-entities-throttles')!.Threshold).toBe(DEFAULT_THRESHOLDS.lambdaThrottles);
    expect(alarms.get('Ops-records-table-throttles')!.Threshold).toBe(10);
  });

  it('leaves the alarms out when asked (the dead-letter, fan-out failure and write-shards alarms of webhook delivery stay)', () => {
    const { template } = synth({ observability: { alarms: false } });

    const alarms = alarmsOf(template);
    expect(alarms.size).toBe(3);
    expect([...alarms.values()].map((a) => a.MetricName)).toEqual(['ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesVisible', 'WriteShardsKeyLoad']);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });

  it('draws requests, 4xx/5xx, latency by family, Lambda, DynamoDB and webhook queues on one dashboard', () => {
    const { stack, template } = synth();

    const [[, dashboard]] = resourcesOf(template, 'AWS::CloudWatch::Dashboard');
    // The body is a Fn::Join of literal JSON and references; its literal parts are enough here.
    const body = JSON.stringify(stack.resolve(dashboard.Properties.DashboardBody));
    for (const title of [
      'API requests',
      'API 4xx and 5xx',
      'Latency p50 by family',
      'Latency p99 by family',
      'Lambda errors',
      'Lambda throttles',
      'Lambda concurrency',
      'DynamoDB consumed read capacity',
      'DynamoDB consumed write capacity',
      'DynamoDB throttle events',
      'Webhook delivery queue',
      'Webhook dead-letter queue',
      'Alarms',
    ]) {
      expect(body, title).toContain(title);
    }
    for (const metric of ['4XXError', '5XXError', 'Latency', 'Duration', 'ConcurrentExecutions', 'ConsumedReadCapacityUnits', 'ConsumedWriteCapacityUnits', 'ReadThrottleEvents', 'ApproximateNumberOfMessagesVisible']) {
      expect(body, metric).toContain(metric);
    }
  });

  it('refuses both a topic ARN and an e-mail, and values that cannot be meant', () => {
    expect(() => synth({ observability: { alarmEmail: 'ops@example.com', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:x' } })).toThrow(/not both/);
    const context = (values: Record<string, unknown>) => (key: string) => values[key];

    expect(observabilityOptionsFromContext(context({}), families)).toEqual({ alarms: true, dashboard: true, alarmTopicArn: undefined, alarmEmail: undefined, thresholds: {} });
    expect(
      observabilityOptionsFromContext(
        context({ alarms: 'false', alarm5xxRatePercent: '2.5', alarmLatencyP99Ms: '{"default":2000,"import":9000}', alarmLambdaErrors: '5' }),
        families,
      ),
    ).toMatchObject({ alarms: false, thresholds: { serverErrorRatePercent: 2.5, latencyP99Ms: { default: 2000, import: 9000 }, lambdaErrors: 5 } });
    expect(observabilityOptionsFromContext(context({ alarmLatencyP99Ms: '4000' }), families).thresholds?.latencyP99Ms).toEqual({ default: 4000 });
    expect(() => observabilityOptionsFromContext(context({ alarms: 'yes' }), families)).toThrow(/"alarms" must be true or false/);
    expect(() => observabilityOptionsFromContext(context({ alarm5xxRatePercent: '0' }), families)).toThrow(/alarm5xxRatePercent/);
    expect(() => observabilityOptionsFromContext(context({ alarmLatencyP99Ms: '{"nope":1}' }), families)).toThrow(/'nope' is not a family/);
    expect(() => observabilityOptionsFromContext(context({ alarmLatencyP99Ms: '-1' }), families)).toThrow(/positive/);
    expect(() => synth({ observability: { alarmEmail: 'not-an-address' } })).toThrow(/alarmEmail/);
    expect(() => synth({ observability: { alarmTopicArn: 'ops-alarms' } })).toThrow(/alarmTopicArn/);
  });
});

describe('execution logs', { timeout: 180_000 }, () => {
  it('logs every method at the level asked, never bodies, into a group that expires', () => {
    const { stack, template } = synth({ executionLogs: 'ERROR', accessLogs: true, cloudWatchRole: true });

    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false })],
    });
    const groups = resourcesOf(template, 'AWS::Logs::LogGroup').filter(([, r]) => JSON.stringify(r.Properties.LogGroupName ?? '').includes('API-Gateway-Execution-Logs_'));
    expect(groups).toHaveLength(1);
    expect(groups[0][1].Properties.RetentionInDays).toBe(30);
    const [[stageId, stage]] = resourcesOf(template, 'AWS::ApiGateway::Stage');
    expect(stageId).toBe(stack.getLogicalId(stack.api.deploymentStage.node.defaultChild as never));
    expect((template.toJSON().Resources[stageId] as { DependsOn?: string[] }).DependsOn).toContain(groups[0][0]);
    expect(stage.Properties.MethodSettings).toHaveLength(1);
  });
});
