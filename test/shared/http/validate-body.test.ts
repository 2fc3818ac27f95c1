/** The declared body checked by the stack (shared/http/validate-body.ts), DynamoDB mocked. */
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { precompiled } from '../../../shared/http/bodies/upload.generated.js';
import { createApiHandler, type StackOptions } from '../../../shared/http/stack.js';
import { lambdaContext, parsed, proxyEvent } from '../../support/events.js';

// A public POST route serves as the vehicle; it is given the presign body's validator.
const PATH = '/api/v1/auth/login';
/** The operation its declaration names for POST PATH. */
const LOGIN = 'login';
const bodies = { [LOGIN]: precompiled.presignUpload };

function post(body: unknown) {
  return proxyEvent({ method: 'POST', path: PATH, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

describe('the declared body in the stack', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    dynamo.reset();
    dynamo.on(UpdateCommand).resolves({ Attributes: { n: 1 } });
  });

  it('refuses a body its schema refuses with 422 naming each field, before the operation', async () => {
    const operation = vi.fn(async () => ({ data: {} }));

    const res = parsed(await createApiHandler({ [LOGIN]: operation }, { bodies })(post({ filename: ' ', size: 0 }), lambdaContext()));

    expect(res.status).toBe(422);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details).toEqual({ filename: 'must not be blank', type: 'is required', size: 'must be at least 1' });
    expect(operation).not.toHaveBeenCalled();
  });

  it("joins the domain's problems to a refused body's answer, the domain's words first", async () => {
    const bodyProblems: StackOptions['bodyProblems'] = async (_req, refused) => ({ type: 'not a type of ours', ...(refused.size ? { size: 'in bytes, at least 1' } : {}) });

    const res = parsed(await createApiHandler({ [LOGIN]: async () => ({ data: {} }) }, { bodies, bodyProblems })(post({ filename: 'a.png', size: 0 }), lambdaContext()));

    expect(res.status).toBe(422);
    expect(res.body.details).toEqual({ type: 'not a type of ours', size: 'in bytes, at least 1' });
  });

  it('lets a body its schema takes reach the operation, and leaves a route without a validator alone', async () => {
    const operation = vi.fn(async () => ({ status: 200, data: {} }));
    const good = await createApiHandler({ [LOGIN]: operation }, { bodies })(post({ filename: 'a.png', type: 'image/png', size: 3 }), lambdaContext());
    const unchecked = await createApiHandler({ [LOGIN]: operation })(post({ anything: true }), lambdaContext());

    expect(parsed(good).status).toBe(200);
    expect(parsed(unchecked).status).toBe(200);
    expect(operation).toHaveBeenCalledTimes(2);
  });
});
