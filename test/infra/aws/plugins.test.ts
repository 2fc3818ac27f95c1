/**
 * Plugins on AWS: the functions that run plugin handlers (plugins, batch) may invoke exactly the
 * two configured Bedrock models and nothing else, every function knows the declaration files,
 * and the route table that every bundle holds carries plugin declarations but no handler code.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, REQUIRE_SHIM, handlerEntry } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
const INLINE_CODE = lambda.Code.fromInline('export const handler = async () => ({ statusCode: 200 });');

function synth(props: EntityRecordApiStackProps = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new EntityRecordApiStack(app, 'Test', { code: INLINE_CODE, ...props });
  return { stack, template: Template.fromStack(stack) };
}

/** A CloudFormation ARN value (Fn::Join of strings and pseudo parameters) as text. */
function arnText(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join) return join[1].map((part) => (typeof part === 'string' ? part : `\${${(part as { Ref: string }).Ref}}`)).join(join[0]);
  return JSON.stringify(value);
}

/** Role logical id → the resources its policies allow bedrock:InvokeModel on. */
function bedrockGrants(template: Template): Map<string, string[]> {
  const grants = new Map<string, string[]>();
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
    for (const statement of policy.Properties.PolicyDocument.Statement) {
      const actions = [statement.Action].flat() as string[];
      if (!actions.some((a) => a.startsWith('bedrock:'))) continue;
      expect(actions).toEqual(['bedrock:InvokeModel']);
      expect(statement.Effect).toBe('Allow');
      for (const role of policy.Properties.Roles) grants.set(role.Ref, [statement.Resource].flat().map(arnText).sort());
    }
  }
  return grants;
}

function roleOf(stack: EntityRecordApiStack, family: string): string {
  return stack.getLogicalId(stack.functions.get(family).role!.node.defaultChild as never);
}

describe('plugins on AWS', () => {
  it('lets only the plugins and batch functions invoke the two default models, by ARN', () => {
    const { stack, template } = synth();

    const grants = bedrockGrants(template);

    const expected = [
      'arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/amazon.nova-micro-v1:0',
      'arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/amazon.nova-pro-v1:0',
    ];
    expect([...grants.keys()].sort()).toEqual([roleOf(stack, 'batch'), roleOf(stack, 'plugins')].sort());
    expect(grants.get(roleOf(stack, 'plugins'))).toEqual(expected);
    expect(grants.get(roleOf(stack, 'batch'))).toEqual(expected);
  }, 120_000);

  it('takes the model ids from context, inference profiles included', () => {
    const { stack, template } = synth({ aiModelIds: { fast: 'amazon.titan-text-lite-v1', quality: 'us.anthropic.claude-3-5-sonnet-20241022-v2:0' } });

    expect(bedrockGrants(template).get(roleOf(stack, 'plugins'))).toEqual([
      'arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/amazon.titan-text-lite-v1',
      'arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/us.anthropic.claude-3-5-sonnet-20241022-v2:0',
      'arn:${AWS::Partition}:bedrock:*::foundation-model/anthropic.claude-3-5-sonnet-20241022-v2:0',
    ].sort());
    const env = template.toJSON().Resources[stack.getLogicalId(stack.functions.get('plugins').node.defaultChild as never)].Properties.Environment.Variables;
    expect(env).toMatchObject({ AI_PROVIDER: 'bedrock', AI_MODEL_FAST: 'amazon.titan-text-lite-v1', AI_MODEL_QUALITY: 'us.anthropic.claude-3-5-sonnet-20241022-v2:0' });
  }, 120_000);

  it('tells every function the plugin declaration files; only plugin runners use Bedrock', () => {
    const { stack, template } = synth();
    const resources = template.toJSON().Resources;

    for (const [family, fn] of stack.functions.byFamily) {
      const env = resources[stack.getLogicalId(fn.node.defaultChild as never)].Properties.Environment.Variables;
      expect(env.PLUGIN_FILES, family).toBe('ai,greetings');
      if (family !== 'plugins' && family !== 'batch') expect(env.AI_PROVIDER, family).toBeUndefined();
    }
  }, 120_000);
});

describe('bundles', () => {
  async function bundle(entry: string): Promise<string> {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      mainFields: ['module', 'main'],
      banner: { js: REQUIRE_SHIM },
      logLevel: 'silent',
    });
    return result.outputFiles[0].text;
  }

  it('gives the route table the plugin declarations (data) without their handlers; the plugins bundle has both', async () => {
    const [plugins, routeTable] = await Promise.all([bundle(handlerEntry('plugins')), bundle(path.join(PROJECT_ROOT, 'shared/routes.ts'))]);

    expect(plugins).toContain('Hello, world.');
    expect(plugins).toContain('ConverseCommand');
    expect(routeTable).toContain('/api/v1/greetings/hello');
    expect(routeTable).not.toContain('Hello, world.');
    expect(routeTable).not.toContain('ConverseCommand');
  }, 120_000);
});
