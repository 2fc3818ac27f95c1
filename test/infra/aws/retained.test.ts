/**
 * Retained data found again: the tables and the deployment secret outlive the stack, and a stack
 * given their names (context existingTables, deploymentSecretArn) deploys onto them instead of
 * creating new empty ones.
 */
import { App } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';
import { existingTablesFromContext, tableEnvName } from '../../../infra/aws/tables.js';
import { tables } from '../../../shared/tables.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
const ACCOUNT = '123456789012';
const SECRET_ARN = `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:EntityRecordApiDeploymentSecret-AbCdEf`;
const STREAM_ARN = `arn:aws:dynamodb:eu-west-1:${ACCOUNT}:table/EntityRecordApi-EventsTable-OLD/stream/2026-11-01T10:00:00.000`;
const NAMES: Record<string, string> = Object.fromEntries(tables.map((t) => [t.id, `EntityRecordApi-${t.id}-OLD`]));
NAMES.events = 'EntityRecordApi-EventsTable-OLD';

function synth(props: Partial<EntityRecordApiStackProps> = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new EntityRecordApiStack(app, 'RetainedTest', { code: lambda.Code.fromInline('export const handler = async () => ({});'), ...props });
  return { stack, template: app.synth().getStackByName('RetainedTest').template as { Resources: Record<string, any>; Outputs: Record<string, any> } };
}

const contextValue = JSON.stringify(Object.fromEntries(tables.map((t) => [t.id, t.stream ? { name: NAMES[t.id], streamArn: STREAM_ARN } : NAMES[t.id]])));

describe('what survives the stack', { timeout: 180_000 }, () => {
  it('keeps every table and the deployment secret when the stack is deleted or its first deployment rolls back', () => {
    const { stack, template } = synth();
    const retained = (logicalId: string) => template.Resources[logicalId];

    for (const def of tables) {
      const table = retained(stack.getLogicalId(stack.tables[def.id]!.node.defaultChild as never));
      expect(table, def.id).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    }
    expect(retained(stack.getLogicalId(stack.deploymentSecret.node.defaultChild as never))).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    // What it takes to find them again is in the outputs.
    expect(Object.keys(template.Outputs)).toEqual(expect.arrayContaining(['DeploymentSecretArn', 'EventsTableStreamArn', ...tables.map((t) => `${t.id[0].toUpperCase()}${t.id.slice(1)}TableName`)]));
  });
});

describe('deploying onto retained tables and secret', { timeout: 180_000 }, () => {
  it('creates no table and no deployment secret, and points every function, grant and the stream mapping at the named ones', () => {
    const { stack, template } = synth({ existingTables: existingTablesFromContext(contextValue), deploymentSecretArn: SECRET_ARN });
    const resources = Object.values(template.Resources);

    expect(resources.filter((r) => r.Type === 'AWS::DynamoDB::Table')).toEqual([]);
    // The only secret left is the admin password's.
    expect(resources.filter((r) => r.Type === 'AWS::SecretsManager::Secret')).toHaveLength(1);
    for (const family of stack.functions.byFamily.keys()) {
      const env = template.Resources[stack.getLogicalId(stack.functions.get(family).node.defaultChild as never)].Properties.Environment.Variables;
      for (const def of tables) expect(env[tableEnvName(def.id)], `${family} ${def.id}`).toBe(NAMES[def.id]);
      expect(env.DEPLOYMENT_SECRET_ARN).toBe(SECRET_ARN);
    }
    const mapping = resources.find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.StartingPosition);
    expect(mapping.Properties.EventSourceArn).toBe(STREAM_ARN);
    const policies = JSON.stringify(resources.filter((r) => r.Type === 'AWS::IAM::Policy'));
    expect(policies).toContain(`:table/${NAMES.identity}`);
    expect(policies).toContain(`:table/${NAMES.identity}/index/*`);
    expect(policies).toContain(SECRET_ARN);
    expect(template.Outputs.RecordsTableName.Value).toBe(NAMES.records);
    expect(template.Outputs.DeploymentSecretArn.Value).toBe(SECRET_ARN);
  });

  it('reads context existingTables as JSON text or an object, a name or {name, streamArn}', () => {
    expect(existingTablesFromContext(undefined)).toBeUndefined();
    expect(existingTablesFromContext({ records: 'old-records' })).toEqual({ records: { tableName: 'old-records' } });
    expect(existingTablesFromContext(JSON.stringify({ events: { name: NAMES.events, streamArn: STREAM_ARN } }))).toEqual({
      events: { tableName: NAMES.events, tableStreamArn: STREAM_ARN },
    });
  });

  it.each([
    [{ nope: 'x-table' }, /'nope' is not a table of shared\/tables.ts/],
    [{ records: '' }, /'records' needs a DynamoDB table name/],
    [{ events: NAMES.events }, /'events' has a stream: give \{"name"/],
    [{ events: { name: 'another-table', streamArn: STREAM_ARN } }, /belongs to table EntityRecordApi-EventsTable-OLD, not another-table/],
    [[1, 2], /must be an object/],
  ])('refuses %j with a clear error', (value, message) => {
    expect(() => existingTablesFromContext(value)).toThrow(message);
  });

  it('refuses a deployment secret given by a partial ARN (its complete ARN is the stack output)', () => {
    expect(() => synth({ deploymentSecretArn: `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:nosuffix` })).toThrow(/complete ARN/);
  });
});
