/**
 * The REST API, built from THE route table (shared/routes.ts): a resource per path segment, a
 * method per route, each a Lambda proxy integration of its family's function, plus an ANY method
 * on every routed path so a wrong method (405) and CORS preflights (OPTIONS) reach the handler.
 * API Gateway's own errors keep the error envelope through Gateway Responses.
 */
import { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { BINARY_MEDIA_TYPES, BODY_TOO_LARGE_MESSAGE, grouped, MAX_BINARY_BODY_BYTES, MAX_TEXT_BODY_BYTES, MIN_COMPRESSION_BYTES, UPLOAD_PRESIGN_ROUTE } from '../../shared/body-limits.js';
import { STREAMING_FAMILIES, STREAMING_TIMEOUT_SECONDS, type Route } from '../../shared/routes.js';

export interface ApiPath {
  path: string;
  routes: Route[];
  /** Family that receives every other method on the path (405s and preflights): the first route's. */
  anyFamily: string;
}

function isParameter(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

function segmentsOf(path: string): string[] {
  if (!path.startsWith('/')) throw new Error(`Route path '${path}' must start with '/'`);
  const segments = path.split('/').slice(1);
  if (segments.some((s) => s === '')) throw new Error(`Route path '${path}' has an empty segment`);
  return segments;
}

/**
 * API Gateway allows one path variable per level under a resource: `/users/{id}` and
 * `/users/{userId}/keys` cannot both exist. Throws naming both paths when the table breaks this.
 */
export function checkPathParameters(paths: Iterable<string>): void {
  const seen = new Map<string, { name: string; path: string }>();
  for (const path of paths) {
    const segments = segmentsOf(path);
    segments.forEach((segment, i) => {
      if (!isParameter(segment)) return;
      const parent = '/' + segments.slice(0, i).join('/');
      const before = seen.get(parent);
      if (!before) {
        seen.set(parent, { name: segment, path });
      } else if (before.name !== segment) {
        throw new Error(
          `shared/routes.ts: API Gateway allows one path variable per level, but under '${parent}' ` +
            `'${before.path}' uses ${before.name} and '${path}' uses ${segment}. Use one name for both.`,
        );
      }
    });
  }
}

/** The routed paths in table order, each with its routes; checks the table as API Gateway would. */
export function apiPaths(routes: readonly Route[]): ApiPath[] {
  const byPath = new Map<string, Route[]>();
  const keys = new Set<string>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (keys.has(key)) throw new Error(`shared/routes.ts lists '${key}' twice`);
    if ((route.method as string) === 'ANY') throw new Error(`shared/routes.ts: '${key}': ANY is reserved for the catch-all method`);
    keys.add(key);
    byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  }
  checkPathParameters(byPath.keys());
  return [...byPath].map(([path, list]) => ({ path, routes: list, anyFamily: list[0].family }));
}

export interface GatewayErrorResponse {
  type: apigateway.ResponseType;
  /** Status sent; undefined keeps API Gateway's own (the DEFAULT_* types cover several). */
  statusCode?: string;
  code: string;
  /** The envelope's `error`: a fixed text, or `fromGateway` for API Gateway's own message. */
  error: string | typeof fromGateway;
  headers?: Record<string, string>;
}

/** API Gateway's message for the error (JSON-quoted by API Gateway). */
export const fromGateway = Symbol('$context.error.messageString');

/** The response body template: `{"success":false,"error":"...","code":"..."}`. */
export function envelopeTemplate(response: GatewayErrorResponse): string {
  const error = response.error === fromGateway ? '$context.error.messageString' : JSON.stringify(response.error);
  return `{"success":false,"error":${error},"code":${JSON.stringify(response.code)}}`;
}

/**
 * A request Lambda refuses to be invoked with (its event over 6,291,456 bytes) is answered as an
 * integration failure, like a function that crashed or was throttled: the text cannot tell them
 * apart, so it names the likely cause when the body is large.
 */
export const INTEGRATION_FAILURE_MESSAGE =
  `The function serving this request did not answer (it failed, was throttled, or refused the request). ` +
  `A request body over ${grouped(MAX_BINARY_BODY_BYTES)} bytes of ${BINARY_MEDIA_TYPES.join(' or ')}, ` +
  `or over ${grouped(MAX_TEXT_BODY_BYTES)} bytes of any other type, is more than a function can receive: ` +
  `upload files with ${UPLOAD_PRESIGN_ROUTE}`;

/** API Gateway's own errors, answered in the error envelope of SPEC.md, each with its status and code. */
export const GATEWAY_RESPONSES: readonly GatewayErrorResponse[] = [
  // A path or method with no resource: an unknown route, not an authentication problem.
  { type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN, statusCode: '404', code: 'NOT_FOUND', error: 'Route not found' },
  { type: apigateway.ResponseType.RESOURCE_NOT_FOUND, statusCode: '404', code: 'NOT_FOUND', error: 'Route not found' },
  // Credentials refused by the gateway itself (an authorizer, a usage-plan key, a signature).
  { type: apigateway.ResponseType.UNAUTHORIZED, statusCode: '401', code: 'AUTHENTICATION_FAILED', error: 'Authentication is required' },
  { type: apigateway.ResponseType.INVALID_API_KEY, statusCode: '403', code: 'FORBIDDEN', error: 'Access to this resource is denied' },
  { type: apigateway.ResponseType.INVALID_SIGNATURE, statusCode: '403', code: 'FORBIDDEN', error: 'Access to this resource is denied' },
  { type: apigateway.ResponseType.EXPIRED_TOKEN, statusCode: '403', code: 'FORBIDDEN', error: 'Access to this resource is denied' },
  { type: apigateway.ResponseType.ACCESS_DENIED, statusCode: '403', code: 'FORBIDDEN', error: 'Access to this resource is denied' },
  { type: apigateway.ResponseType.WAF_FILTERED, statusCode: '403', code: 'FORBIDDEN', error: 'The request was blocked' },
  // Over API Gateway's 10 MB payload limit (smaller bodies too large for Lambda: the WAF rule of
  // infra/aws/body-limit.ts, or INTEGRATION_FAILURE below).
  { type: apigateway.ResponseType.REQUEST_TOO_LARGE, statusCode: '413', code: 'PAYLOAD_TOO_LARGE', error: BODY_TOO_LARGE_MESSAGE },
  { type: apigateway.ResponseType.THROTTLED, statusCode: '429', code: 'RATE_LIMIT_EXCEEDED', error: 'Too many requests', headers: { 'Retry-After': "'1'" } },
  { type: apigateway.ResponseType.QUOTA_EXCEEDED, statusCode: '429', code: 'RATE_LIMIT_EXCEEDED', error: 'Too many requests', headers: { 'Retry-After': "'60'" } },
  { type: apigateway.ResponseType.INTEGRATION_TIMEOUT, statusCode: '504', code: 'GATEWAY_TIMEOUT', error: 'The request took longer than 29 seconds' },
  // The function could not be invoked or gave no valid answer: a bad gateway, not a timeout (504 is API Gateway's default).
  { type: apigateway.ResponseType.INTEGRATION_FAILURE, statusCode: '502', code: 'BAD_GATEWAY', error: INTEGRATION_FAILURE_MESSAGE },
  // 500, 502, 503...: the status stays, the text never leaks internals.
  { type: apigateway.ResponseType.DEFAULT_5XX, code: 'INTERNAL_ERROR', error: 'Internal server error' },
  // API Gateway's message is safe and says what is wrong ("Invalid request body", ...).
  { type: apigateway.ResponseType.DEFAULT_4XX, code: 'INVALID_REQUEST', error: fromGateway },
];

/**
 * CORS on API Gateway's own responses, so that a browser app sees the error rather than a CORS
 * failure. The gateway cannot check ALLOWED_ORIGINS, so it names the request's Origin: these
 * responses carry only the fixed envelope and the request id, nothing any page may not read.
 */
export const GATEWAY_CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': 'method.request.header.Origin',
  'Access-Control-Allow-Credentials': "'true'",
  'Access-Control-Expose-Headers': "'X-Request-ID, Retry-After'",
  Vary: "'Origin'",
};

export function addGatewayResponses(api: apigateway.RestApi): void {
  for (const response of GATEWAY_RESPONSES) {
    api.addGatewayResponse(response.type.responseType, {
      type: response.type,
      statusCode: response.statusCode,
      responseHeaders: {
        'Content-Type': "'application/json'",
        'X-Request-ID': 'context.requestId',
        ...GATEWAY_CORS_HEADERS,
        ...response.headers,
      },
      templates: { 'application/json': envelopeTemplate(response) },
    });
  }
}

export interface EntityRestApiProps {
  routes: readonly Route[];
  functionFor: (family: string) => lambda.IFunction;
  stageName?: string;
  throttling?: { rateLimit: number; burstLimit: number };
  /**
   * JSON access logs of the stage in their own log group. API Gateway writes them with the
   * account's CloudWatch role (one per account and region): set `cloudWatchRole` to create it
   * when the account has none.
   */
  accessLogs?: boolean;
  /**
   * API Gateway's execution logs of every method at this level (never with request and response
   * bodies: they hold credentials and records); the same account role as access logs.
   */
  executionLogs?: ExecutionLogLevel;
  cloudWatchRole?: boolean;
}

export type ExecutionLogLevel = 'ERROR' | 'INFO';

/** One JSON line per request: who, what, how it ended and how long it took. */
export const ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  method: '$context.httpMethod',
  resource: '$context.resourcePath',
  path: '$context.path',
  status: '$context.status',
  error: '$context.error.responseType',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integration.latency',
  integrationStatus: '$context.integration.status',
  responseBytes: '$context.responseLength',
  requestTime: '$context.requestTimeEpoch',
  wafResponse: '$context.waf.status',
};

export function createRestApi(scope: Construct, id: string, props: EntityRestApiProps): apigateway.RestApi {
  const paths = apiPaths(props.routes);
  const throttling = props.throttling ?? { rateLimit: 500, burstLimit: 1000 };
  const stageName = props.stageName ?? 'prod';
  const api = new apigateway.RestApi(scope, id, {
    restApiName: 'entity-record-api',
    description: 'Entity Record API',
    endpointTypes: [apigateway.EndpointType.REGIONAL],
    binaryMediaTypes: [...BINARY_MEDIA_TYPES],
    // gzip for clients that accept it (the dashboard's files, large pages of records).
    minCompressionSize: Size.bytes(MIN_COMPRESSION_BYTES),
    cloudWatchRole: props.cloudWatchRole ?? false,
    deployOptions: {
      stageName,
      ...(props.accessLogs
        ? {
            accessLogDestination: new apigateway.LogGroupLogDestination(
              new logs.LogGroup(scope, `${id}AccessLogs`, { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY }),
            ),
            accessLogFormat: apigateway.AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
          }
        : {}),
      ...(props.executionLogs
        ? { loggingLevel: apigateway.MethodLoggingLevel[props.executionLogs], dataTraceEnabled: false }
        : {}),
      tracingEnabled: true,
      metricsEnabled: true,
      throttlingRateLimit: throttling.rateLimit,
      throttlingBurstLimit: throttling.burstLimit,
    },
  });

  // One integration per family, whose single resource-policy statement covers every method of
  // the API: per-method permissions would outgrow Lambda's 20 KB policy limit on big families.
  const integrations = new Map<string, apigateway.LambdaIntegration>();
  const integrationFor = (family: string): apigateway.LambdaIntegration => {
    let integration = integrations.get(family);
    if (!integration) {
      // A streaming family's function answers only streamed invocations: every method on it streams.
      const streamed = (STREAMING_FAMILIES as readonly string[]).includes(family);
      integration = new apigateway.LambdaIntegration(props.functionFor(family), {
        proxy: true,
        scopePermissionToMethod: false,
        ...(streamed ? { responseTransferMode: apigateway.ResponseTransferMode.STREAM, timeout: Duration.seconds(STREAMING_TIMEOUT_SECONDS) } : {}),
      });
      integrations.set(family, integration);
    }
    return integration;
  };

  for (const { path, routes, anyFamily } of paths) {
    let resource: apigateway.IResource = api.root;
    for (const segment of segmentsOf(path)) resource = resource.getResource(segment) ?? resource.addResource(segment);
    for (const route of routes) resource.addMethod(route.method, integrationFor(route.family));
    resource.addMethod('ANY', integrationFor(anyFamily));
  }

  if (props.executionLogs) {
    // API Gateway would create this group itself, kept forever; created here, it expires. The
    // stage waits for it, so no request can make API Gateway create it first.
    const executionLogs = new logs.LogGroup(scope, `${id}ExecutionLogs`, {
      logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${stageName}`,
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    api.deploymentStage.node.addDependency(executionLogs);
  }

  addGatewayResponses(api);
  // The stack outputs the URL once, as ApiUrl; drop RestApi's own unnamed duplicate.
  api.node.tryRemoveChild('Endpoint');
  return api;
}
