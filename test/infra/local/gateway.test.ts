import middy from '@middy/core';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createGateway } from '../../../infra/local/gateway.js';
import { BODY_TOO_LARGE_MESSAGE, MAX_BINARY_BODY_BYTES, MAX_TEXT_BODY_BYTES } from '../../../shared/body-limits.js';
import type { LambdaHandler } from '../../../infra/local/lambda-runtime.js';

// The gateway is exercised with handlers of the test's own: one echoes the proxy event it got,
// one streams its response as Lambda response streaming does.
const echo: LambdaHandler = async (event) => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(event) });

const streaming = middy({ streamifyResponse: true }).handler(async () => ({
  statusCode: 200,
  headers: { 'Content-Type': 'text/event-stream' },
  body: Readable.from(['data: {"type":"connected"}\n\n', 'data: {"n":1}\n\n']),
})) as unknown as LambdaHandler;

// Reports the time its context gives it: a streamed response may outlive the 29 s limit.
const streamingClock = middy({ streamifyResponse: true }).handler(async (_event: unknown, context: { getRemainingTimeInMillis(): number }) => ({
  statusCode: 200,
  headers: { 'Content-Type': 'text/plain' },
  body: String(context.getRemainingTimeInMillis()),
})) as unknown as LambdaHandler;

let server: Server;
let base: string;

beforeAll(async () => {
  server = createGateway(async (family) => (family === 'health' ? streaming : family === 'stream' ? streamingClock : echo));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('local gateway', () => {
  it('turns a request into a REST proxy event with path parameters and multi-value query strings', async () => {
    const res = await fetch(`${base}/api/v1/users/usr_1?tag=a&tag=b&x=1`, { headers: { 'X-Custom': 'v' } });
    const event = (await res.json()) as APIGatewayProxyEvent;

    expect(event.resource).toBe('/api/v1/users/{id}');
    expect(event.path).toBe('/api/v1/users/usr_1');
    expect(event.httpMethod).toBe('GET');
    expect(event.pathParameters).toEqual({ id: 'usr_1' });
    expect(event.multiValueQueryStringParameters).toEqual({ tag: ['a', 'b'], x: ['1'] });
    expect(event.queryStringParameters).toEqual({ tag: 'b', x: '1' });
    expect(event.headers['X-Custom']).toBe('v');
    expect(event.requestContext.requestId).toMatch(/.+/);
  });

  it('passes query parameters and headers named like object members as plain entries', async () => {
    const res = await fetch(`${base}/api/v1/users/usr_1?constructor=1&__proto__=2&toString=3`, { headers: { constructor: 'c' } });
    const event = (await res.json()) as APIGatewayProxyEvent;

    expect(res.status).toBe(200);
    // JSON.parse makes `__proto__` an own key, as the gateway must.
    expect(event.multiValueQueryStringParameters).toEqual(JSON.parse('{"constructor":["1"],"__proto__":["2"],"toString":["3"]}'));
    expect(event.headers.constructor).toBe('c');
  });

  it('passes a binary body base64-encoded and a JSON body as text', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const binary = (await (await fetch(`${base}/api/v1/users`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: bytes })).json()) as APIGatewayProxyEvent;
    const text = (await (await fetch(`${base}/api/v1/users`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":"é"}' })).json()) as APIGatewayProxyEvent;

    expect(binary.isBase64Encoded).toBe(true);
    expect(Buffer.from(binary.body!, 'base64')).toEqual(bytes);
    expect(text.isBase64Encoded).toBe(false);
    expect(text.body).toBe('{"a":"é"}');
  });

  it('streams the response of a streaming handler', async () => {
    const res = await fetch(`${base}/api/health`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toBe('data: {"type":"connected"}\n\ndata: {"n":1}\n\n');
  });

  it('gives a streaming handler the function timeout (15 min), not the 29 s integration timeout', async () => {
    const res = await fetch(`${base}/api/v1/stream/tasks`);

    expect(Number(await res.text())).toBeGreaterThan(29_000);
  });

  it('answers an unknown path with 404 NOT_FOUND in the envelope', async () => {
    const res = await fetch(`${base}/api/v1/a/b/c/d/e`);

    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });

  it('echoes a valid X-Request-ID on its own errors and replaces an invalid one, as the stack does', async () => {
    const valid = await fetch(`${base}/api/v1/a/b/c/d/e`, { headers: { 'X-Request-ID': 'req-1.2:3' } });
    const invalid = await fetch(`${base}/api/v1/a/b/c/d/e`, { headers: { 'X-Request-ID': '<script>alert(1)</script>' } });

    expect(valid.headers.get('x-request-id')).toBe('req-1.2:3');
    expect(invalid.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a body over what a function can receive with 413 PAYLOAD_TOO_LARGE, pointing to the presigned upload flow', async () => {
    const json = await fetch(`${base}/api/v1/users`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: Buffer.alloc(MAX_TEXT_BODY_BYTES + 1, 32) });
    // A binary media type travels base64-encoded in the event: its limit is three quarters.
    const binary = await fetch(`${base}/api/v1/users`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: Buffer.alloc(MAX_BINARY_BODY_BYTES + 1) });

    for (const res of [json, binary]) {
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ success: false, error: BODY_TOO_LARGE_MESSAGE, code: 'PAYLOAD_TOO_LARGE' });
    }
    expect(BODY_TOO_LARGE_MESSAGE).toContain('POST /api/v1/upload/presign');
  });

  it('passes a body of exactly the limit of its media type to the function', async () => {
    const json = await fetch(`${base}/api/v1/users`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: Buffer.alloc(MAX_TEXT_BODY_BYTES, 32) });
    const binary = await fetch(`${base}/api/v1/users`, { method: 'POST', headers: { 'Content-Type': 'multipart/form-data; boundary=x' }, body: Buffer.alloc(MAX_BINARY_BODY_BYTES) });

    expect(json.status).toBe(200);
    expect(((await json.json()) as APIGatewayProxyEvent).body).toHaveLength(MAX_TEXT_BODY_BYTES);
    expect(binary.status).toBe(200);
    const event = (await binary.json()) as APIGatewayProxyEvent;
    expect(event.isBase64Encoded).toBe(true);
    expect(event.body).toHaveLength(MAX_TEXT_BODY_BYTES);
  });

  it('counts a body sent without Content-Length (chunked) against the same limit', async () => {
    const chunk = Buffer.alloc(64 * 1024);
    const chunks = Math.ceil((MAX_BINARY_BODY_BYTES + 1) / chunk.length);
    const body = Readable.from((function* () {
      for (let i = 0; i < chunks; i++) yield chunk;
    })());
    const res = await fetch(`${base}/api/v1/users`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: Readable.toWeb(body) as ReadableStream, duplex: 'half' } as RequestInit);

    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('local gateway while a supervised part restarts', () => {
  const down = { parts: ['DynamoDB Local'], essential: true };
  let degraded: Server;
  let degradedBase: string;
  beforeAll(async () => {
    degraded = createGateway(async () => echo, { down: () => down.parts, essentialDown: () => down.essential });
    await new Promise<void>((resolve) => degraded.listen(0, '127.0.0.1', resolve));
    degradedBase = `http://127.0.0.1:${(degraded.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => degraded.close(() => resolve())));

  it('answers health 503 degraded, naming the part, while the engine restarts', async () => {
    down.parts = ['DynamoDB Local'];
    down.essential = true;

    const res = await fetch(`${degradedBase}/api/health`);

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ status: 'degraded', restarting: ['DynamoDB Local'] });
  });

  it('answers other requests 503 SERVICE_UNAVAILABLE with Retry-After while the engine restarts, without calling the function', async () => {
    down.parts = ['DynamoDB Local'];
    down.essential = true;

    const res = await fetch(`${degradedBase}/api/v1/users/usr_1`);

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ success: false, code: 'SERVICE_UNAVAILABLE' });
  });

  it('keeps serving while a part requests do not need restarts, health saying degraded with 200', async () => {
    down.parts = ['the webhook workers'];
    down.essential = false;

    const health = await fetch(`${degradedBase}/api/health`);
    const request = await fetch(`${degradedBase}/api/v1/users/usr_1`);

    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'degraded', restarting: ['the webhook workers'] });
    expect(request.status).toBe(200);
  });
});
