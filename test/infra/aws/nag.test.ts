/**
 * cdk-nag's AwsSolutions checks on the whole stack with every guard rail on (access and execution
 * logs, WAF, alarms to a topic): any finding not acknowledged in infra/aws/nag.ts fails, error or
 * warning. One synthesis; the checks run as a CDK validation plugin during it.
 */
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { existingTablesFromContext } from '../../../infra/aws/tables.js';
import { EntityRecordApiStack } from '../../../infra/aws/stack.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

interface Violation {
  ruleName: string;
  severity: string;
  description: string;
  violatingConstructs: { constructPath: string }[];
}

/** Synthesizes `build`'s app with AwsSolutionsChecks; the violations cdk-nag reported (none: synthesis succeeded). */
function nag(outdir: string, build: (app: App) => void): { violations: Violation[]; assembly?: ReturnType<App['synth']> } {
  const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  build(app);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  try {
    return { violations: [], assembly: app.synth() };
  } catch (error) {
    const report = path.join(outdir, 'validation-report.json');
    if (!existsSync(report)) throw error;
    const { pluginReports } = JSON.parse(readFileSync(report, 'utf8')) as { pluginReports: { violations: Violation[] }[] };
    return { violations: pluginReports.flatMap((r) => r.violations) };
  }
}

function summary(violations: Violation[]): string[] {
  return violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.severity} ${v.ruleName} at ${c.constructPath}: ${v.description}`));
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'nag-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cdk-nag AwsSolutions', { timeout: 240_000 }, () => {
  it('finds nothing unacknowledged in the stack with every guard rail on', () => {
    let stack!: EntityRecordApiStack;
    const { violations, assembly } = nag(path.join(dir, 'stack'), (app) => {
      stack = new EntityRecordApiStack(app, 'Nag', {
        code: lambda.Code.fromInline('export const handler = async () => ({});'),
        accessLogs: true,
        executionLogs: 'ERROR',
        cloudWatchRole: true,
        waf: { enabled: true },
        observability: { alarmEmail: 'ops@example.com' },
        identityProviders: { cognito: {} },
      });
    });

    expect(summary(violations)).toEqual([]);
    // The acknowledgements of IAM5[Resource::*] hold only while X-Ray (and, for the stream's
    // consumer, ListStreams) is all that is granted on *.
    const template = JSON.parse(readFileSync(path.join(assembly!.directory, `${stack.artifactId}.template.json`), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: any }>;
    };
    const fanoutRole = stack.getLogicalId(stack.webhooks!.fanoutFunction.role!.node.defaultChild as never);
    const onEverything = new Map<string, Set<string>>();
    for (const policy of Object.values(template.Resources).filter((r) => r.Type === 'AWS::IAM::Policy')) {
      const role = policy.Properties.Roles.map((r: { Ref: string }) => r.Ref).join(',');
      for (const statement of policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]) {
        if (!(statement.Resource === '*' || (Array.isArray(statement.Resource) && statement.Resource.includes('*')))) continue;
        const actions = onEverything.get(role) ?? new Set<string>();
        for (const action of Array.isArray(statement.Action) ? statement.Action : [statement.Action]) actions.add(action);
        onEverything.set(role, actions);
      }
    }
    expect(onEverything.size).toBeGreaterThan(10);
    for (const [role, actions] of onEverything) {
      const allowed = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments', ...(role === fanoutRole ? ['dynamodb:ListStreams'] : [])];
      expect([...actions].sort(), role).toEqual(allowed.sort());
    }
  });

  it('finds nothing unacknowledged when deploying onto retained tables and secret', () => {
    const streamArn = 'arn:aws:dynamodb:eu-west-1:123456789012:table/old-events/stream/2026-11-01T10:00:00.000';
    const { violations } = nag(path.join(dir, 'retained'), (app) => {
      new EntityRecordApiStack(app, 'NagRetained', {
        code: lambda.Code.fromInline('export const handler = async () => ({});'),
        accessLogs: true,
        executionLogs: 'ERROR',
        waf: { enabled: true },
        existingTables: existingTablesFromContext({ records: 'old-records', events: { name: 'old-events', streamArn }, identity: 'old-identity', limits: 'old-limits', uploads: 'old-uploads', webhooks: 'old-webhooks' }),
        deploymentSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:old-deployment-AbCdEf',
      });
    });

    expect(summary(violations)).toEqual([]);
  });

  it('is live: an unacknowledged finding fails synthesis', () => {
    const { violations } = nag(path.join(dir, 'bucket'), (app) => {
      new s3.Bucket(new Stack(app, 'Bare'), 'Bucket');
    });

    expect(violations.map((v) => v.ruleName)).toContain('AwsSolutions-S1');
  });
});
