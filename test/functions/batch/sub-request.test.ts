import { describe, expect, it } from 'vitest';
import { batchResponse, subRequestId, subRequestTarget } from '../../../functions/batch/sub-request.js';
import type { BatchItem } from '../../../shared/batch/validate.js';
import { requestBase } from '../../../shared/http/urls.js';

const outer = {
  requestId: 'req-1',
  ip: '203.0.113.9',
  headers: {
    authorization: 'Bearer sk_live_x',
    cookie: 'session=abc',
    'user-agent': 'tests',
    origin: 'https://evil.example',
    'idempotency-key': 'k1',
    'if-none-match': 'W/"x"',
    'content-type': 'application/json',
  },
};

function target(item: BatchItem, index = 0) {
  return subRequestTarget(outer, item, index);
}

describe('sub-request events', () => {
  it('builds the proxy event the gateway would: resource, path parameters, query, body', () => {
    const result = target({ id: 'a', method: 'PATCH', path: '/tasks/tsk_1?x=1&x=2&y=z', body: { title: 't' } }, 2);

    expect(result).toMatchObject({ family: 'entities' });
    const { event } = result as Extract<typeof result, { event: unknown }>;
    expect(event).toMatchObject({
      resource: '/api/v1/{entity}/{id}',
      path: '/api/v1/tasks/tsk_1',
      httpMethod: 'PATCH',
      pathParameters: { entity: 'tasks', id: 'tsk_1' },
      queryStringParameters: { x: '2', y: 'z' },
      multiValueQueryStringParameters: { x: ['1', '2'], y: ['z'] },
      body: '{"title":"t"}',
      isBase64Encoded: false,
    });
    expect(event.requestContext.identity.sourceIp).toBe('203.0.113.9');
    expect(event.requestContext.requestId).toBe('req-1.3');
  });

  it('copies credentials and client headers, never Origin, Idempotency-Key or If-None-Match', () => {
    const result = target({ id: 'a', method: 'POST', path: '/tasks', body: {} });
    const { event } = result as Extract<typeof result, { event: unknown }>;

    expect(event.headers).toEqual({
      authorization: 'Bearer sk_live_x',
      cookie: 'session=abc',
      'user-agent': 'tests',
      'x-request-id': 'req-1.1',
      'content-type': 'application/json',
    });
  });

  it('sends no body and no Content-Type on GET, or when none is given', () => {
    for (const item of [{ id: 'a', method: 'GET', path: '/tasks', body: { a: 1 } }, { id: 'b', method: 'DELETE', path: '/tasks/tsk_1' }] as BatchItem[]) {
      const result = target(item);
      const { event } = result as Extract<typeof result, { event: unknown }>;
      expect(event.body).toBeNull();
      expect(event.headers['content-type']).toBeUndefined();
    }
  });

  it('routes core paths before entities, and a known path with another method to its family', () => {
    expect(target({ id: 'a', method: 'GET', path: '/users/me' })).toMatchObject({ family: 'auth', event: { resource: '/api/v1/users/me' } });
    expect(target({ id: 'a', method: 'PUT', path: '/users/me' })).toMatchObject({ family: 'auth' });
    expect(target({ id: 'a', method: 'GET', path: '/api-keys/key_1' })).toMatchObject({ family: 'keys', event: { pathParameters: { id: 'key_1' } } });
  });

  it('answers 404 for a path outside the route table or outside /api/v1', () => {
    expect(target({ id: 'a', method: 'GET', path: '/a/b/c/d/e' })).toMatchObject({ error: { status: 404, code: 'NOT_FOUND' } });
    expect(target({ id: 'a', method: 'GET', path: '/../health' })).toMatchObject({ error: { status: 404 } });
    expect(target({ id: 'a', method: 'GET', path: '/' })).toMatchObject({ error: { status: 404 } });
  });

  it('refuses a batch inside a batch', () => {
    expect(target({ id: 'a', method: 'POST', path: '/batch', body: { requests: [] } }, 4)).toMatchObject({
      error: { status: 400, code: 'INVALID_REQUEST', message: expect.stringMatching(/batch cannot contain another batch/i), details: { 'requests[4].path': expect.any(String) } },
    });
  });

  it('keeps sub-request ids within the request id pattern', () => {
    expect(subRequestId('x'.repeat(128), 19)).toHaveLength(128);
    expect(subRequestId('x'.repeat(128), 19).endsWith('.20')).toBe(true);
  });
});

describe('sub-request responses', () => {
  it('keeps a success body as it is', () => {
    expect(batchResponse('a', { statusCode: 201, body: '{"success":true,"data":{"id":1}}' })).toEqual({ id: 'a', status: 201, body: { success: true, data: { id: 1 } } });
  });

  it('keeps an error envelope with its code and details', () => {
    const body = { success: false, error: 'Validation failed', code: 'VALIDATION_FAILED', details: { title: 'is required' } };

    expect(batchResponse('a', { statusCode: 422, body: JSON.stringify(body) })).toEqual({ id: 'a', status: 422, body });
  });

  it('gives an error without an envelope an error string', () => {
    expect(batchResponse('a', { statusCode: 502, body: 'Bad gateway' })).toEqual({ id: 'a', status: 502, body: { success: false, error: expect.any(String) } });
    expect(batchResponse('a', { statusCode: undefined as never, body: '' })).toMatchObject({ status: 500, body: { error: expect.any(String) } });
  });
});

describe('a sub-request behind a stage', () => {
  it("keeps the outer request's base path and host, so URLs in its response work", () => {
    const outer = { headers: { host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'x-forwarded-proto': 'https' }, requestId: 'req-9', ip: '203.0.113.9', basePath: '/prod' };
    const result = subRequestTarget(outer, { id: 'a', method: 'GET', path: '/tasks?limit=2' }, 0);
    const { event } = result as Extract<typeof result, { event: unknown }>;

    expect(event.path).toBe('/api/v1/tasks');
    expect(event.requestContext.path).toBe('/prod/api/v1/tasks');
    expect(requestBase(event)).toEqual({ basePath: '/prod', origin: 'https://abc123.execute-api.eu-west-1.amazonaws.com', appPath: '/api/v1/tasks' });
  });
});
