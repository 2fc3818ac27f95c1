/**
 * The shape every part of the generator describes an operation in, before document.ts adds what
 * comes from the route itself (security and scopes, the error responses of its auth mode, the
 * rate-limit headers).
 */
import type { Schema } from './components.js';

export interface ResponseSpec {
  description: string;
  /** The body's schema; none for an empty body. */
  schema?: Schema;
  /** application/json unless said otherwise; several media types share the schema. */
  contentType?: string | readonly string[];
  /** Names of components.headers the response carries (besides X-Request-ID and the rate-limit headers). */
  headers?: string[];
  example?: unknown;
}

export interface OperationSpec {
  tag: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Parameter objects or $refs (path parameters are added from the path when missing). */
  parameters?: Schema[];
  requestBody?: { schema: Schema; contentType?: string; example?: unknown; required?: boolean };
  responses: Record<number, ResponseSpec>;
  /** Error statuses beyond those of the route's declared codes and properties (shared/openapi/document.ts errorStatuses). */
  errors: number[];
}

/**
 * What a description table entry (system.ts) says of a route beyond its declaration: the summary,
 * the body's schema and the query parameters come from the declaration (shared/core-routes.ts).
 */
export type SystemSpec = Omit<OperationSpec, 'summary' | 'requestBody'> & {
  summary?: string;
  requestBody?: { schema?: Schema; contentType?: string; example?: unknown; required?: boolean };
};
