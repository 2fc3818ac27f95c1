/**
 * The shape of a route-table entry (types only): what shared/core-routes.ts declares and the plugin
 * declarations (shared/plugins/) turn their routes into. Kept apart from the declarations so that
 * the plugins area takes the shape without the core routes and what they import.
 */
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

export interface Route {
  method: HttpMethod;
  path: string;
  family: Family;
  auth: AuthMode;
  /** Scope the caller needs; `{entity}` is replaced by the path's entity parameter. */
  scope?: string;
  /** A limit of the route's own, counted besides the caller's general limit. */
  rateLimit?: RouteRateLimit;
  /** The operation reads req.rawBody itself (multipart, signed webhooks): no JSON parsing. */
  rawBody?: boolean;
  /** The operation also takes a text/csv body (imports): the JSON parser lets it through. */
  csvBody?: boolean;
  /** The plugin that declares the route (plugins family). */
  plugin?: string;
  /**
   * The codes of shared/errors.ts' catalogue the operation itself may answer. What the stack
   * answers by the route's properties (401/403 by its auth, 429 where counted, 413 where it takes a
   * body, 503/504 where it reaches the database) comes on top (shared/openapi/document.ts).
   */
  errors?: readonly ErrorCode[];
  /** One line for the API description. */
  summary?: string;
  /** JSON Schema of the JSON request body: the very schema the body is validated with, where one is. */
  body?: JsonSchema;
  /** The query parameters the operation reads, each with its JSON Schema. */
  query?: readonly QueryParameter[];
  /** The component (shared/openapi/components.ts) the answer's `data` is, or holds a list of. */
  response?: string;
}

/** A JSON Schema (draft 2020-12, as ajv and OpenAPI 3.1 read it). */
export type JsonSchema = Record<string, unknown>;

export interface QueryParameter {
  name: string;
  description: string;
  schema: JsonSchema;
  required?: boolean;
  example?: unknown;
}
