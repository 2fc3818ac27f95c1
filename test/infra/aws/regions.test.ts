/**
 * Two regions, one account: the same stack (same name, every option on) synthesized for two
 * regions must not give any account-wide resource the same explicit name, or the second
 * deployment fails. Names CloudFormation generates are unique by construction; explicit names
 * of globally scoped types (dashboards, IAM, S3 buckets, CloudFront, ...) are compared.
 */
import { App } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack } from '../../../infra/aws/stack.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
const ACCOUNT = '123456789012';
const STACK_NAME = 'EntityRecordApi';
const REGIONS = ['eu-west-1', 'us-east-1'] as const;

/** Resource types whose names are unique per account (or wider), with the property that names them. */
const GLOBAL_NAMES: Record<string, string[]> = {
  'AWS::CloudWatch::Dashboard': ['DashboardName'],
  'AWS::IAM::Role': ['RoleName'],
  'AWS::IAM::ManagedPolicy': ['ManagedPolicyName'],
  'AWS::IAM::User': ['UserName'],
  'AWS::IAM::Group': ['GroupName'],
  'AWS::IAM::InstanceProfile': ['InstanceProfileName'],
  'AWS::S3::Bucket': ['BucketName'],
  'AWS::CloudFront::Distribution': ['DistributionConfig.Comment'],
  'AWS::CloudFront::Function': ['Name'],
  'AWS::CloudFront::CachePolicy': ['CachePolicyConfig.Name'],
  'AWS::CloudFront::OriginRequestPolicy': ['OriginRequestPolicyConfig.Name'],
  'AWS::CloudFront::ResponseHeadersPolicy': ['ResponseHeadersPolicyConfig.Name'],
  'AWS::Route53::HostedZone': ['Name'],
};

type Resource = { Type: string; Properties?: Record<string, unknown> };

function templateFor(region: string): Record<string, Resource> {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  new EntityRecordApiStack(app, STACK_NAME, {
    env: { account: ACCOUNT, region },
    code: lambda.Code.fromInline('export const handler = async () => ({});'),
    accessLogs: true,
    executionLogs: 'ERROR',
    cloudWatchRole: true,
    waf: { enabled: true },
    observability: { alarmEmail: 'ops@example.com', dashboard: true, alarms: true },
  });
  return app.synth().getStackByName(STACK_NAME).template.Resources;
}

/** The name as deployed in `region`: pseudo parameters substituted; anything else unresolvable is an error. */
function resolveName(value: unknown, region: string): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, any>;
  if (v?.Ref === 'AWS::Region') return region;
  if (v?.Ref === 'AWS::AccountId') return ACCOUNT;
  if (v?.Ref === 'AWS::StackName') return STACK_NAME;
  if (v?.Ref === 'AWS::URLSuffix') return 'amazonaws.com';
  if (v?.Ref === 'AWS::Partition') return 'aws';
  if (v?.['Fn::Join']) return (v['Fn::Join'][1] as unknown[]).map((part) => resolveName(part, region)).join(v['Fn::Join'][0]);
  throw new Error(`cannot tell what this name is once deployed: ${JSON.stringify(value)}`);
}

function explicitGlobalNames(resources: Record<string, Resource>, region: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const [logicalId, resource] of Object.entries(resources)) {
    for (const property of GLOBAL_NAMES[resource.Type] ?? []) {
      const value = property.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], resource.Properties);
      if (value !== undefined) names.set(`${resource.Type} ${logicalId}.${property}`, `${resource.Type}:${resolveName(value, region)}`);
    }
  }
  return names;
}

let templates: Record<string, Resource>[];

beforeAll(() => {
  templates = REGIONS.map(templateFor);
}, 300_000);

describe('the same stack in two regions of one account', () => {
  it('gives no globally scoped resource the same explicit name in both', () => {
    const [first, second] = REGIONS.map((region, i) => explicitGlobalNames(templates[i], region));
    const clashes = [...first].filter(([, name]) => [...second.values()].includes(name));

    expect(clashes).toEqual([]);
  });

  it('names the dashboard after stack and region (dashboards are global to the account)', () => {
    const dashboards = REGIONS.map((region, i) =>
      Object.values(templates[i]).filter((r) => r.Type === 'AWS::CloudWatch::Dashboard').map((r) => resolveName(r.Properties!.DashboardName, region)),
    );

    expect(dashboards).toEqual([[`${STACK_NAME}-eu-west-1`], [`${STACK_NAME}-us-east-1`]]);
  });

  it('lists every globally scoped type the stack creates (the check above is only as good as its list)', () => {
    // Types of those services that carry no name of their own: attached to a named (or generated) parent.
    const nameless = new Set(['AWS::IAM::Policy', 'AWS::S3::BucketPolicy']);
    const types = new Set(templates.flatMap((t) => Object.values(t).map((r) => r.Type)));
    const unlisted = [...types].filter((type) => !(type in GLOBAL_NAMES) && !nameless.has(type) && /^AWS::(IAM|S3|CloudFront|Route53)::/.test(type));
    expect(unlisted).toEqual([]);
    expect(types.has('AWS::IAM::Role')).toBe(true);
    expect(types.has('AWS::CloudWatch::Dashboard')).toBe(true);
  });
});
