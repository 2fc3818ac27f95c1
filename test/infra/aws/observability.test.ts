/** Operator options of the stack (CDK context in bin/app.ts), synthesized offline without bundling. */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';
import { families } from '../../../shared/routes.js';

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
