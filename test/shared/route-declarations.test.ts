/**
 * One declaration per route (shared/route-declarations/ and the plugins' declarations), checked in
 * both directions: every declared route has an API Gateway method (the synthesized template), an
 * operation of the OpenAPI document and a handler in its family, and nothing else has one.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/aws/functions.js';
import { EntityRecordApiStack } from '../../infra/aws/stack.js';
import type { Operations } from '../../shared/http/stack.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../../shared/openapi/document.js';
import { authBodySchemas } from '../../shared/auth/body-schemas.js';
import { generatedBodyValidators, VALIDATED_FAMILIES } from '../../shared/http/bodies/generate.js';
import type { BodyValidators } from '../../shared/http/validate-body.js';
import { loadDefinitions } from '../../shared/registry/index.js';
import { coreRoutes, families, matchPath, routeKey, routes, type Family } from '../../shared/routes.js';

type Resources = Record<string, { Type: string; Properties?: any }>;

const declared = new Set(routes.map((r) => routeKey(r.method, r.path)));

let doc: OpenApiDocument;

beforeAll(async () => {
  doc = buildOpenApiDocument({ routes, entities: await loadDefinitions(), version: '1' });
});

describe('the route declarations', () => {
  it('declare each method and path once', () => {
    expect(declared.size).toBe(routes.length);
  });

  it('give each route an API Gateway method, and API Gateway no other (besides the ANY of each path)', () => {
    const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
    const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
    const stack = new EntityRecordApiStack(app, 'Declarations', { code: lambda.Code.fromInline('export const handler = async () => ({ statusCode: 200 });') });
    const resources = Template.fromStack(stack).toJSON().Resources as Resources;
    const pathOf = (id: string): string => {
      const { ParentId, PathPart } = resources[id].Properties;
      return `${ParentId.Ref ? pathOf(ParentId.Ref) : ''}/${PathPart}`;
    };

    const methods = Object.values(resources)
      .filter((r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties.HttpMethod !== 'ANY')
      .map((r) => routeKey(r.Properties.HttpMethod, pathOf(r.Properties.ResourceId.Ref)));

    expect(new Set(methods).size).toBe(methods.length);
    expect(new Set(methods)).toEqual(declared);
  }, 180_000);

  it('give each route an operation of the OpenAPI document, and the document no other', () => {
    const operations = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path: p })));

    const described = new Set<string>();
    const undeclared: string[] = [];
    for (const op of operations) {
      const route = matchPath(op.method, op.path)?.route;
      if (route) described.add(routeKey(route.method, route.path));
      else undeclared.push(`${op.method} ${op.path}`);
    }

    expect(undeclared).toEqual([]);
    expect([...declared].filter((key) => !described.has(key))).toEqual([]);
  });

  it('give each route a handler in its family, and no family a handler for another route', async () => {
    // Lambda's streaming wrapper, which the stream family's module uses when it loads: the local runtime's.
    await import('../../infra/local/lambda-runtime.js');
    const problems: string[] = [];
    for (const family of families) {
      const module = (await import(`../../functions/${family}/handler.ts`)) as { handler: { operations?: () => Promise<Operations> } };
      expect(module.handler.operations, `functions/${family}/handler.ts is built by createApiHandler or createPublicHandler`).toBeTypeOf('function');
      const served = new Set(Object.keys(await module.handler.operations!()));
      const own = routes.filter((r) => r.family === family);
      for (const route of own) if (!served.has(route.operation)) problems.push(`${family}: no handler for ${route.method} ${route.path} (${route.operation})`);
      for (const name of served) if (!own.some((r) => r.operation === name)) problems.push(`${family}: a handler ${name}, which no declared route of the family names`);
    }

    expect(problems).toEqual([]);
  }, 120_000);

  it('make the health family\'s routes public GETs (its stack reads no credentials)', () => {
    for (const route of routes.filter((r) => r.family === ('health' satisfies Family))) expect([route.method, route.auth]).toEqual(['GET', 'public']);
  });

  it('name response components the document has', () => {
    const schemas = doc.components.schemas ?? {};

    for (const route of routes.filter((r) => r.response)) {
      const ops = Object.entries(doc.paths).filter(([p]) => matchPath(route.method, p)?.route === route).map(([, ops]) => ops[route.method.toLowerCase()]);
      expect(schemas[route.response!], `${route.method} ${route.path}: ${route.response}`).toBeDefined();
      expect(JSON.stringify(ops), `${route.method} ${route.path} answers ${route.response}`).toContain(`#/components/schemas/${route.response}`);
    }
  });

  it('name each operation once within its family', () => {
    const names = routes.map((r) => `${r.family} ${r.operation}`);

    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });

  it('use a body schema as the API describes it: the operation\'s request body is the declared one', () => {
    const login = doc.paths['/api/v1/auth/login'].post as { requestBody: { content: Record<string, { schema: unknown }> } };
    const route = routes.find((r) => r.method === 'POST' && r.path === '/api/v1/auth/login')!;

    expect(login.requestBody.content['application/json'].schema).toEqual(route.body);
  });

  it('validate each declared body with the declared schema: its family\'s precompiled validator, or the auth validators of the same schema', async () => {
    const unchecked: string[] = [];
    const differing: string[] = [];
    for (const route of coreRoutes.filter((r) => r.body && !('$ref' in r.body))) {
      const key = routeKey(route.method, route.path);
      if (route.family === 'auth') {
        if (!Object.values(authBodySchemas).includes(route.body as never)) differing.push(key);
      } else if ((VALIDATED_FAMILIES as readonly Family[]).includes(route.family)) {
        const { precompiled } = (await import(`../../shared/http/bodies/${route.family}.generated.ts`)) as { precompiled: BodyValidators };
        if (precompiled[route.operation]?.schema !== JSON.stringify(route.body)) differing.push(key);
      } else {
        unchecked.push(key);
      }
    }

    expect(unchecked).toEqual([]);
    expect(differing).toEqual([]);
  });

  it('keep the precompiled body validators (shared/http/bodies/) current with the declarations: npm run schemas', () => {
    for (const family of VALIDATED_FAMILIES) {
      const file = readFileSync(path.join(PROJECT_ROOT, `shared/http/bodies/${family}.generated.ts`), 'utf8');
      expect(file === generatedBodyValidators(family), `shared/http/bodies/${family}.generated.ts is out of date: run npm run schemas`).toBe(true);
    }
  });
});
