/** API Gateway proxy events for in-process handler tests (no HTTP, no engine). */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { matchPath } from '../../shared/routes.js';

export function proxyEvent(options: {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  query?: Record<string, string>;
}): APIGatewayProxyEvent {
  const match = matchPath(options.method, options.path);
  return {
    resource: match?.path ?? options.path,
    path: options.path,
    httpMethod: options.method,
    headers: options.headers ?? {},
    multiValueHeaders: {},
    queryStringParameters: options.query ?? null,
    multiValueQueryStringParameters: null,
    pathParameters: match && Object.keys(match.params).length ? match.params : null,
    stageVariables: null,
    body: options.body ?? null,
    isBase64Encoded: false,
    requestContext: { requestId: 'req-test', identity: { sourceIp: '127.0.0.1' } } as never,
  };
}

export function lambdaContext(): Context {
  return { getRemainingTimeInMillis: () => 29_000 } as unknown as Context;
}

export type ProxyResult = { statusCode: number; headers: Record<string, string>; body: string };

export function parsed(result: unknown): { status: number; headers: Record<string, string>; body: any } {
  const r = result as ProxyResult;
  return { status: r.statusCode, headers: r.headers, body: r.body ? JSON.parse(r.body) : undefined };
}
