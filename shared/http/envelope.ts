/**
 * The success and error envelopes of SPEC.md, in one place. Registered first, so its `after`
 * and `onError` run last: every response, and every error however thrown, leaves through here.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { ApiError, toApiError } from '../errors.js';
import { logger } from '../logger.js';
import { newRequestId, validRequestId } from './request-context.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest, Reply } from './types.js';

/** A proxy result whose body may also be a stream (Lambda response streaming). */
type Result = Omit<APIGatewayProxyResult, 'body'> & { body: unknown };

function baseHeaders(req: ApiRequest | undefined, event: ApiEvent): Record<string, string> {
  const supplied = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'x-request-id')?.[1] ?? undefined;
  const requestId = req?.requestId ?? validRequestId(supplied) ?? event.requestContext?.requestId ?? newRequestId();
  return { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-ID': requestId, ...(req?.responseHeaders ?? {}) };
}

function withCookies(result: Result, req: ApiRequest | undefined): Result {
  if (req?.responseCookies.length) result.multiValueHeaders = { 'Set-Cookie': req.responseCookies };
  return result;
}

/** node:crypto is loaded by the first response that needs it, not at cold start. */
export function etagOf(body: string): string {
  return `W/"${process.getBuiltinModule('node:crypto').createHash('sha1').update(body).digest('base64url')}"`;
}

function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag.replace(/^W\//, '') === etag.replace(/^W\//, '');
  });
}

export function successBody(reply: Reply): unknown {
  if (reply.raw !== undefined) return reply.raw;
  return {
    success: true,
    ...(reply.data !== undefined ? { data: reply.data } : {}),
    ...(reply.pagination ? { pagination: reply.pagination } : {}),
    ...(reply.meta ? { meta: reply.meta } : {}),
    ...(reply.message !== undefined ? { message: reply.message } : {}),
    ...(reply.warning !== undefined ? { warning: reply.warning } : {}),
  };
}

export function replyToResult(reply: Reply, req: ApiRequest | undefined, event: ApiEvent): Result {
  const status = reply.status ?? (event.httpMethod === 'POST' ? 201 : 200);
  const headers = { ...baseHeaders(req, event), ...(reply.headers ?? {}) };
  if (reply.stream) return withCookies({ statusCode: status, headers, body: reply.stream }, req);
  const body = reply.text ?? JSON.stringify(successBody(reply));
  if (event.httpMethod === 'GET' && status === 200) {
    // A record's READ names its version (shared/entities/preconditions.ts); other GETs hash the body.
    const etag = headers.ETag ?? etagOf(body);
    headers.ETag = etag;
    if (ifNoneMatchHits(req?.headers['if-none-match'], etag)) {
      delete headers['Content-Type'];
      return withCookies({ statusCode: 304, headers, body: '' }, req);
    }
  }
  return withCookies({ statusCode: status, headers, body }, req);
}

/** An error body longer than this (Lambda answers at most 6 MB) keeps its code and message and drops the rest. */
export const MAX_ERROR_BODY_CHARS = 5 * 1024 * 1024;

/**
 * The error's JSON, bounded: bodies come from validated, depth-limited input (shared/http/json-body.ts),
 * but should anything make the full body unserialisable or huge, the client still gets the
 * error's own status, code and message rather than a 500.
 */
export function errorBody(apiError: ApiError): string {
  const brief = () => JSON.stringify({ success: false, error: apiError.message.slice(0, 1000), code: apiError.code });
  try {
    const body = JSON.stringify(apiError.toJSON());
    if (body.length <= MAX_ERROR_BODY_CHARS) return body;
    logger.warn('error body too large: sent without details', { code: apiError.code, chars: body.length });
  } catch (error) {
    logger.warn('error body not serialisable: sent without details', { code: apiError.code, error: error as Error });
  }
  return brief();
}

export function errorToResult(error: unknown, req: ApiRequest | undefined, event: ApiEvent): Result {
  const apiError: ApiError = toApiError(error);
  if (!(error instanceof ApiError)) {
    // The cause goes to the log (with the request id), never to the client.
    logger.error('unhandled error', { requestId: req?.requestId, path: event.path, error: error as Error, mappedTo: apiError.code });
  }
  const headers = { ...baseHeaders(req, event), ...apiError.headers };
  return withCookies({ statusCode: apiError.status, headers, body: errorBody(apiError) }, req);
}

export function envelope(): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    after: function wrapSuccess(request) {
      // Until here the response is the operation's Reply (the stack's dispatch returns one).
      const response: unknown = request.response;
      const reply: Reply = typeof response === 'object' && response !== null ? response : {};
      request.response = replyToResult(reply, request.context.api, request.event) as APIGatewayProxyResult;
    },
    onError: function wrapError(request) {
      request.response = errorToResult(request.error, request.context.api, request.event) as APIGatewayProxyResult;
    },
  };
}
