/**
 * The uploads bucket and its grants, synthesized offline with bundling skipped.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { EntityRecordApiStack } from '../../../infra/aws/stack.js';
import { Uploads } from '../../../infra/aws/uploads.js';

const INLINE_CODE = lambda.Code.fromInline('export const handler = async () => ({ statusCode: 200 });');

type Resources = Record<string, { Type: string; Properties?: any; DeletionPolicy?: string }>;

/** The bucket alone, in a stack of its own: fast to synthesize. */
function bucketTemplate(allowedOrigins: string[]): Template {
  const stack = new Stack(new App(), 'Bucket');
  new Uploads(stack, 'Uploads', { allowedOrigins });
  return Template.fromStack(stack);
}

function synth(environment: Record<string, string> = {}): { stack: EntityRecordApiStack; template: Template } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new EntityRecordApiStack(app, 'Test', { code: INLINE_CODE, environment });
  return { stack, template: Template.fromStack(stack) };
}

function logicalId(stack: EntityRecordApiStack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as Parameters<typeof stack.getLogicalId>[0]);
}

/** Every S3 action in the policies attached to the family's role. */
function s3ActionsOf(stack: EntityRecordApiStack, template: Template, family: string): string[] {
  const roleId = logicalId(stack, stack.functions.get(family).role!);
  const resources = template.toJSON().Resources as Resources;
  const actions: string[] = [];
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::IAM::Policy' || !resource.Properties.Roles.some((r: { Ref?: string }) => r.Ref === roleId)) continue;
    for (const statement of resource.Properties.PolicyDocument.Statement) {
      actions.push(...[statement.Action].flat().filter((a: string) => a.startsWith('s3:')));
    }
  }
  return actions;
}

describe('uploads bucket', () => {
  const template = bucketTemplate(['https://app.example.com', 'https://admin.example.com']);

  it('blocks every public access, encrypts with SSE-S3 and is kept when the stack goes', () => {
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      }),
    });
  });

  it('refuses every request that is not over TLS', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } }, Principal: { AWS: '*' } }),
        ]),
      },
    });
  });

  it('allows browser POSTs of presigned forms from the allowed origins only', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: {
        CorsRules: [Match.objectLike({ AllowedOrigins: ['https://app.example.com', 'https://admin.example.com'], AllowedMethods: ['POST', 'GET'] })],
      },
    });
    const noOrigins = bucketTemplate([]);
    const bucket = Object.values(noOrigins.findResources('AWS::S3::Bucket'))[0] as { Properties: Record<string, unknown> };
    expect(bucket.Properties.CorsConfiguration).toBeUndefined();
  });

  it('expires presigned objects that were never completed after a day', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'pending/', ExpirationInDays: 1, Status: 'Enabled' })]),
      },
    });
  });

});

describe('uploads in the whole stack', () => {
  let stack: EntityRecordApiStack;
  let template: Template;

  beforeAll(() => {
    ({ stack, template } = synth({ ALLOWED_ORIGINS: 'https://app.example.com' }));
  }, 180_000);

  it('gives the upload function the bucket name and object read, write and delete, and no other function any S3 access', () => {
    const uploadFn = logicalId(stack, stack.functions.get('upload'));
    const fn = template.toJSON().Resources[uploadFn];
    expect(fn.Properties.Environment.Variables.UPLOAD_BUCKET).toEqual({ Ref: expect.stringMatching(/^UploadsBucket/) });
    const actions = s3ActionsOf(stack, template, 'upload');
    expect(actions).toEqual(expect.arrayContaining(['s3:PutObject', 's3:DeleteObject*', 's3:GetObject*', 's3:List*']));
    expect(actions).not.toContain('s3:*');
    expect(actions.some((a) => /^s3:(PutBucket|DeleteBucket|PutBucketPolicy)/.test(a))).toBe(false);
    for (const family of stack.functions.byFamily.keys()) {
      if (family !== 'upload') expect(s3ActionsOf(stack, template, family), family).toEqual([]);
    }
  });

  it('lets the dashboard (on the API\'s own origin) and the allowed origins POST presigned forms to the bucket', () => {
    const apiId = logicalId(stack, stack.api);
    const bucket = Object.values(template.findResources('AWS::S3::Bucket'))[0] as { Properties: { CorsConfiguration: { CorsRules: { AllowedOrigins: unknown[]; AllowedMethods: string[] }[] } } };
    const [rule] = bucket.Properties.CorsConfiguration.CorsRules;

    expect(rule.AllowedOrigins).toEqual([
      { 'Fn::Join': ['', ['https://', { Ref: apiId }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] },
      'https://app.example.com',
    ]);
    expect(rule.AllowedMethods).toContain('POST');
  });

  it('tells the dashboard function the bucket, for the storage origin of its Content-Security-Policy, with no S3 access', () => {
    const fn = template.toJSON().Resources[logicalId(stack, stack.functions.get('dashboard'))];

    expect(fn.Properties.Environment.Variables.UPLOAD_BUCKET).toEqual({ Ref: expect.stringMatching(/^UploadsBucket/) });
    expect(s3ActionsOf(stack, template, 'dashboard')).toEqual([]);
  });

  it('lets the upload function use its own table only among the record tables', () => {
    const roleId = logicalId(stack, stack.functions.get('upload').role!);
    const policies = JSON.stringify(Object.values(template.findResources('AWS::IAM::Policy')).filter((p: any) => p.Properties.Roles.some((r: { Ref?: string }) => r.Ref === roleId)));
    expect(policies).toContain(logicalId(stack, stack.tables.uploads!));
    expect(policies).not.toContain(logicalId(stack, stack.tables.records!));
    expect(policies).not.toContain(logicalId(stack, stack.tables.events!));
  });

  it('accepts multipart bodies as binary at API Gateway', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: Match.arrayWith(['multipart/form-data']) });
  });
});
