/**
 * The CDK stack, synthesized offline with bundling skipped (context aws:cdk:bundling-stacks = []):
 * tables from shared/tables.ts, one function per family of shared/routes.ts with least-privilege
 * table access, every route as an API Gateway method, API Gateway's own errors in the envelope.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiPaths, checkPathParameters, envelopeTemplate, GATEWAY_RESPONSES } from '../../../infra/aws/api.js';
import { handlerEntry, PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { DEFAULT_ACCESS, tableAccessFor } from '../../../infra/aws/permissions.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';
import { tableEnvName } from '../../../infra/aws/tables.js';
import { BODY_TOO_LARGE_MESSAGE } from '../../../shared/body-limits.js';
import { families, pathTemplates, preflightRoutes, routes, STREAMING_FAMILIES, STREAMING_TIMEOUT_SECONDS } from '../../../shared/routes.js';
import { tables } from '../../../shared/tables.js';

type Resources = Record<string, { Type: string; Properties?: any; DeletionPolicy?: string; UpdateReplacePolicy?: string }>;

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

/** The app as `cdk synth` makes it (cdk.json's feature flags), with bundling skipped. */
function synth(props: EntityRecordApiStackProps, bundle = false, outdir?: string): { stack: EntityRecordApiStack; template: Template } {
  const app = new App({
    outdir,
    context: { ...cdkJson.context, ...(bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) },
  });
  const stack = new EntityRecordApiStack(app, 'Test', props);
  return { stack, template: Template.fromStack(stack) };
}

/** Actions that create or delete items: only 'readWrite'. UpdateItem: 'readUpdate' and 'readWrite'. */
const CREATE_DELETE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

/**
 * Functions besides the families': the bootstrap admin's handler and its CDK provider framework
 * (test/infra/aws/bootstrap.test.ts), the migration job and its provider (test/infra/aws/migration.test.ts).
 */
const BOOTSTRAP_FUNCTIONS = 4;

/** Functions besides the families': webhook fan-out and delivery, with the webhooks family (test/infra/aws/webhooks.test.ts). */
const webhookFunctions = (deployed: readonly string[]) => (deployed.includes('webhooks') ? 2 : 0);

const INLINE_CODE = lambda.Code.fromInline('export const handler = async () => ({ statusCode: 200 });');

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

function logicalIdIn(stack: EntityRecordApiStack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as Parameters<typeof stack.getLogicalId>[0]);
}

/** table id → the DynamoDB actions the family's role may perform on it (or its indexes). */
function dynamoAccessIn(stack: EntityRecordApiStack, family: string): Map<string, Set<string>> {
  const resources = Template.fromStack(stack).toJSON().Resources as Resources;
  const roleId = logicalIdIn(stack, stack.functions.get(family).role!);
  const tableIds = new Map(Object.entries(stack.tables).map(([id, table]) => [logicalIdIn(stack, table!), id]));
  const access = new Map<string, Set<string>>();
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    if (!resource.Properties.Roles.some((r: { Ref?: string }) => r.Ref === roleId)) continue;
    for (const statement of resource.Properties.PolicyDocument.Statement) {
      const actions = asList<string>(statement.Action).filter((a) => a.startsWith('dynamodb:'));
      if (actions.length === 0) continue;
      for (const target of asList(statement.Resource)) {
        expect(target, `${family}: DynamoDB access to every resource`).not.toBe('*');
        const referenced = [...tableIds].filter(([id]) => JSON.stringify(target).includes(`"${id}"`)).map(([, tableId]) => tableId);
        expect(referenced, `${family}: a DynamoDB statement names one table`).toHaveLength(1);
        const set = access.get(referenced[0]) ?? new Set<string>();
        for (const action of actions) set.add(action);
        access.set(referenced[0], set);
      }
    }
  }
  return access;
}

describe('EntityRecordApiStack with every family of the route table', { timeout: 180_000 }, () => {
  let stack: EntityRecordApiStack;
  let template: Template;
  let resources: Resources;

  const logicalId = (construct: { node: { defaultChild?: unknown } }): string => logicalIdIn(stack, construct);
  const dynamoAccess = (family: string): Map<string, Set<string>> => dynamoAccessIn(stack, family);

  /** "METHOD /path" → family of the function its integration invokes. */
  function apiMethods(): Map<string, string> {
    const functionFamilies = new Map(families.map((f) => [logicalId(stack.functions.get(f)), f]));
    const paths = new Map<string, string>();
    const pathOf = (id: string): string => {
      const known = paths.get(id);
      if (known) return known;
      const { ParentId, PathPart } = resources[id].Properties;
      const parent = ParentId.Ref ? pathOf(ParentId.Ref) : '';
      paths.set(id, `${parent}/${PathPart}`);
      return paths.get(id)!;
    };
    const methods = new Map<string, string>();
    for (const resource of Object.values(resources)) {
      if (resource.Type !== 'AWS::ApiGateway::Method') continue;
      const { HttpMethod, ResourceId, Integration } = resource.Properties;
      expect(ResourceId.Ref, `${HttpMethod} on the API root`).toBeDefined();
      const uri = JSON.stringify(Integration.Uri);
      const family = [...functionFamilies].find(([id]) => uri.includes(`"${id}"`))?.[1];
      expect(Integration.Type).toBe('AWS_PROXY');
      methods.set(`${HttpMethod} ${pathOf(ResourceId.Ref)}`, family ?? '?');
    }
    return methods;
  }

  beforeAll(() => {
    // Prepare: inline code, so the whole route table synthesizes whichever handler files exist yet.
    ({ stack, template } = synth({ code: INLINE_CODE }));
    resources = template.toJSON().Resources as Resources;
  }, 180_000);

  describe('tables', () => {
    it.each(tables.map((t) => [t.id, t] as const))('creates the %s table on demand with point-in-time recovery, retained', (_id, def) => {
      template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: Match.objectLike({
          KeySchema: [
            { AttributeName: def.partitionKey, KeyType: 'HASH' },
            { AttributeName: def.sortKey, KeyType: 'RANGE' },
          ],
          BillingMode: 'PAY_PER_REQUEST',
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          TimeToLiveSpecification: def.ttlAttribute ? { AttributeName: def.ttlAttribute, Enabled: true } : Match.absent(),
          StreamSpecification: def.stream ? { StreamViewType: 'NEW_AND_OLD_IMAGES' } : Match.absent(),
          GlobalSecondaryIndexes: def.globalIndexes.length
            ? def.globalIndexes.map((index) => ({
                IndexName: index.name,
                KeySchema: [
                  { AttributeName: index.partitionKey, KeyType: 'HASH' },
                  { AttributeName: index.sortKey, KeyType: 'RANGE' },
                ],
                Projection: { ProjectionType: 'ALL' },
              }))
            : Match.absent(),
        }),
      });
    });

    it('creates exactly the tables of shared/tables.ts and outputs their names', () => {
      template.resourceCountIs('AWS::DynamoDB::Table', tables.length);
      for (const def of tables) {
        const outputs = template.findOutputs('*', { Value: { Ref: logicalId(stack.tables[def.id]!) } });
        expect(Object.keys(outputs), `output for ${def.id}`).toHaveLength(1);
      }
      template.hasOutput('ApiUrl', {});
    });
  });

  describe('functions', () => {
    it('creates one Lambda function per family, nodejs24.x on arm64 with 512 MB and 19 s (a streaming family 15 min)', () => {
      template.resourceCountIs('AWS::Lambda::Function', families.length + BOOTSTRAP_FUNCTIONS + webhookFunctions(families));
      for (const family of families) {
        const fn = resources[logicalId(stack.functions.get(family))];
        const timeout = STREAMING_FAMILIES.includes(family) ? STREAMING_TIMEOUT_SECONDS : 19;
        expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], MemorySize: 512, Timeout: timeout, Handler: 'index.handler' });
      }
    });

    it('gives every function the table names and the Powertools service name, and no source-map flag (read lazily)', () => {
      for (const family of families) {
        const env = resources[logicalId(stack.functions.get(family))].Properties.Environment.Variables;
        for (const def of tables) expect(env[tableEnvName(def.id)], `${family} ${def.id}`).toEqual({ Ref: logicalId(stack.tables[def.id]!) });
        expect(env).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'entity-record-api' });
        expect(env.NODE_OPTIONS).toBeUndefined();
      }
    });

    it('lets API Gateway invoke each function through one permission scoped to this API', () => {
      for (const family of families) {
        const permissions = template.findResources('AWS::Lambda::Permission', {
          Properties: { FunctionName: { 'Fn::GetAtt': [logicalId(stack.functions.get(family)), 'Arn'] } },
        });
        expect(Object.values(permissions), family).toHaveLength(1);
        const { Principal, SourceArn } = Object.values(permissions)[0].Properties;
        expect(Principal).toBe('apigateway.amazonaws.com');
        // Any stage, method and path of this API: arn:...:execute-api:<region>:<account>:<api id>/*/*/*
        expect(SourceArn['Fn::Join'][1]).toEqual(expect.arrayContaining([':execute-api:', { Ref: logicalId(stack.api) }, '/*/*/*']));
      }
    });
  });

  describe('least privilege', () => {
    it('lets the health function only describe the identity table', () => {
      const access = dynamoAccess('health');
      expect([...access.keys()]).toEqual(['identity']);
      expect([...access.get('identity')!]).toEqual(['dynamodb:DescribeTable']);
    });

    it('gives the auth function no access to records or events', () => {
      const access = dynamoAccess('auth');
      expect(access.has('records')).toBe(false);
      expect(access.has('events')).toBe(false);
      expect(access.get('identity')).toContain('dynamodb:PutItem');
    });

    it('lets a record family write records and events, but only read and update identity items', () => {
      // Prepare / Act: 'entities' may not be in the route table yet; its permissions line is.
      const { stack: entities } = synth({ families: ['health', 'entities'], code: INLINE_CODE });
      // Assess
      const access = dynamoAccessIn(entities, 'entities');
      for (const table of ['records', 'events']) expect(access.get(table), table).toContain('dynamodb:PutItem');
      expect(access.get('identity')).toContain('dynamodb:UpdateItem');
      expect(access.get('identity')).not.toContain('dynamodb:PutItem');
      expect(access.get('identity')).not.toContain('dynamodb:DeleteItem');
    });

    it.each([...families])('grants the %s function exactly the tables and actions of its permissions line', (family) => {
      const access = dynamoAccess(family);
      const expected = tableAccessFor(family);
      expect(new Set(access.keys())).toEqual(new Set(Object.keys(expected)));
      for (const [tableId, level] of Object.entries(expected)) {
        const actions = access.get(tableId)!;
        for (const write of CREATE_DELETE_ACTIONS) expect(actions.has(write), `${family} ${tableId} ${write}`).toBe(level === 'readWrite');
        expect(actions.has('dynamodb:UpdateItem'), `${family} ${tableId} UpdateItem`).toBe(level === 'readWrite' || level === 'readUpdate');
        expect(actions.has('dynamodb:Query'), `${family} ${tableId} Query`).toBe(level !== 'describe');
        expect(actions.has('dynamodb:DescribeTable')).toBe(true);
      }
    });

    it('never grants table administration or wildcard DynamoDB actions', () => {
      const actions = Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy')
        .flatMap((r) => r.Properties.PolicyDocument.Statement.flatMap((s: { Action: string | string[] }) => asList(s.Action)));
      expect(actions.filter((a) => /^dynamodb:(\*|DeleteTable|UpdateTable|CreateTable)$/.test(a))).toEqual([]);
    });

    it('lets every family but health read the deployment secret (cursor signing, webhook secrets), and only read it', () => {
      const secretId = logicalId(stack.deploymentSecret);
      for (const family of families) {
        const fn = stack.functions.get(family);
        const env = (resources[logicalId(fn)].Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
        expect(env.DEPLOYMENT_SECRET_ARN, family).toEqual({ Ref: secretId });
        const roleId = logicalIdIn(stack, fn.role!);
        const actions = Object.values(resources)
          .filter((r) => r.Type === 'AWS::IAM::Policy' && asList(r.Properties.Roles).some((role: { Ref?: string }) => role.Ref === roleId))
          .flatMap((r) => r.Properties.PolicyDocument.Statement)
          .filter((s: { Resource: unknown }) => JSON.stringify(s.Resource).includes(`"${secretId}"`))
          .flatMap((s: { Action: string | string[] }) => asList(s.Action));
        if (family === 'health') expect(actions, family).toEqual([]);
        else expect(actions.sort(), family).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
      }
    });

    it('falls back to identity read-and-update and limits read-write for a family without its own line', () => {
      expect(tableAccessFor('some-future-family')).toEqual(DEFAULT_ACCESS);
      expect(DEFAULT_ACCESS).toEqual({ identity: 'readUpdate', limits: 'readWrite' });
    });
  });

  describe('REST API', () => {
    it('routes every method of the route table to its family function', () => {
      const methods = apiMethods();
      for (const route of routes) expect(methods.get(`${route.method} ${route.path}`), `${route.method} ${route.path}`).toBe(route.family);
    });

    it("streams the stream family's responses (responseTransferMode STREAM, 15-minute integration timeout) and buffers every other family's", () => {
      const streamFunction = logicalId(stack.functions.get('stream'));
      const methods = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGateway::Method');
      const streamed = methods.filter((m) => JSON.stringify(m.Properties.Integration.Uri).includes(`"${streamFunction}"`));

      expect(streamed.length).toBeGreaterThanOrEqual(2);
      for (const method of streamed) {
        expect(method.Properties.Integration).toMatchObject({ ResponseTransferMode: 'STREAM', TimeoutInMillis: STREAMING_TIMEOUT_SECONDS * 1000 });
        expect(JSON.stringify(method.Properties.Integration.Uri)).toContain('/response-streaming-invocations');
      }
      for (const method of methods.filter((m) => !streamed.includes(m))) {
        expect(method.Properties.Integration.ResponseTransferMode ?? 'BUFFERED').toBe('BUFFERED');
      }
      expect(streamed.map((m) => m.Properties.HttpMethod)).toContain('GET');
    });

    it('catches every other method of a routed path (405, CORS preflight) with ANY to the family of the path', () => {
      const methods = apiMethods();
      for (const preflight of preflightRoutes()) expect(methods.get(`ANY ${preflight.path}`), preflight.path).toBe(preflight.family);
      for (const path of pathTemplates().keys()) expect(methods.has(`ANY ${path}`), path).toBe(true);
      expect(methods.size).toBe(routes.length + pathTemplates().size);
    });

    it('deploys stage prod with tracing, metrics and throttling, accepting binary uploads', () => {
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: 'prod',
        TracingEnabled: true,
        MethodSettings: [
          Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', MetricsEnabled: true, ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue() }),
        ],
      });
      template.hasResourceProperties('AWS::ApiGateway::RestApi', {
        BinaryMediaTypes: Match.arrayWith(['multipart/form-data', 'application/octet-stream']),
      });
    });

    it.each([
      ['MISSING_AUTHENTICATION_TOKEN', '404', 'NOT_FOUND'],
      ['RESOURCE_NOT_FOUND', '404', 'NOT_FOUND'],
      ['UNAUTHORIZED', '401', 'AUTHENTICATION_FAILED'],
      ['ACCESS_DENIED', '403', 'FORBIDDEN'],
      ['INVALID_API_KEY', '403', 'FORBIDDEN'],
      ['INVALID_SIGNATURE', '403', 'FORBIDDEN'],
      ['EXPIRED_TOKEN', '403', 'FORBIDDEN'],
      ['WAF_FILTERED', '403', 'FORBIDDEN'],
      ['REQUEST_TOO_LARGE', '413', 'PAYLOAD_TOO_LARGE'],
      ['THROTTLED', '429', 'RATE_LIMIT_EXCEEDED'],
      ['QUOTA_EXCEEDED', '429', 'RATE_LIMIT_EXCEEDED'],
      ['INTEGRATION_TIMEOUT', '504', 'GATEWAY_TIMEOUT'],
      ['INTEGRATION_FAILURE', '502', 'BAD_GATEWAY'],
      ['DEFAULT_5XX', undefined, 'INTERNAL_ERROR'],
      ['DEFAULT_4XX', undefined, 'INVALID_REQUEST'],
    ])('answers API Gateway %s with %s and the error envelope code %s, with CORS headers', (type, status, code) => {
      const found = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: type } }));
      expect(found).toHaveLength(1);
      const props = found[0].Properties;
      expect(props.StatusCode).toBe(status);
      expect(props.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/json'",
        'gatewayresponse.header.X-Request-ID': 'context.requestId',
        'gatewayresponse.header.Access-Control-Allow-Origin': 'method.request.header.Origin',
        'gatewayresponse.header.Access-Control-Allow-Credentials': "'true'",
        'gatewayresponse.header.Vary': "'Origin'",
      });
      // API Gateway substitutes $context.error.messageString with a JSON string.
      const body = JSON.parse(props.ResponseTemplates['application/json'].replace('$context.error.messageString', '"Invalid request body"'));
      expect(body).toEqual({ success: false, error: expect.any(String), code });
    });

    it('points a body over the gateway limit to the presigned upload flow, with the limits the WAF rule and the local gateway apply', () => {
      const [tooLarge] = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: 'REQUEST_TOO_LARGE' } }));
      const body = JSON.parse(tooLarge.Properties.ResponseTemplates['application/json']);

      expect(body.error).toBe(BODY_TOO_LARGE_MESSAGE);
      expect(body.error).toContain('POST /api/v1/upload/presign');
    });

    it('names a body too large for Lambda as a possible cause of an integration failure (a refused invocation lands there)', () => {
      const [failure] = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: 'INTEGRATION_FAILURE' } }));
      const body = JSON.parse(failure.Properties.ResponseTemplates['application/json']);

      expect(body.error).toContain('4,669,440 bytes of multipart/form-data or application/octet-stream');
      expect(body.error).toContain('6,225,920 bytes of any other type');
      expect(body.error).toContain('POST /api/v1/upload/presign');
    });

    it('keeps every gateway response template valid JSON', () => {
      for (const response of GATEWAY_RESPONSES) {
        expect(() => JSON.parse(envelopeTemplate(response).replace('$context.error.messageString', '"x"')), response.type.responseType).not.toThrow();
      }
    });
  });
});

describe('route table checks at synth', { timeout: 180_000 }, () => {
  it('accepts the route table: one path variable name per level', () => {
    expect(() => apiPaths(routes)).not.toThrow();
  });

  it('rejects two path variable names under one resource, naming both paths', () => {
    expect(() => checkPathParameters(['/api/v1/users/{id}', '/api/v1/users/{userId}/keys'])).toThrow(
      /one path variable per level.*\/api\/v1\/users\/\{id\}.*\/api\/v1\/users\/\{userId\}\/keys/,
    );
  });

  it('rejects a route listed twice', () => {
    expect(() => apiPaths([routes[0], { ...routes[0] }])).toThrow(/twice/);
  });
});

describe('bundling functions/<family>/handler.ts', { timeout: 180_000 }, () => {
  const present = families.filter((f) => existsSync(handlerEntry(f)));

  it('has the health handler file', () => {
    expect(existsSync(handlerEntry('health'))).toBe(true);
  });

  it('builds each family with a handler file from its entry, nodejs24.x, without bundling in tests', () => {
    // Prepare / Act: the real entries; context aws:cdk:bundling-stacks = [] skips esbuild.
    const { stack, template } = synth({ families: present });
    // Assess
    template.resourceCountIs('AWS::Lambda::Function', present.length + BOOTSTRAP_FUNCTIONS + webhookFunctions(present));
    for (const family of present) {
      const fn = template.toJSON().Resources[stack.getLogicalId(stack.functions.get(family).node.defaultChild as never)];
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Handler: 'index.handler', Code: { S3Bucket: expect.anything(), S3Key: expect.stringMatching(/\.zip$/) } });
    }
  });

  it('fails synth with the missing file named when a family has no handler', () => {
    expect(() => synth({ families: ['no-such-family'] })).toThrow(/functions\/no-such-family\/handler\.ts does not exist/);
  });
});
