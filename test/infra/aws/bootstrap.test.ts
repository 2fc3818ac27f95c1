/**
 * The bootstrap admin in the CDK stack (infra/aws/bootstrap.ts), synthesized offline with bundling
 * skipped: the password secret, the Custom::BootstrapAdmin resource and its provider, the least
 * privilege of the bootstrap function, the outputs, and the context it is configured by.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_RESOURCE_TYPE } from '../../../infra/aws/bootstrap.js';
import { handlerEntry, PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';
import { tableEnvName } from '../../../infra/aws/tables.js';

type Resource = { Type: string; Properties?: any; DependsOn?: string[] };
type Resources = Record<string, Resource>;

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

const INLINE_CODE = lambda.Code.fromInline('export const handler = async () => ({ statusCode: 200 });');

const EXISTING_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:entity-api/admin-AbC123';
/** The admin password secret is the one with a 32-character generated password. */
const ADMIN_PASSWORD_SECRET = { GenerateSecretString: Match.objectLike({ PasswordLength: 32 }) };

function synth(props: EntityRecordApiStackProps = {}): { stack: EntityRecordApiStack; template: Template; resources: Resources } {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new EntityRecordApiStack(app, 'Test', { families: ['health'], code: INLINE_CODE, ...props });
  const template = Template.fromStack(stack);
  return { stack, template, resources: template.toJSON().Resources as Resources };
}

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

function logicalIdIn(stack: EntityRecordApiStack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as Parameters<typeof stack.getLogicalId>[0]);
}

/** Every statement of the IAM policies attached to the role. */
function statementsOf(resources: Resources, roleId: string): { Action: string | string[]; Resource: unknown }[] {
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((role: { Ref?: string }) => role.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
}

/** table id → DynamoDB actions the role may perform on it; resource-less statements fail the test. */
function dynamoAccess(stack: EntityRecordApiStack, resources: Resources, roleId: string): Map<string, Set<string>> {
  const tableIds = new Map(Object.entries(stack.tables).map(([id, table]) => [logicalIdIn(stack, table!), id]));
  const access = new Map<string, Set<string>>();
  for (const statement of statementsOf(resources, roleId)) {
    const actions = asList(statement.Action).filter((a) => a.startsWith('dynamodb:'));
    if (actions.length === 0) continue;
    for (const target of asList(statement.Resource)) {
      expect(target, 'DynamoDB access to every resource').not.toBe('*');
      const referenced = [...tableIds].filter(([id]) => JSON.stringify(target).includes(`"${id}"`)).map(([, tableId]) => tableId);
      expect(referenced, 'a DynamoDB statement names one table').toHaveLength(1);
      const set = access.get(referenced[0]) ?? new Set<string>();
      for (const action of actions) set.add(action);
      access.set(referenced[0], set);
    }
  }
  return access;
}

function customResource(resources: Resources): Resource {
  const found = Object.values(resources).filter((r) => r.Type === BOOTSTRAP_RESOURCE_TYPE);
  expect(found).toHaveLength(1);
  return found[0];
}

describe('bootstrap admin with the defaults (generated secret, admin@localhost)', { timeout: 180_000 }, () => {
  let stack: EntityRecordApiStack;
  let template: Template;
  let resources: Resources;
  let functionId: string;
  let roleId: string;
  let secretId: string;

  beforeAll(() => {
    ({ stack, template, resources } = synth());
    functionId = logicalIdIn(stack, stack.bootstrapAdmin.function);
    roleId = logicalIdIn(stack, stack.bootstrapAdmin.function.role!);
    secretId = logicalIdIn(stack, stack.bootstrapAdmin.secret as never);
  }, 180_000);

  it('generates a 32-character password secret without punctuation or spaces', () => {
    template.resourcePropertiesCountIs('AWS::SecretsManager::Secret', ADMIN_PASSWORD_SECRET, 1);
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { PasswordLength: 32, ExcludePunctuation: true, IncludeSpace: false, SecretStringTemplate: Match.absent() },
    });
  });

  it('creates the Custom::BootstrapAdmin resource with the admin e-mail and the secret reference, never a password', () => {
    const { Properties } = customResource(resources);
    expect(Properties).toEqual({
      ServiceToken: expect.anything(),
      AdminEmail: 'admin@localhost',
      AdminPasswordSecretArn: { Ref: secretId },
      AdminPasswordRevision: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(JSON.stringify(resources)).not.toMatch(/resolve:secretsmanager|"SecretString"/);
  });

  it('backs the resource with a provider whose onEvent is the bootstrap function', () => {
    const { Properties } = customResource(resources);
    const providerId = Properties.ServiceToken['Fn::GetAtt'][0];
    expect(resources[providerId].Type).toBe('AWS::Lambda::Function');
    expect(resources[providerId].Properties.Environment.Variables.USER_ON_EVENT_FUNCTION_ARN).toEqual({ 'Fn::GetAtt': [functionId, 'Arn'] });
  });

  it('runs the bootstrap function like the others: nodejs24.x on arm64, the identity table name only', () => {
    const fn = resources[functionId].Properties;
    expect(fn).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler', TracingConfig: { Mode: 'Active' } });
    const env = fn.Environment.Variables;
    expect(env[tableEnvName('identity')]).toEqual({ Ref: logicalIdIn(stack, stack.tables.identity!) });
    for (const other of ['records', 'events', 'limits'] as const) expect(env[tableEnvName(other)], other).toBeUndefined();
    expect(env).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'entity-record-api' });
    expect(env.NODE_OPTIONS).toBeUndefined();
    expect(JSON.stringify(env)).not.toMatch(/PASSWORD/i);
  });

  it('lets the bootstrap function read and write the identity table and nothing else in DynamoDB', () => {
    const access = dynamoAccess(stack, resources, roleId);
    expect([...access.keys()]).toEqual(['identity']);
    for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']) expect(access.get('identity'), action).toContain(action);
    expect(access.has('records')).toBe(false);
    expect(access.has('events')).toBe(false);
  });

  it('lets the bootstrap function read the secret, only that secret and only read it', () => {
    const secretStatements = statementsOf(resources, roleId).filter((s) => asList(s.Action).some((a) => a.startsWith('secretsmanager:')));
    expect(secretStatements).toHaveLength(1);
    expect(new Set(asList(secretStatements[0].Action))).toEqual(new Set(['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret']));
    expect(secretStatements[0].Resource).toEqual({ Ref: secretId });
  });

  it('gives no other role access to the secret', () => {
    const others = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && !r.Properties.Roles.some((role: { Ref?: string }) => role.Ref === roleId))
      .flatMap((r) => r.Properties.PolicyDocument.Statement);
    expect(others.filter((s: { Action: string | string[] }) => asList(s.Action).some((a) => a.startsWith('secretsmanager:')))).toEqual([]);
    expect(JSON.stringify(others)).not.toContain(`"${secretId}"`);
  });

  it('outputs the admin e-mail and the secret ARN, saying how to read the password', () => {
    template.hasOutput('AdminEmail', { Value: 'admin@localhost' });
    template.hasOutput('AdminPasswordSecretArn', {
      Value: { Ref: secretId },
      Description: Match.stringLikeRegexp('aws secretsmanager get-secret-value --secret-id'),
    });
  });

  it('has the handler file the function is bundled from', () => {
    expect(existsSync(handlerEntry('bootstrap'))).toBe(true);
  });
});

describe('bootstrap admin configured by context', { timeout: 180_000 }, () => {
  it('uses the given e-mail, lower-case, in the resource and the output', () => {
    const { template, resources } = synth({ adminEmail: ' Ops@Example.com ' });
    expect(customResource(resources).Properties.AdminEmail).toBe('ops@example.com');
    template.hasOutput('AdminEmail', { Value: 'ops@example.com' });
  });

  it('rejects an adminEmail that is not an e-mail address at synth', () => {
    expect(() => synth({ adminEmail: 'not-an-email' })).toThrow(/adminEmail.*not an e-mail address/);
  });

  it('uses an existing secret by ARN instead of generating one, granting read on it alone', () => {
    const { stack, template, resources } = synth({ adminPasswordSecretArn: EXISTING_SECRET_ARN });
    template.resourcePropertiesCountIs('AWS::SecretsManager::Secret', ADMIN_PASSWORD_SECRET, 0);
    expect(customResource(resources).Properties.AdminPasswordSecretArn).toBe(EXISTING_SECRET_ARN);
    template.hasOutput('AdminPasswordSecretArn', { Value: EXISTING_SECRET_ARN });
    const roleId = logicalIdIn(stack, stack.bootstrapAdmin.function.role!);
    const secretStatements = statementsOf(resources, roleId).filter((s) => asList(s.Action).includes('secretsmanager:GetSecretValue'));
    expect(secretStatements.map((s) => s.Resource)).toEqual([EXISTING_SECRET_ARN]);
  });

  it('accepts a partial secret ARN (without the random suffix), granting on its versions', () => {
    const partial = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:entity-api/admin';
    const { stack, resources } = synth({ adminPasswordSecretArn: partial });
    const roleId = logicalIdIn(stack, stack.bootstrapAdmin.function.role!);
    const secretStatements = statementsOf(resources, roleId).filter((s) => asList(s.Action).includes('secretsmanager:GetSecretValue'));
    expect(JSON.stringify(secretStatements.map((s) => s.Resource))).toContain(`${partial}-??????`);
  });

  it('rejects an adminPasswordSecretArn that is not a secret ARN at synth', () => {
    expect(() => synth({ adminPasswordSecretArn: 'my-secret' })).toThrow(/adminPasswordSecretArn.*not a Secrets Manager secret ARN/);
  });

  it('changes the revision, which reruns the bootstrap, when the secret or adminPasswordVersion changes, and only then', () => {
    const revision = (props: EntityRecordApiStackProps): string => customResource(synth(props).resources).Properties.AdminPasswordRevision;

    const generated = revision({});
    expect(revision({ adminEmail: 'ops@example.com' })).toBe(generated);
    expect(revision({ adminPasswordVersion: '2' })).not.toBe(generated);
    expect(revision({ adminPasswordVersion: '2' })).toBe(revision({ adminPasswordVersion: '2' }));
    expect(revision({ adminPasswordSecretArn: EXISTING_SECRET_ARN })).not.toBe(generated);
    expect(revision({ adminPasswordSecretArn: EXISTING_SECRET_ARN.replace('AbC123', 'XyZ789') })).not.toBe(revision({ adminPasswordSecretArn: EXISTING_SECRET_ARN }));
  });
});
