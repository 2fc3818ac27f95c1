/**
 * POST /api/v1/batch: the sub-requests run one after the other, in order, each dispatched
 * in-process to its family's own Lambda handler (the same route table and the same middleware
 * stack, no HTTP hop). Each sub-request:
 * - is authorised as the caller: the outer request's AuthContext rides on the sub-request's Lambda
 *   context (shared/http/inherited-auth.ts), so authentication happens once per batch, while
 *   the route's auth mode and scope are checked for each sub-request;
 * - runs the rate-limit middleware, so it counts against the caller's limit;
 * - answers its own status and envelope body; a failure (whatever its cause) is its own entry and
 *   never stops the others.
 * Set-Cookie of sub-requests (a refreshed session) and the latest X-RateLimit-* values are carried
 * to the outer response. The record writes of every sub-request share the batch's operationId and
 * are kept for its undo (POST /api/v1/operations/{operationId}/undo).
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { toApiError, ApiError } from '../../shared/errors.js';
import { withInheritedAuth } from '../../shared/http/inherited-auth.js';
import type { ApiRequest } from '../../shared/http/types.js';
import { logger } from '../../shared/logger.js';
import { familyHandler, type SubRequestContext } from './families.js';
import { batchResponse, errorResponse, subRequestTarget, type BatchResponse } from './sub-request.js';
import { parseBatch, type BatchItem } from '../../shared/batch/validate.js';
import type { AuthContext } from '../../shared/caller.js';
import { newId } from '../../shared/ids.js';
import { startOperation } from '../../shared/entities/operation.js';

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

/** A Lambda context of the sub-request's own (the stack keeps per-request state on it). */
function subContext(family: string, requestId: string): SubRequestContext {
  // No getRemainingTimeInMillis: the outer invocation's own deadline bounds the whole batch.
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `batch:${family}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: '',
    memoryLimitInMB: '',
    awsRequestId: requestId,
    logGroupName: '',
    logStreamName: '',
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function carryToOuter(outer: ApiRequest, result: APIGatewayProxyResult): void {
  const headers = result.headers ?? {};
  if (headers['X-RateLimit-Remaining'] !== undefined) {
    for (const name of RATE_LIMIT_HEADERS) if (headers[name] !== undefined) outer.responseHeaders[name] = String(headers[name]);
  }
  const cookies = result.multiValueHeaders?.['Set-Cookie'];
  if (cookies?.length) outer.responseCookies.push(...cookies.map(String));
}

async function runOne(outer: ApiRequest, auth: AuthContext | undefined, item: BatchItem, index: number): Promise<BatchResponse> {
  const target = subRequestTarget(outer, item, index);
  if ('error' in target) return errorResponse(item.id, target.error);
  try {
    const handler = await familyHandler(target.family);
    const context = withInheritedAuth(subContext(target.family, target.event.requestContext.requestId), auth);
    const result = await handler(target.event, context);
    carryToOuter(outer, result);
    return batchResponse(item.id, result);
  } catch (error) {
    // The family's stack answers every error itself; this is a failure around it (a module that
    // does not load, a handler that rejects).
    if (!(error instanceof ApiError)) logger.error('batch sub-request failed', { requestId: outer.requestId, index, error: error as Error });
    return errorResponse(item.id, toApiError(error));
  }
}

export async function runBatch(req: ApiRequest): Promise<{ operationId: string; responses: BatchResponse[] }> {
  const items = parseBatch(req.body);
  // An anonymous batch writes nothing: its id names no operation to undo.
  const operation = req.auth && startOperation(req.auth);
  const responses: BatchResponse[] = [];
  for (const [index, item] of items.entries()) responses.push(await runOne(req, operation?.auth, item, index));
  await operation?.finish();
  return { operationId: operation?.operationId ?? newId('op'), responses };
}
