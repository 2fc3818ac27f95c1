/**
 * The values the middleware stack hands to an operation, and what an operation returns.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { AuthContext } from '../caller.js';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Pagination } from '../pagination.js';
import type { PluginDefinition } from '../plugins/index.js';
import type { CoreDeclarations } from '../route-declarations/index.js';
import type { CheckedBody, Route } from '../route-types.js';
import type { VALIDATED_FAMILIES } from './bodies/generate.js';

export type { AuthContext, AuthUser, CallOrigin, Role } from '../caller.js';
export type { Pagination } from '../pagination.js';

/** `B`: the type of the body, where the stack has checked it against the route's schema (BodyOf). */
export interface ApiRequest<B = unknown> {
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
  body: B;
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
  /** An offset list's Pagination, or a cursor-only list's (a record's revisions: no total). */
  pagination?: Pagination | { limit: number; hasNext: boolean; nextCursor: string | null };
  message?: string;
  warning?: string;
  /** The envelope's `meta` (an aggregate's groups and source). */
  meta?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** A body sent as is, outside the envelope (health, inbound webhook receipts). */
  raw?: unknown;
  /** A text body sent as is, with the Content-Type of `headers` (the docs page and its assets). */
  text?: string;
  /** A streamed body (text/event-stream); only for streaming handlers. */
  stream?: NodeJS.ReadableStream;
}

/** `context` is the Lambda context (remaining time), for operations that outlive a reply (streams). */
export type Operation<B = unknown> = (req: ApiRequest<B>, context?: ApiLambdaContext) => Promise<Reply>;

/** The families whose declared bodies the middleware stack checks (shared/http/validate-body.ts). */
type StackCheckedFamily = (typeof VALIDATED_FAMILIES)[number];

/**
 * What an operation's `req.body` is: the declared schema's type where the stack checks the body
 * before the operation runs, else unknown (the auth services, the import and the entity services
 * check theirs, GraphQL and the batch their own).
 */
export type BodyOf<R> = R extends { family: StackCheckedFamily; body: infer S } ? CheckedBody<S> : unknown;

/** The operations of routes `R`: one a route, by its operation's name, typed for its body. */
export type OperationsOf<R extends { operation: string }> = { readonly [D in R as D['operation']]: Operation<BodyOf<D>> };

/**
 * A core family's operations map: the compiler checks its keys against the family's declarations
 * (shared/route-declarations/<family>.ts), so a missing or an extra operation does not compile.
 */
export type FamilyOperations<F extends keyof CoreDeclarations> = OperationsOf<CoreDeclarations[F][number]>;

/**
 * The operations as the stack holds them, by name. A method signature, so that an operation
 * typed for its route's body fits: the stack has checked the body against that route's schema
 * before it calls one.
 */
type StoredOperation = { run(req: ApiRequest, context?: ApiLambdaContext): Promise<Reply> }['run'];
export type Operations = Readonly<Record<string, StoredOperation>>;

export interface ApiLambdaContext extends Context {
  api?: ApiRequest;
}

export type ApiEvent = APIGatewayProxyEvent;

/** The body a plugin handler receives: checked against its route's schema, the defaults filled in. */
type PluginBody<R> = R extends { body: infer S } ? (S extends JSONSchema ? FromSchema<S> : unknown) : unknown;

/**
 * The handlers a plugin declaration names, each typed for its route's body: a handlers module
 * exports them as one checked map, so a missing or an extra handler does not compile:
 *
 *   export const { greet, hello }: PluginHandlers<typeof greetings> = { greet: async (req) => ..., hello: async () => ... };
 */
export type PluginHandlers<D extends PluginDefinition> = { readonly [R in D['routes'][number] as R['handler']]: Operation<PluginBody<R>> };
