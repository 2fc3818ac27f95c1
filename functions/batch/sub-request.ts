/**
 * One batch sub-request as a REST (v1) proxy event, built the way the gateway builds one
 * (infra/local/gateway.ts; API Gateway on AWS): path `/api/v1` + the sub-request's path, matched
 * with THE route table, with its query string, path parameters and JSON body. Headers copied from
 * the outer request: credentials (Authorization, X-API-Key, Cookie), User-Agent, Accept-Language,
 * X-API-Version, Host, X-Forwarded-Proto; X-Request-ID is the outer id plus `.<n>`; the outer
 * request's base path (stage) stays in front of the path, so URLs in sub-responses work. Never
 * copied: Idempotency-Key (the batch as a whole is idempotent), Origin (the outer request passed
 * the CSRF guard), If-None-Match (a sub-request always gets its body).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError, BadRequestError, NotFoundError } from '../../shared/errors.js';
import { familyOfPath, matchPath, type Family } from '../../shared/routes.js';
import { proxyQueryFields } from '../../shared/http/request-context.js';
import type { ApiRequest } from '../../shared/http/types.js';
import type { BatchItem } from '../../shared/batch/validate.js';
import { NOT_BATCHABLE, isBatchable } from './families.js';

const V1 = '/api/v1';
// Host and X-Forwarded-Proto: URLs a sub-request hands out (Link) point where the batch was sent.
const COPIED_HEADERS = ['authorization', 'x-api-key', 'cookie', 'user-agent', 'accept-language', 'x-api-version', 'host', 'x-forwarded-proto'];
const MAX_REQUEST_ID = 128;

export interface BatchResponse {
  id: string;
  status: number;
  body: unknown;
}

export type SubRequestTarget = { family: Family; event: APIGatewayProxyEvent } | { error: ApiError };

export function subRequestId(outerRequestId: string, index: number): string {
  const suffix = `.${index + 1}`;
  return outerRequestId.slice(0, MAX_REQUEST_ID - suffix.length) + suffix;
}

/** The family and event of a sub-request, or the error that answers it without running. */
export function subRequestTarget(outer: Pick<ApiRequest, 'headers' | 'requestId' | 'ip' | 'basePath'>, item: BatchItem, index: number): SubRequestTarget {
  const url = new URL(`${V1}${item.path}`, 'http://batch.invalid');
  // `..` segments are resolved by URL; a path that leaves /api/v1 matches nothing here.
  const match = url.pathname.startsWith(`${V1}/`) && url.pathname !== `${V1}/` ? matchPath(item.method, url.pathname) : undefined;
  if (!match) return { error: new NotFoundError(`No route for ${item.method} ${item.path}`) };
  // A known path with an unknown method still reaches its family, whose stack answers 405.
  const family = match.route?.family ?? familyOfPath(match.path)!;
  if (!isBatchable(family)) {
    const why = NOT_BATCHABLE[family] ?? `${item.method} ${item.path} cannot be used inside a batch`;
    return { error: new BadRequestError(why.charAt(0).toUpperCase() + why.slice(1), { [`requests[${index}].path`]: why }) };
  }

  const requestId = subRequestId(outer.requestId, index);
  const headers: Record<string, string> = { 'x-request-id': requestId };
  for (const name of COPIED_HEADERS) if (outer.headers[name] !== undefined) headers[name] = outer.headers[name];
  const body = item.body !== undefined && item.method !== 'GET' ? JSON.stringify(item.body) : null;
  if (body !== null) headers['content-type'] = 'application/json';

  const event: APIGatewayProxyEvent = {
    resource: match.path,
    path: url.pathname,
    httpMethod: item.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    ...proxyQueryFields(url.searchParams),
    pathParameters: Object.keys(match.params).length ? match.params : null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'batch',
      apiId: 'batch',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: item.method,
      identity: { sourceIp: outer.ip, userAgent: outer.headers['user-agent'] ?? null } as never,
      // As the client would have requested it: behind the outer request's stage or base path.
      path: `${outer.basePath ?? ''}${url.pathname}`,
      stage: 'batch',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'batch',
      resourcePath: match.path,
    },
  };
  return { family, event };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A sub-request's entry in the batch response: its status and its own envelope body. A failure
 * always has `error` (a string) and keeps `code` and `details` when it had them.
 */
export function batchResponse(id: string, result: Pick<APIGatewayProxyResult, 'statusCode' | 'body'>): BatchResponse {
  let parsed: unknown;
  try {
    parsed = typeof result.body === 'string' && result.body !== '' ? JSON.parse(result.body) : undefined;
  } catch {
    parsed = undefined;
  }
  const status = Number.isInteger(result.statusCode) ? result.statusCode : 500;
  if (status < 400) return { id, status, body: isObject(parsed) ? parsed : {} };
  if (isObject(parsed) && typeof parsed.error === 'string') return { id, status, body: parsed };
  return { id, status, body: { success: false, error: `The request failed with status ${status}` } };
}

export function errorResponse(id: string, error: ApiError): BatchResponse {
  return { id, status: error.status, body: error.toJSON() };
}
