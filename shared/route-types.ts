/**
 * The shape of a route declaration and of a route-table entry (types only): what the families'
 * declarations (shared/route-declarations/) and the plugin declarations (shared/plugins/) turn
 * their routes into. Kept apart from the declarations so that the plugins area takes the shape
 * without the core routes and what they import.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ErrorCode } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'OPTIONS';

/**
 * public   – no credentials needed (credentials are ignored); limited per client IP.
 * optional – credentials used when present; the operation decides (public entities).
 * required – a session or an API key.
 * session  – a session only; an API key alone gets 403.
 */
export type AuthMode = 'public' | 'optional' | 'required' | 'session';

export type Family = 'health' | 'auth' | 'keys' | 'entities' | 'batch' | 'import' | 'graphql' | 'plugins' | 'upload' | 'docs' | 'stream' | 'webhooks' | 'dashboard' | 'migrations';

export interface RouteRateLimit {
  /** Names the counter, so that routes can share one. */
  name: string;
  limit: number;
  windowSeconds: number;
}

/** A route as its family declares it (shared/route-declarations/<family>.ts). */
export interface RouteDeclaration {
  method: HttpMethod;
  path: string;
  /**
   * The family's operation that serves the route: a key of the family's operations map, which the
   * compiler checks against the family's declarations (FamilyOperations, shared/http/types.ts).
   * One name a route within its family; the API description's operationId unless it says another.
   */
  operation: string;
  auth: AuthMode;
  /** Scope the caller needs; `{entity}` is replaced by the path's entity parameter. */
  scope?: string;
  /** A limit of the route's own, counted besides the caller's general limit. */
  rateLimit?: RouteRateLimit;
  /** The operation reads req.rawBody itself (multipart, signed webhooks): no JSON parsing. */
  rawBody?: boolean;
  /** The operation also takes a text/csv body (imports): the JSON parser lets it through. */
  csvBody?: boolean;
  /**
   * The codes of shared/errors.ts' catalogue the operation itself may answer. What the stack
   * answers by the route's properties (401/403 by its auth, 429 where counted, 413 where it takes a
   * body, 503/504 where it reaches the database) comes on top (shared/openapi/document.ts).
   */
  errors?: readonly ErrorCode[];
  /** One line for the API description. */
  summary?: string;
  /**
   * JSON Schema of the JSON request body: the very schema the body is validated with, where one
   * is. Where the stack validates it (BodyOf), the operation's `req.body` has the schema's type.
   */
  body?: JsonSchema;
  /** The query parameters the operation reads, each with its JSON Schema. */
  query?: readonly QueryParameter[];
  /** The component (shared/openapi/components.ts) the answer's `data` is, or holds a list of. */
  response?: string;
}

/** A route-table entry: a declaration and the family that serves it. */
export interface Route extends RouteDeclaration {
  family: Family;
  /** The plugin that declares the route (plugins family). */
  plugin?: string;
}

/** A JSON Schema (draft 2020-12, as ajv and OpenAPI 3.1 read it). */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface QueryParameter {
  name: string;
  description: string;
  schema: JsonSchema;
  required?: boolean;
  example?: unknown;
}

/**
 * The type of a body the stack has checked against `schema` (shared/http/validate-body.ts): the
 * schema's defaults are not filled in, so a property with a default stays optional.
 */
export type CheckedBody<S> = S extends JSONSchema ? FromSchema<S, { keepDefaultedPropertiesOptional: true }> : unknown;

/** One response of an operation in the API description. */
export interface ResponseDoc {
  description: string;
  /** The body's schema; none for an empty body. */
  schema?: JsonSchema;
  /** application/json unless said otherwise; several media types share the schema. */
  contentType?: string | readonly string[];
  /** Names of components.headers the response carries (besides X-Request-ID and the rate-limit headers). */
  headers?: readonly string[];
  example?: unknown;
}

/**
 * What a route's declaration says of it in the API description beyond its other properties (the
 * summary, the body's schema and the query parameters come from those).
 */
export interface RouteDocSpec {
  tag: string;
  /** Default: the route's operation name. */
  operationId?: string;
  summary?: string;
  description?: string;
  /** Parameter objects or $refs (path parameters are added from the path when missing). */
  parameters?: readonly JsonSchema[];
  requestBody?: { schema?: JsonSchema; contentType?: string; example?: unknown; required?: boolean };
  responses: Readonly<Record<number, ResponseDoc>>;
  /** Error statuses beyond those of the route's declared codes and properties (shared/openapi/document.ts errorStatuses). */
  errors: readonly number[];
}

/** What the API description hands a route's description (shared/openapi/system.ts routeDocTools). */
export interface RouteDocTools {
  /** `#/components/schemas/<name>`. */
  ref(name: string): JsonSchema;
  /** The success envelope around `data`. */
  envelopeOf(data: JsonSchema, extra?: { pagination?: boolean; message?: boolean; warning?: boolean }): JsonSchema;
  /** A JSON response. */
  json(schema: JsonSchema, description: string, extra?: Partial<ResponseDoc>): ResponseDoc;
  /** `{success, message}`. */
  message(description: string): ResponseDoc;
  /** The entity a route with `{entity}` in its path is described for: its schemas' names and a create body. */
  entity?: { record: string; create: string; createExample: Record<string, unknown> };
}

/** A route's API description, built when the document is. */
export type RouteDoc = (tools: RouteDocTools) => RouteDocSpec;

/**
 * The API descriptions of a family's routes `R`, by operation name: the compiler refuses one for
 * an operation the family does not declare. A route without one is described generically.
 */
export type RouteDocs<R extends { operation: string }> = { readonly [K in R['operation']]?: RouteDoc };
