import { GetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { db } from '../../../shared/data/client.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import { createApiHandler } from '../../../shared/http/stack.js';
import { handler as healthHandler } from '../../../functions/health/handler.js';
import { lambdaContext, parsed, proxyEvent } from '../../support/events.js';

// Two public routes of the table serve as test vehicles: their operations are replaced here.
/** The operation its declaration names for GET /api/health. */
const HEALTH = 'getHealth';
/** The operation its declaration names for POST /api/v1/auth/login. */
const LOGIN = 'login';

function invoke(handler: ReturnType<typeof createApiHandler>, event: ReturnType<typeof proxyEvent>) {
  return handler(event, lambdaContext()).then(parsed);
}

describe('middleware stack', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  beforeEach(() => dynamo.reset());
  afterEach(() => {
    delete process.env.API_DEPRECATIONS;
    resetConfig();
  });

  it('wraps data in the success envelope and echoes X-Request-ID', async () => {
    const handler = createApiHandler({ [HEALTH]: async () => ({ data: { a: 1 } }) });

    const res = await invoke(handler, proxyEvent({ method: 'GET', path: '/api/health', headers: { 'X-Request-ID': 'abc-123' } }));

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { a: 1 } });
    expect(res.headers['X-Request-ID']).toBe('abc-123');
  });

  it('generates a request id when none is sent, and answers POST with 201', async () => {
    const handler = createApiHandler({ [LOGIN]: async (req) => ({ data: req.body }) });

    const res = await invoke(handler, proxyEvent({ method: 'POST', path: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, body: '{"x":1}' }));

    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ x: 1 });
    expect(res.headers['X-Request-ID']).toMatch(/.+/);
  });

  it.each([
    ['malformed JSON', '{"x":', 'application/json'],
    ['an array body', '[1,2]', 'application/json'],
    ['a scalar body', '42', 'application/json'],
    ['a wrong Content-Type', '{"x":1}', 'text/plain'],
  ])('refuses %s with 400 INVALID_REQUEST', async (_, body, contentType) => {
    const handler = createApiHandler({ [LOGIN]: async () => ({ data: 'unreachable' }) });

    const res = await invoke(handler, proxyEvent({ method: 'POST', path: '/api/v1/auth/login', headers: { 'Content-Type': contentType }, body }));

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
    expect(res.body.error).toEqual(expect.any(String));
  });

  it('maps an ApiError to its status, code and details', async () => {
    const handler = createApiHandler({ [HEALTH]: async () => { throw new ValidationError({ title: 'is required' }); } });

    const res = await invoke(handler, proxyEvent({ method: 'GET', path: '/api/health' }));

    expect(res.status).toBe(422);
    expect(res.body).toEqual({ success: false, error: 'Validation failed', code: 'VALIDATION_FAILED', details: { title: 'is required' } });
  });

  it('answers an unexpected error with 500 INTERNAL_ERROR and never its message or stack', async () => {
    const handler = createApiHandler({ [HEALTH]: async () => { throw new Error('secret internal detail at /srv/app.js:12'); } });

    const res = await invoke(handler, proxyEvent({ method: 'GET', path: '/api/health' }));

    expect(res.status).toBe(500);
    expect(res.body.code).toBe('INTERNAL_ERROR');
    expect(JSON.stringify(res.body)).not.toContain('secret internal detail');
    expect(JSON.stringify(res.body)).not.toContain('app.js');
  });

  it('answers DynamoDB throttling with 503 SERVICE_UNAVAILABLE and Retry-After', async () => {
    dynamo.on(GetCommand).rejects(Object.assign(new Error('Throughput exceeded'), { name: 'ProvisionedThroughputExceededException' }));
    const handler = createApiHandler({
      [HEALTH]: async () => ({ data: await db().send(new GetCommand({ TableName: 'Records', Key: { pk: 'a', sk: 'b' } })) }),
    });

    const res = await invoke(handler, proxyEvent({ method: 'GET', path: '/api/health' }));

    expect(res.status).toBe(503);
    expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.headers['Retry-After']).toBe('1');
  });

  it('answers the health check with 503 and the same shape when DynamoDB does not answer', async () => {
    dynamo.on(DescribeTableCommand).rejects(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));

    const res = await invoke(healthHandler, proxyEvent({ method: 'GET', path: '/api/health' }));

    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'unavailable', version: expect.any(String), timestamp: expect.any(String) });
  });

  it('accepts X-API-Version v1 and refuses any other version naming the supported one', async () => {
    const handler = createApiHandler({ [LOGIN]: async () => ({ status: 200, data: 'ok' }) });
    const event = (version: string) => proxyEvent({ method: 'POST', path: '/api/v1/auth/login', headers: { 'X-API-Version': version } });

    const ok = await invoke(handler, event('v1'));
    const refused = await invoke(handler, event('v2'));

    expect(ok.status).toBe(200);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INVALID_REQUEST');
    expect(refused.body.error).toContain('v1');
  });

  it('adds Deprecation, Sunset and Link headers to a version configured as deprecated', async () => {
    process.env.API_DEPRECATIONS = JSON.stringify({ v1: { sunset: 'Sat, 01 May 2027 00:00:00 GMT', link: '/docs/migrate-v2' } });
    resetConfig();
    const handler = createApiHandler({ [LOGIN]: async () => ({ status: 200, data: 'ok' }) });

    const res = await invoke(handler, proxyEvent({ method: 'POST', path: '/api/v1/auth/login' }));

    expect(res.headers.Deprecation).toBe('true');
    expect(res.headers.Sunset).toBe('Sat, 01 May 2027 00:00:00 GMT');
    expect(res.headers.Link).toBe('</docs/migrate-v2>; rel="deprecation"');
  });

  it('sends an ETag on GET and 304 with no body when If-None-Match matches', async () => {
    const handler = createApiHandler({ [HEALTH]: async () => ({ data: { n: 1 } }) });
    const first = await invoke(handler, proxyEvent({ method: 'GET', path: '/api/health' }));

    const second = (await handler(proxyEvent({ method: 'GET', path: '/api/health', headers: { 'If-None-Match': first.headers.ETag } }), lambdaContext())) as { statusCode: number; body: string };

    expect(first.headers.ETag).toMatch(/^W\/".+"$/);
    expect(second.statusCode).toBe(304);
    expect(second.body).toBe('');
  });

  it('answers a method the path does not have with 405 METHOD_NOT_ALLOWED', async () => {
    const handler = createApiHandler({ [HEALTH]: async () => ({ data: 1 }) });

    const res = await invoke(handler, { ...proxyEvent({ method: 'DELETE', path: '/api/health' }), resource: '/api/health' });

    expect(res.status).toBe(405);
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('replaces an invalid X-Request-ID on a 405 answered before the request is built', async () => {
    const handler = createApiHandler({ [HEALTH]: async () => ({ data: 1 }) });
    const event = proxyEvent({ method: 'DELETE', path: '/api/health', headers: { 'X-Request-ID': '<bad id>' } });

    const res = await invoke(handler, { ...event, resource: '/api/health' });

    expect(res.status).toBe(405);
    expect(res.headers['X-Request-ID']).not.toBe('<bad id>');
    expect(res.headers['X-Request-ID']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  });

  it('answers a CORS preflight without authentication', async () => {
    const handler = createApiHandler({});

    const res = (await handler(
      proxyEvent({ method: 'OPTIONS', path: '/api/v1/users/me', headers: { Origin: 'http://localhost:3000', Host: 'localhost:3000', 'Access-Control-Request-Method': 'PATCH' } }),
      lambdaContext(),
    )) as { statusCode: number; headers: Record<string, string> };

    expect(res.statusCode).toBe(204);
    expect(res.headers['Access-Control-Allow-Origin']).toBe('http://localhost:3000');
    expect(res.headers['Access-Control-Allow-Methods']).toContain('PATCH');
  });

  it('reads query parameters and cookies named like object members as plain values', async () => {
    const handler = createApiHandler({ [HEALTH]: async (req) => ({ data: { query: { ...req.query }, multi: { ...req.multiQuery }, has: 'toString' in req.query } }) });
    const event = {
      ...proxyEvent({ method: 'GET', path: '/api/health', headers: { Cookie: 'constructor=x; __proto__=y' } }),
      queryStringParameters: { constructor: '1' },
      multiValueQueryStringParameters: JSON.parse('{"constructor":["1"],"__proto__":["2"]}'),
    };

    const res = await invoke(handler, event);

    expect(res.status).toBe(200);
    // JSON.parse makes `__proto__` an own key, as the request context must.
    expect(res.body.data).toEqual(JSON.parse('{"query":{"constructor":"1","__proto__":"2"},"multi":{"constructor":["1"],"__proto__":["2"]},"has":false}'));
  });

  it('keeps not-found errors in the envelope', async () => {
    const handler = createApiHandler({ [HEALTH]: async () => { throw new NotFoundError('Record not found'); } });

    const res = await invoke(handler, proxyEvent({ method: 'GET', path: '/api/health' }));

    expect(res).toMatchObject({ status: 404, body: { success: false, code: 'NOT_FOUND', error: 'Record not found' } });
  });
});
