import { App, Stack } from 'aws-cdk-lib';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { bundleFilesFor } from '../../../infra/aws/docs.js';
import { FamilyFunctions } from '../../../infra/aws/functions.js';
import { ENTITY_FILES_ENV, entityFileNames } from '../../../shared/registry/index.js';
import cdkJson from '../../../cdk.json' with { type: 'json' };

describe('the docs bundle', () => {
  it('copies the Swagger UI files of the page into the docs family only', () => {
    expect(bundleFilesFor('docs')).toEqual([
      'node_modules/swagger-ui-dist/package.json',
      'node_modules/swagger-ui-dist/swagger-ui-bundle.js',
      'node_modules/swagger-ui-dist/swagger-ui.css',
    ]);
    expect(bundleFilesFor('entities')).toEqual([]);
  });

  describe('bundled by esbuild as on AWS', () => {
    let outdir: string;
    let assetDir: string;

    beforeAll(() => {
      outdir = mkdtempSync(path.join(tmpdir(), 'cdk-docs-'));
      const app = new App({ outdir, context: cdkJson.context });
      // Only the docs function (the family needs no table): the same construct the stack uses.
      new FamilyFunctions(new Stack(app, 'Docs'), 'Functions', { families: ['docs'], tables: {} });
      app.synth();
      assetDir = path.join(outdir, readdirSync(outdir).find((d) => d.startsWith('asset.') && existsSync(path.join(outdir, d, 'index.mjs')))!);
    }, 120_000);

    afterAll(() => rmSync(outdir, { recursive: true, force: true }));

    it('serves the document and the page assets from inside the bundle', async () => {
      // As the stack sets it: a bundle has no entities/ directory to read. (Put back afterwards:
      // the files of test/infra/aws/ share their process.)
      const before = process.env[ENTITY_FILES_ENV];
      process.env[ENTITY_FILES_ENV] = entityFileNames().join(',');
      onTestFinished(() => {
        if (before === undefined) delete process.env[ENTITY_FILES_ENV];
        else process.env[ENTITY_FILES_ENV] = before;
      });
      const { handler } = (await import(pathToFileURL(path.join(assetDir, 'index.mjs')).href)) as { handler: (e: APIGatewayProxyEvent, c: object) => Promise<APIGatewayProxyResult> };
      const event = (resource: string, p: string, params: Record<string, string> | null) =>
        ({
          httpMethod: 'GET', resource, path: p, pathParameters: params, headers: {}, multiValueHeaders: {}, queryStringParameters: null,
          multiValueQueryStringParameters: null, body: null, isBase64Encoded: false, stageVariables: null,
          requestContext: { requestId: 'r1', identity: { sourceIp: '203.0.113.9', userAgent: 'test' }, stage: 'prod' },
        }) as unknown as APIGatewayProxyEvent;

      const bundle = await handler(event('/api/docs/{asset}', '/api/docs/swagger-ui-bundle.js', { asset: 'swagger-ui-bundle.js' }), { getRemainingTimeInMillis: () => 29_000 });
      const doc = await handler(event('/api/v1/openapi.json', '/api/v1/openapi.json', null), { getRemainingTimeInMillis: () => 29_000 });

      expect(existsSync(path.join(assetDir, 'node_modules/swagger-ui-dist/swagger-ui-bundle.js'))).toBe(true);
      expect(bundle.statusCode).toBe(200);
      expect(bundle.body.length).toBeGreaterThan(100_000);
      expect(doc.statusCode).toBe(200);
      expect(JSON.parse(doc.body).paths).toHaveProperty(['/api/v1/tasks']);
    }, 60_000);
  });
});
