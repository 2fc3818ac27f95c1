/**
 * The webhook delivery construct, synthesized offline: encrypted queue and dead-letter queue with
 * a redrive policy, the visibility timeout at least 6 times the delivery function's timeout, event
 * source mappings with batch item failures (and the stream's INSERT filter), the dead-letter alarm,
 * and least-privilege grants.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack } from '../../../infra/aws/stack.js';
import { DELIVERY_TIMEOUT, FANOUT_MAX_RECORD_AGE, FANOUT_RETRY_ATTEMPTS, FANOUT_TIMEOUT, STREAM_RETENTION } from '../../../infra/aws/webhooks.js';
import { entityFileNames } from '../../../shared/registry/index.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

let stack: EntityRecordApiStack;
let template: Template;

function policyStatementsOf(fn: lambda.Function): any[] {
  const roleId = stack.getLogicalId(fn.role!.node.defaultChild as never);
  const resources = template.toJSON().Resources as Record<string, any>;
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: { Ref?: string }) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
}

function actionsOf(fn: lambda.Function): string[] {
  return policyStatementsOf(fn).flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
}

beforeAll(() => {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  stack = new EntityRecordApiStack(app, 'WebhooksTest', { code: lambda.Code.fromInline('export const handler = async () => ({});') });
  template = Template.fromStack(stack);
}, 180_000);

describe('WebhookDelivery construct', () => {
  it('encrypts both queues and redrives to the dead-letter queue after every scheduled attempt', () => {
    const webhooks = stack.webhooks!;
    expect(webhooks).toBeDefined();
    const resources = template.toJSON().Resources as Record<string, any>;
    const queue = resources[stack.getLogicalId(webhooks.queue.node.defaultChild as never)];
    const dlq = resources[stack.getLogicalId(webhooks.deadLetterQueue.node.defaultChild as never)];
    expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    expect(dlq.Properties.SqsManagedSseEnabled).toBe(true);
    expect(queue.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [stack.getLogicalId(webhooks.deadLetterQueue.node.defaultChild as never), 'Arn'] },
      maxReceiveCount: 7,
    });
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * DELIVERY_TIMEOUT.toSeconds());
    const deliverFn = resources[stack.getLogicalId(webhooks.deliveryFunction.node.defaultChild as never)];
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * deliverFn.Properties.Timeout);
  });

  it('maps the queue to the delivery function and the Events stream (inserts only) to the fan-out, both with batch item failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: stack.getLogicalId(stack.webhooks!.deliveryFunction.node.defaultChild as never) },
      EventSourceArn: { 'Fn::GetAtt': [stack.getLogicalId(stack.webhooks!.queue.node.defaultChild as never), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: stack.getLogicalId(stack.webhooks!.fanoutFunction.node.defaultChild as never) },
      EventSourceArn: { 'Fn::GetAtt': [stack.getLogicalId(stack.tables.events!.node.defaultChild as never), 'StreamArn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] },
      StartingPosition: 'TRIM_HORIZON',
    });
  });

  it('alarms on the dead-letter queue depth and exposes the alarm', () => {
    const alarm = stack.webhooks!.deadLetterAlarm;
    expect(alarm).toBeDefined();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [stack.getLogicalId(stack.webhooks!.deadLetterQueue.node.defaultChild as never), 'QueueName'] } }],
    });
  });

  it('grants least privilege: fan-out sends, delivery changes visibility and reads the secret; only the fan-out (the write-shards controller) touches records', () => {
    const fanout = actionsOf(stack.webhooks!.fanoutFunction);
    const deliver = actionsOf(stack.webhooks!.deliveryFunction);
    expect(fanout).toEqual(expect.arrayContaining(['sqs:SendMessage', 'dynamodb:GetRecords']));
    expect(fanout).not.toContain('sqs:ChangeMessageVisibility');
    expect(fanout).not.toContain('secretsmanager:GetSecretValue');
    expect(deliver).toEqual(expect.arrayContaining(['sqs:ChangeMessageVisibility', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'secretsmanager:GetSecretValue']));
    expect(deliver).not.toContain('sqs:SendMessage');
    const recordsId = stack.getLogicalId(stack.tables.records!.node.defaultChild as never);
    expect(JSON.stringify(policyStatementsOf(stack.webhooks!.deliveryFunction))).not.toContain(`"${recordsId}"`);
    for (const fn of [stack.webhooks!.fanoutFunction, stack.webhooks!.deliveryFunction]) {
      for (const s of policyStatementsOf(fn)) {
        const actions: string[] = Array.isArray(s.Action) ? s.Action : [s.Action];
        // dynamodb:ListStreams has no resource-level permission (the stream event source grants it on *).
        if (actions.some((a) => (a.startsWith('dynamodb:') && a !== 'dynamodb:ListStreams') || a.startsWith('sqs:'))) expect(s.Resource).not.toBe('*');
      }
    }
  });

  it('gives both functions the queue and the tables they read', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ WEBHOOK_QUEUE_URL: Match.anyValue(), TABLE_WEBHOOKS: Match.anyValue(), TABLE_EVENTS: Match.anyValue() }) },
      Timeout: DELIVERY_TIMEOUT.toSeconds(),
    });
  });

  it('tells the fan-out the entity definition files, as the families that read the registry are told', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ ENTITY_FILES: entityFileNames().join(','), TABLE_EVENTS: Match.anyValue() }) },
      Timeout: FANOUT_TIMEOUT.toSeconds(),
    });
  });

  it('sends a stream batch the fan-out gave up on to an encrypted failure queue, after bounded retries and a maximum record age', () => {
    const webhooks = stack.webhooks!;
    const failureQueueId = stack.getLogicalId(webhooks.fanoutFailureQueue.node.defaultChild as never);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: stack.getLogicalId(webhooks.fanoutFunction.node.defaultChild as never) },
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [failureQueueId, 'Arn'] } } },
      MaximumRetryAttempts: FANOUT_RETRY_ATTEMPTS,
      MaximumRecordAgeInSeconds: FANOUT_MAX_RECORD_AGE.toSeconds(),
      BisectBatchOnFunctionError: true,
    });
    // A record reaches the failure queue with most of the stream's retention left to redrive it.
    expect(FANOUT_MAX_RECORD_AGE.toSeconds()).toBeLessThanOrEqual(STREAM_RETENTION.toSeconds() / 4);
    expect(FANOUT_RETRY_ATTEMPTS).toBeGreaterThan(0);
    const queue = (template.toJSON().Resources as Record<string, any>)[failureQueueId];
    expect(queue.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    // TLS only, as the delivery queues.
    const policies = Object.values(template.toJSON().Resources as Record<string, any>).filter(
      (r) => r.Type === 'AWS::SQS::QueuePolicy' && JSON.stringify(r.Properties.Queues).includes(failureQueueId),
    );
    expect(JSON.stringify(policies)).toContain('aws:SecureTransport');
    // The mapping (the fan-out's role) may send to it.
    expect(policyStatementsOf(webhooks.fanoutFunction).some((st) => [st.Action].flat().includes('sqs:SendMessage') && JSON.stringify(st.Resource).includes(failureQueueId))).toBe(true);
  });

  it('alarms at the first message in the failure queue, and outputs every queue the redrive reads', () => {
    const failureQueueId = stack.getLogicalId(stack.webhooks!.fanoutFailureQueue.node.defaultChild as never);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmDescription: Match.stringLikeRegexp('events:redrive'),
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [failureQueueId, 'QueueName'] } }],
    });
    template.hasOutput('FanoutFailureQueueUrl', { Value: { Ref: failureQueueId } });
    template.hasOutput('WebhookQueueUrl', {});
    template.hasOutput('WebhookDeadLetterQueueUrl', {});
    template.hasOutput('EventsTableStreamArn', {});
  });

  it('runs the write-shards controller in the fan-out: the tables it reads and writes, the migration job it invokes, a schedule while no events come, and an alarm on the busiest key load', () => {
    const fanout = stack.webhooks!.fanoutFunction;
    const fanoutId = stack.getLogicalId(fanout.node.defaultChild as never);
    const resources = template.toJSON().Resources as Record<string, any>;
    const variables = resources[fanoutId].Properties.Environment.Variables;
    expect(Object.keys(variables)).toEqual(expect.arrayContaining(['TABLE_RECORDS', 'TABLE_LIMITS', 'MIGRATION_FUNCTION_NAME']));
    const statements = policyStatementsOf(fanout);
    const job = variables.MIGRATION_FUNCTION_NAME.Ref as string;
    expect(statements.some((st) => [st.Action].flat().includes('lambda:InvokeFunction') && JSON.stringify(st.Resource).includes(job))).toBe(true);
    for (const table of [stack.tables.records!, stack.tables.limits!]) {
      const id = stack.getLogicalId(table.node.defaultChild as never);
      expect(statements.some((st) => [st.Action].flat().includes('dynamodb:UpdateItem') && JSON.stringify(st.Resource).includes(id))).toBe(true);
    }
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: Match.arrayWith([Match.objectLike({ Arn: { 'Fn::GetAtt': [fanoutId, 'Arn'] }, Input: JSON.stringify({ source: 'write-shards-schedule' }) })]),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'EntityRecordApi',
      MetricName: 'WriteShardsKeyLoad',
      Statistic: 'Maximum',
      Threshold: 80,
      EvaluationPeriods: 5,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });
});
