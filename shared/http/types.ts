/**
 * The values the middleware stack hands to an operation, and what an operation returns.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { AuthContext } from '../caller.js';
import type { Pagination } from '../pagination.js';
import type { Route } from '../routes.js';

export type { AuthContext, AuthUser, CallOrigin, Role } from '../caller.js';
export type { Pagination } from '../pagination.js';

export interface ApiRequest {
  method: string;
  /** The concrete path, e.g. /api/v1/tasks/tsk_1: the API's own, without a stage or base path. */
  path: string;
  /** What precedes `path` in the client's URL ('' locally, '/prod' on API Gateway's default URL); see urls.ts. */
  basePath?: string;
  /** scheme://host the client used. */
  origin?: string;
  route: Route;
  params: Record<string, string>;
  /** Last value of each query parameter. */
  query: Record<string, string>;
  /** Every value of each query parameter. */
  multiQuery: Record<string, string[]>;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  cookies: Record<string, string>;
  /** The parsed JSON body (undefined when there is none). */
  body: unknown;
  /** The body's bytes, for signatures and multipart. */
  rawBody?: Buffer;
  requestId: string;
  ip: string;
  userAgent: string;
  /** Set by the authenticate middleware; undefined for anonymous callers. */
  auth?: AuthContext;
  /** Headers every response to this request carries (rate limit, deprecation, ...). */
  responseHeaders: Record<string, string>;
  /** Set-Cookie values to send. */
  responseCookies: string[];
}

/** What an operation returns; the envelope middleware turns it into the HTTP response. */
export interface Reply {
  status?: number;
  data?: unknown;
  pagination?: Pagination;
  message?: string;
  warning?: string;
  headers?: Record<string, string>;
  /** A body sent as is, outside the envelope (health, inbound webhook receipts). */
  raw?: unknown;
  /** A text body sent as is, with the Content-Type of `headers` (the docs page and its assets). */
  text?: string;
  /** A streamed body (text/event-stream); only for streaming handlers. */
  stream?: NodeJS.ReadableStream;
}

/** `context` is the Lambda context (remaining time), for operations that outlive a reply (streams). */
export type Operation = (req: ApiRequest, context?: ApiLambdaContext) => Promise<Reply>;

export interface ApiLambdaContext extends Context {
  api?: ApiRequest;
}

export type ApiEvent = APIGatewayProxyEvent;
