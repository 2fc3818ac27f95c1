/**
 * The deploy-time migration job in the CDK stack (infra/aws/migration.ts), synthesized offline with
 * bundling skipped: the Custom::EntityMigrations resource and its provider, its place after the
 * API's functions, the job function's configuration and its least privilege.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { definitionsHash, MIGRATION_RESOURCE_TYPE } from '../../../infra/aws/migration.js';
import { EntityRecordApiStack } from '../../../infra/aws/stack.js';
import { tableEnvName } from '../../../infra/aws/tables.js';
import { entityFileNames } from '../../../shared/registry/index.js';

type Resource = { Type: string; Properties?: any; DependsOn?: string[] };
type Resources = Record<string, Resource>;

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
const INLINE_CODE = lambda.Code.fromInline('export const handler = async () => ({ statusCode: 200 });');

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

describe('the deploy-time migration job', { timeout: 180_000 }, () => {
  let stack: EntityRecordApiStack;
  let resources: Resources;
  let functionId: string;
  let roleId: string;
  let resource: Resource;

  beforeAll(() => {
    const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
    stack = new EntityRecordApiStack(app, 'Test', { families: ['health', 'entities'], code: INLINE_CODE });
    resources = Template.fromStack(stack).toJSON().Resources as Resources;
    const job = stack.node.findChild('Migrations') as unknown as { function: lambda.Function };
    functionId = stack.getLogicalId(job.function.node.defaultChild as never);
    roleId = stack.getLogicalId(job.function.role!.node.defaultChild as never);
    const found = Object.values(resources).filter((r) => r.Type === MIGRATION_RESOURCE_TYPE);
    expect(found).toHaveLength(1);
    resource = found[0];
  }, 180_000);

  it('carries a hash of the entity definitions, so a deploy that changes one runs the migration', () => {
    expect(resource.Properties).toEqual({ ServiceToken: expect.anything(), DefinitionsHash: definitionsHash(), EntityFiles: entityFileNames().join(',') });
    expect(definitionsHash()).toMatch(/^[0-9a-f]{16}$/);
  });

  it('runs after the API functions are updated, through a provider whose onEvent is the job function', () => {
    const families = [...stack.functions.byFamily.values()].map((fn) => stack.getLogicalId(fn.node.defaultChild as never));
    expect(resource.DependsOn).toEqual(expect.arrayContaining(families));
    const providerId = resource.Properties.ServiceToken['Fn::GetAtt'][0];
    expect(resources[providerId].Properties.Environment.Variables.USER_ON_EVENT_FUNCTION_ARN).toEqual({ 'Fn::GetAtt': [functionId, 'Arn'] });
  });

  it('gives the job 15 minutes per invocation, the records table, the entity files and a settle time', () => {
    const fn = resources[functionId].Properties;
    expect(fn).toMatchObject({ Runtime: 'nodejs24.x', Timeout: 900 });
    const env = fn.Environment.Variables;
    expect(env[tableEnvName('records')]).toBeDefined();
    expect(env.ENTITY_FILES).toBe(entityFileNames().join(','));
    expect(env.MIGRATION_SETTLE_SECONDS).toBe('30');
    for (const other of ['identity', 'events', 'limits'] as const) expect(env[tableEnvName(other)], other).toBeUndefined();
  });

  it('lets the job invoke itself and use the records table, and nothing else of the data', () => {
    const statements = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((role: { Ref?: string }) => role.Ref === roleId))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
    const invoke = statements.filter((s) => asList(s.Action).includes('lambda:InvokeFunction'));
    expect(invoke).toEqual([expect.objectContaining({ Resource: { 'Fn::GetAtt': [functionId, 'Arn'] } })]);
    const recordsId = stack.getLogicalId(stack.tables.records!.node.defaultChild as never);
    const dynamo = statements.filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.length).toBeGreaterThan(0);
    for (const s of dynamo) expect(JSON.stringify(s.Resource)).toContain(recordsId);
  });
});
