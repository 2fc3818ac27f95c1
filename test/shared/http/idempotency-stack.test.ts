/** The Idempotency-Key middlewares inside the real stack, DynamoDB mocked: what is written when. */
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../../shared/errors.js';
import { MAX_STORED_BYTES, requestFingerprint, seal, sealingKey } from '../../../shared/http/idempotency.js';
import { createApiHandler } from '../../../shared/http/stack.js';
import { lambdaContext, parsed, proxyEvent } from '../../support/events.js';

// A public POST route of the table serves as the vehicle: anonymous callers are scoped by IP.
const PATH = '/api/v1/auth/login';
/** The operation its declaration names for POST PATH. */
const LOGIN = 'login';
const BODY = '{"x":1}';
const KEY = 'key-1';

function event(headers: Record<string, string> = {}) {
  return proxyEvent({ method: 'POST', path: PATH, headers: { 'Content-Type': 'application/json', 'Idempotency-Key': KEY, ...headers }, body: BODY });
}

const conditionFailed = Object.assign(new Error('condition'), { name: 'ConditionalCheckFailedException' });

describe('idempotency in the stack', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    dynamo.reset();
    dynamo.on(UpdateCommand).resolves({ Attributes: { n: 1 } });
  });

  it('locks before the operation and stores the final response after it', async () => {
    dynamo.on(PutCommand).resolves({});
    const operation = vi.fn(async () => ({ data: { id: 'x' }, headers: { Location: '/x' } }));

    const res = parsed(await createApiHandler({ [LOGIN]: operation })(event(), lambdaContext()));

    expect(res.status).toBe(201);
    const puts = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input.Item!);
    expect(puts.map((item) => item.status)).toEqual(['in_progress', 'completed']);
    expect(puts[1].response).toBeInstanceOf(Uint8Array);
    expect(puts[1].pk).toMatch(/^IDEMP#ip:127\.0\.0\.1#[0-9a-f]{64}$/);
  });

  it('releases the lock on an error response, storing nothing', async () => {
    dynamo.on(PutCommand).resolves({});
    dynamo.on(DeleteCommand).resolves({});

    const res = parsed(await createApiHandler({ [LOGIN]: async () => { throw new ValidationError({ x: 'bad' }); } })(event(), lambdaContext()));

    expect(res.status).toBe(422);
    expect(dynamo.commandCalls(PutCommand).map((c) => c.args[0].input.Item!.status)).toEqual(['in_progress']);
    expect(dynamo.commandCalls(DeleteCommand)).toHaveLength(1);
  });

  it('releases the lock instead of storing a response too large for an item', async () => {
    dynamo.on(PutCommand).resolves({});
    dynamo.on(DeleteCommand).resolves({});

    const res = await createApiHandler({ [LOGIN]: async () => ({ data: 'x'.repeat(MAX_STORED_BYTES) }) })(event(), lambdaContext());

    expect(res.statusCode).toBe(201);
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(1);
    expect(dynamo.commandCalls(DeleteCommand)).toHaveLength(1);
  });

  it('replays a completed response without running the operation', async () => {
    const stored = { statusCode: 201, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{"success":true,"data":{"id":"first"}}' };
    dynamo.on(PutCommand).rejects(conditionFailed);
    dynamo.on(GetCommand).resolves({
      Item: {
        status: 'completed',
        fingerprint: requestFingerprint('POST', PATH, {}, Buffer.from(BODY)),
        expiresAt: Math.floor(Date.now() / 1000) + 60,
        response: seal(stored, sealingKey('ip:127.0.0.1', KEY)),
      },
    });
    const operation = vi.fn(async () => ({ data: { id: 'second' } }));

    const res = parsed(await createApiHandler({ [LOGIN]: operation })(event({ 'X-Request-ID': 'retry-1' }), lambdaContext()));

    expect(operation).not.toHaveBeenCalled();
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, data: { id: 'first' } });
    expect(res.headers).toMatchObject({ 'Idempotent-Replayed': 'true', 'X-Request-ID': 'retry-1', 'X-RateLimit-Remaining': expect.any(String) });
  });

  it('does nothing without the header', async () => {
    const res = await createApiHandler({ [LOGIN]: async () => ({ data: 1 }) })(event({ 'Idempotency-Key': undefined as never }), lambdaContext());

    expect(res.statusCode).toBe(201);
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);
  });
});
