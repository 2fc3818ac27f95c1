import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { listHeaders } from '../../../shared/http/operations/entities.js';
import { coreRouteLookup } from '../../../shared/core-routes.js';
import { buildApiRequest } from '../../../shared/http/request-context.js';
import { apiPath, apiUrl, requestBase } from '../../../shared/http/urls.js';

/** A REST API proxy event as API Gateway sends it (only the fields URLs depend on, plus what the request context reads). */
function gatewayEvent(options: { path: string; resource: string; requestedPath: string; stage: string; host: string; domainName?: string; query?: Record<string, string[]>; proto?: string }): APIGatewayProxyEvent {
  const headers: Record<string, string> = { Host: options.host, ...(options.proto ? { 'X-Forwarded-Proto': options.proto } : {}) };
  return {
    resource: options.resource,
    path: options.path,
    httpMethod: 'GET',
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: options.query ? Object.fromEntries(Object.entries(options.query).map(([k, v]) => [k, v[v.length - 1]])) : null,
    multiValueQueryStringParameters: options.query ?? null,
    pathParameters: options.resource.includes('{entity}') ? { entity: options.path.split('/')[3] } : null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: 'GET',
      identity: { sourceIp: '203.0.113.9', userAgent: 'tests' } as never,
      path: options.requestedPath,
      stage: options.stage,
      requestId: 'r-1',
      requestTimeEpoch: 0,
      resourceId: 'res',
      resourcePath: options.resource,
      ...(options.domainName ? { domainName: options.domainName } : {}),
    } as APIGatewayProxyEvent['requestContext'],
  };
}

const DEFAULT_DOMAIN = 'abc123.execute-api.eu-west-1.amazonaws.com';

describe('URLs behind a base path', () => {
  it("keeps the stage of API Gateway's default URL", () => {
    const event = gatewayEvent({ path: '/api/v1/tasks', resource: '/api/v1/{entity}', requestedPath: '/prod/api/v1/tasks', stage: 'prod', host: DEFAULT_DOMAIN, domainName: DEFAULT_DOMAIN, proto: 'https' });

    const base = requestBase(event);

    expect(base).toEqual({ basePath: '/prod', origin: `https://${DEFAULT_DOMAIN}`, appPath: '/api/v1/tasks' });
    expect(apiPath(base, '/api/v1/tasks?page=2')).toBe('/prod/api/v1/tasks?page=2');
    expect(apiUrl(base, '/api/v1/tasks/tsk_1')).toBe(`https://${DEFAULT_DOMAIN}/prod/api/v1/tasks/tsk_1`);
  });

  it('keeps the base path of a custom domain mapping, whether or not event.path carries it', () => {
    for (const path of ['/api/v1/tasks', '/v2/api/v1/tasks']) {
      const event = gatewayEvent({ path, resource: '/api/v1/{entity}', requestedPath: '/v2/api/v1/tasks', stage: 'prod', host: 'api.example.com', domainName: 'api.example.com', proto: 'https' });

      expect(requestBase(event), path).toEqual({ basePath: '/v2', origin: 'https://api.example.com', appPath: '/api/v1/tasks' });
    }
  });

  it('adds nothing on a custom domain mapped at its root', () => {
    const event = gatewayEvent({ path: '/api/v1/tasks', resource: '/api/v1/{entity}', requestedPath: '/api/v1/tasks', stage: 'prod', host: 'api.example.com', domainName: 'api.example.com', proto: 'https' });

    expect(requestBase(event)).toEqual({ basePath: '', origin: 'https://api.example.com', appPath: '/api/v1/tasks' });
  });

  it('adds nothing locally, where the gateway is plain HTTP', () => {
    const event = gatewayEvent({ path: '/api/v1/tasks', resource: '/api/v1/{entity}', requestedPath: '/api/v1/tasks', stage: 'local', host: '127.0.0.1:3000' });

    expect(requestBase(event)).toEqual({ basePath: '', origin: 'http://127.0.0.1:3000', appPath: '/api/v1/tasks' });
  });

  it('gives the request its own path and base path, so the pagination Link keeps the stage', () => {
    const event = gatewayEvent({
      path: '/api/v1/tasks',
      resource: '/api/v1/{entity}',
      requestedPath: '/prod/api/v1/tasks',
      stage: 'prod',
      host: DEFAULT_DOMAIN,
      domainName: DEFAULT_DOMAIN,
      proto: 'https',
      query: { limit: ['2'], page: ['2'] },
    });
    const req = buildApiRequest(event, coreRouteLookup);

    const headers = listHeaders(req, { page: 2, limit: 2, total: 6, totalPages: 3, hasNext: true, hasPrev: true, nextCursor: 'c3' });

    expect(req.path).toBe('/api/v1/tasks');
    expect(headers.Link).toBe('</prod/api/v1/tasks?limit=2&cursor=c3>; rel="next", </prod/api/v1/tasks?limit=2&page=1>; rel="prev"');
  });
});
