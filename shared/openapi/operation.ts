/**
 * The shape every part of the generator describes an operation in, before document.ts adds what
 * comes from the route itself (security and scopes, the error responses of its auth mode, the
 * rate-limit headers). A core route's own description (beside its declaration) is a RouteDocSpec.
 */
import type { ResponseDoc, RouteDocSpec } from '../route-types.js';
import type { Schema } from './components.js';

export type ResponseSpec = ResponseDoc;

export interface OperationSpec {
  tag: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Parameter objects or $refs (path parameters are added from the path when missing). */
  parameters?: readonly Schema[];
  requestBody?: { schema: Schema; contentType?: string; example?: unknown; required?: boolean };
  responses: Readonly<Record<number, ResponseSpec>>;
  /** Error statuses beyond those of the route's declared codes and properties (shared/openapi/document.ts errorStatuses). */
  errors: readonly number[];
}

export type { RouteDocSpec };
