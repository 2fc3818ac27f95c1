/**
 * How AWS serves the dashboard: the REST API routes GET /dashboard and /dashboard/{asset} to the
 * dashboard family's function (same origin as the API, so the session cookie and the CSRF guard
 * apply unchanged), compresses answers, and the function's bundle carries the built files,
 * answering them with their cache lifetimes and the Content-Security-Policy.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../../dashboard/build.js';
import { bundleFilesFor } from '../../../infra/aws/docs.js';
import { FamilyFunctions, PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack } from '../../../infra/aws/stack.js';
import { MIN_COMPRESSION_BYTES } from '../../../shared/body-limits.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

type Resources = Record<string, { Type: string; Properties?: any }>;

describe('the dashboard on API Gateway', () => {
  let template: Template;
  let stack: EntityRecordApiStack;

  beforeAll(() => {
    const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
    stack = new EntityRecordApiStack(app, 'DashboardTest');
    template = Template.fromStack(stack);
  }, 120_000);

  it('routes GET /dashboard and /dashboard/{asset} of the same REST API to the dashboard function', () => {
    const resources = template.toJSON().Resources as Resources;
    const idOf = (part: string, parentId?: string) =>
      Object.entries(resources).find(([, r]) => r.Type === 'AWS::ApiGateway::Resource' && r.Properties.PathPart === part && (!parentId || r.Properties.ParentId?.Ref === parentId))?.[0];
    const dashboard = idOf('dashboard')!;
    const asset = idOf('{asset}', dashboard)!;
    const fn = stack.getLogicalId(stack.functions.get('dashboard').node.defaultChild as never);
    const getOn = (resourceId: string) =>
      Object.values(resources).find((r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties.HttpMethod === 'GET' && r.Properties.ResourceId?.Ref === resourceId);

    expect(dashboard).toBeDefined();
    expect(asset).toBeDefined();
    // The root of the API is the parent: /dashboard sits beside /api on the same origin and stage.
    expect(resources[dashboard].Properties.ParentId).toEqual({ 'Fn::GetAtt': [expect.any(String), 'RootResourceId'] });
    for (const id of [dashboard, asset]) {
      const method = getOn(id)!;
      expect(method.Properties.AuthorizationType).toBe('NONE');
      expect(JSON.stringify(method.Properties.Integration.Uri)).toContain(fn);
    }
  });

  it('compresses answers for clients that accept gzip', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { MinimumCompressionSize: MIN_COMPRESSION_BYTES });
  });

  it('gives the dashboard function no table access', () => {
    const role = stack.getLogicalId(stack.functions.get('dashboard').role!.node.defaultChild as never);
    const policies = Object.values(template.toJSON().Resources as Resources).filter(
      (r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((x) => x.Ref === role),
    );
    expect(JSON.stringify(policies)).not.toMatch(/dynamodb:/);
    template.hasResourceProperties('AWS::Lambda::Function', Match.objectLike({ Handler: 'index.handler' }));
  });
});

describe('the dashboard bundle', () => {
  let outdir: string;
  let assetDir: string;

  beforeAll(() => {
    outdir = mkdtempSync(path.join(tmpdir(), 'cdk-dashboard-'));
    const app = new App({ outdir, context: cdkJson.context });
    new FamilyFunctions(new Stack(app, 'Dashboard'), 'Functions', { families: ['dashboard'], tables: {} });
    app.synth();
    assetDir = path.join(outdir, readdirSync(outdir).find((d) => d.startsWith('asset.') && existsSync(path.join(outdir, d, 'index.mjs')))!);
  }, 120_000);

  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('carries every built file, and only the dashboard family does', () => {
    const manifest = readManifest();
    expect(bundleFilesFor('dashboard')).toEqual(expect.arrayContaining(['dashboard/dist/index.html', `dashboard/dist/${manifest.entry.script}`, `dashboard/dist/${manifest.entry.style}`]));
    expect(bundleFilesFor('entities')).toEqual([]);
    for (const file of bundleFilesFor('dashboard')) expect(existsSync(path.join(assetDir, file))).toBe(true);
  });

  it('answers the page (revalidated) and its hashed assets (cached a year) under a stage path, with the CSP', async () => {
    const manifest = readManifest();
    const { handler } = (await import(pathToFileURL(path.join(assetDir, 'index.mjs')).href)) as { handler: (e: APIGatewayProxyEvent, c: object) => Promise<APIGatewayProxyResult> };
    const event = (resource: string, p: string, params: Record<string, string> | null) =>
      ({
        httpMethod: 'GET', resource, path: p, pathParameters: params, headers: { Host: 'abc.execute-api.eu-west-1.amazonaws.com' }, multiValueHeaders: {}, queryStringParameters: null,
        multiValueQueryStringParameters: null, body: null, isBase64Encoded: false, stageVariables: null,
        requestContext: { requestId: 'r1', identity: { sourceIp: '203.0.113.9', userAgent: 'test' }, stage: 'prod', path: `/prod${p}` },
      }) as unknown as APIGatewayProxyEvent;
    const context = { getRemainingTimeInMillis: () => 29_000 };
    // As Lambda runs it: its region, and the bucket the stack tells the function (infra/aws/uploads.ts).
    const saved = { UPLOAD_BUCKET: process.env.UPLOAD_BUCKET, AWS_REGION: process.env.AWS_REGION, S3_ENDPOINT: process.env.S3_ENDPOINT };
    Object.assign(process.env, { UPLOAD_BUCKET: 'dashboardtest-uploadsbucket1a2b3c-0x9y8z', AWS_REGION: 'eu-west-1' });
    delete process.env.S3_ENDPOINT;

    const page = await handler(event('/dashboard', '/dashboard', null), context);
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    const script = await handler(event('/dashboard/{asset}', `/dashboard/${manifest.entry.script}`, { asset: manifest.entry.script }), context);
    const missing = await handler(event('/dashboard/{asset}', '/dashboard/manifest.json', { asset: 'manifest.json' }), context);

    expect(page.statusCode).toBe(200);
    expect(page.headers!['Content-Type']).toMatch(/^text\/html/);
    expect(page.headers!['Cache-Control']).toBe('no-cache');
    expect(page.headers!.ETag).toBeDefined();
    expect(page.headers!['Content-Security-Policy']).toContain("script-src 'self'");
    expect(page.headers!['Content-Security-Policy']).not.toContain('unsafe-inline');
    // Presigned uploads go from the page straight to the bucket's regional endpoint.
    expect(page.headers!['Content-Security-Policy']).toContain("connect-src 'self' https://dashboardtest-uploadsbucket1a2b3c-0x9y8z.s3.eu-west-1.amazonaws.com;");
    // Relative URLs: /prod/dashboard loads /prod/dashboard/<asset>.
    expect(page.body).toContain(`src="dashboard/${manifest.entry.script}"`);
    expect(page.body).not.toMatch(/<script>(?!<)/);
    expect(script.statusCode).toBe(200);
    expect(script.headers!['Cache-Control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers!['Content-Type']).toMatch(/^text\/javascript/);
    expect(missing.statusCode).toBe(404);
  }, 60_000);
});
