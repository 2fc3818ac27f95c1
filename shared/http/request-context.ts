/**
 * First middleware: turns the API Gateway proxy event into the ApiRequest every later
 * middleware and the operation use, and fixes the request id (X-Request-ID echoed, else
 * API Gateway's own).
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { RouteLookup } from '../core-routes.js';
import { MethodNotAllowedError } from '../errors.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest } from './types.js';
import { requestBase } from './urls.js';

/** A random request id; node:crypto is loaded by the first request without one, not at cold start. */
export function newRequestId(): string {
  return process.getBuiltinModule('node:crypto').randomUUID();
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** A client's X-Request-ID when it may be echoed (1 to 128 of [A-Za-z0-9._:-]), else undefined. */
export function validRequestId(supplied: string | undefined): string | undefined {
  return supplied !== undefined && REQUEST_ID_PATTERN.test(supplied) ? supplied : undefined;
}

/**
 * A map of request-supplied names (headers, query parameters, cookies) with no prototype, so
 * that names such as `constructor` or `__proto__` are plain entries, never inherited members.
 */
export function nameMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function lowerCaseHeaders(event: ApiEvent): Record<string, string> {
  const headers = nameMap<string>();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined && value !== null) headers[name.toLowerCase()] = value;
  }
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (values?.length && headers[name.toLowerCase()] === undefined) headers[name.toLowerCase()] = values.join(', ');
  }
  return headers;
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies = nameMap<string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!(name in cookies)) cookies[name] = part.slice(eq + 1).trim();
  }
  return cookies;
}

/** The query-string fields of a REST proxy event, as API Gateway fills them (null when empty). */
export function proxyQueryFields(searchParams: URLSearchParams): Pick<ApiEvent, 'queryStringParameters' | 'multiValueQueryStringParameters'> {
  if (searchParams.size === 0) return { queryStringParameters: null, multiValueQueryStringParameters: null };
  const query = nameMap<string>();
  const multiQuery = nameMap<string[]>();
  for (const [name, value] of searchParams) {
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  return { queryStringParameters: query, multiValueQueryStringParameters: multiQuery };
}

function queryOf(event: ApiEvent): { query: Record<string, string>; multiQuery: Record<string, string[]> } {
  const multiQuery = nameMap<string[]>();
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (values) multiQuery[name] = values;
  }
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined && !(name in multiQuery)) multiQuery[name] = [value];
  }
  const query = nameMap<string>();
  for (const [name, values] of Object.entries(multiQuery)) query[name] = values[values.length - 1];
  return { query, multiQuery };
}

/** The ApiRequest of `event`, its route looked up in `lookup` (the family's routes). */
export function buildApiRequest(event: ApiEvent, lookup: RouteLookup): ApiRequest {
  const headers = lowerCaseHeaders(event);
  const requestId = validRequestId(headers['x-request-id']) ?? (event.requestContext?.requestId || newRequestId());
  const { query, multiQuery } = queryOf(event);
  const rawBody =
    event.body === null || event.body === undefined || event.body === ''
      ? undefined
      : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  const route = lookup.findRoute(event.httpMethod, event.resource);
  // A path reached with a method it does not have (API Gateway's ANY method, the local gateway).
  if (!route) throw new MethodNotAllowedError(`${event.httpMethod} is not allowed on ${event.path}`);
  const { basePath, origin, appPath } = requestBase(event);
  return {
    method: event.httpMethod,
    path: appPath,
    basePath,
    origin,
    route,
    params: Object.fromEntries(Object.entries(event.pathParameters ?? {}).map(([k, v]) => [k, v ?? ''])),
    query,
    multiQuery,
    headers,
    cookies: parseCookies(headers.cookie),
    body: undefined,
    rawBody,
    requestId,
    ip: event.requestContext?.identity?.sourceIp ?? '0.0.0.0',
    userAgent: headers['user-agent'] ?? '',
    responseHeaders: {},
    responseCookies: [],
  };
}

export function requestContext(lookup: RouteLookup): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: function buildRequestContext(request) {
      request.context.api = buildApiRequest(request.event, lookup);
    },
  };
}
