/**
 * The API's own routes (all but the plugins'), the types of the route table, and the lookup a
 * middleware stack resolves a request's route with. No imports but a type: a function whose routes are all
 * core (every family but plugins) resolves its requests here, and its cold start never loads the
 * plugin declarations that shared/routes.ts adds to these to make THE route table.
 *
 * Path templates use API Gateway's {param} syntax. Static segments win over parameters, so the
 * core paths (users, api-keys, keys, auth, ...) resolve before {entity}, as SPEC.md orders them.
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

/**
 * Families whose Lambda streams its response (awslambda.streamifyResponse): API Gateway invokes
 * them with responseTransferMode STREAM, and they may run up to the streaming limit.
 */
export const STREAMING_FAMILIES: readonly Family[] = ['stream'];
/** Function timeout of a streaming family: API Gateway's 15-minute streaming limit. */
export const STREAMING_TIMEOUT_SECONDS = 900;

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
}

const V1 = '/api/v1';

/** Codes that go together: a JSON body, a listing query, an import, a GraphQL request, a multipart upload. */
const BODY: readonly ErrorCode[] = ['INVALID_REQUEST', 'VALIDATION_FAILED'];
const LIST: readonly ErrorCode[] = ['INVALID_REQUEST', 'INVALID_FILTER', 'INVALID_SORT'];
const IMPORT: readonly ErrorCode[] = [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED', 'UNIQUE_VIOLATION', 'IMPORT_INCOMPLETE'];
const GRAPHQL: readonly ErrorCode[] = ['BAD_REQUEST', 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'QUERY_TOO_DEEP', 'QUERY_TOO_COMPLEX'];
const MULTIPART: readonly ErrorCode[] = ['INVALID_REQUEST', 'NO_FILE', 'EMPTY_FILE', 'FILE_TOO_LARGE', 'TOO_MANY_FILES', 'FILE_TYPE_NOT_ALLOWED'];

/**
 * The routes before the plugins' in THE route table (shared/routes.ts), then those after them:
 * plugin routes go after GraphQL, before the uploads. The order is the API description's (and the
 * typed client's).
 */
export const beforePlugins: readonly Route[] = [
  { method: 'GET', path: '/api/health', family: 'health', auth: 'public', errors: [] },

  { method: 'POST', path: `${V1}/auth/login`, family: 'auth', auth: 'public', errors: [...BODY, 'AUTHENTICATION_FAILED'] },
  { method: 'POST', path: `${V1}/auth/logout`, family: 'auth', auth: 'session' },
  { method: 'POST', path: `${V1}/auth/refresh`, family: 'auth', auth: 'session' },
  { method: 'POST', path: `${V1}/auth`, family: 'auth', auth: 'session' },
  { method: 'GET', path: `${V1}/users/me`, family: 'auth', auth: 'required' },
  // A change to the caller's own user: read-only keys may not (a session has write; keys need `write` or `*`).
  { method: 'PATCH', path: `${V1}/users/me`, family: 'auth', auth: 'required', scope: 'write', errors: [...BODY] },
  { method: 'GET', path: `${V1}/users`, family: 'auth', auth: 'required', errors: ['FORBIDDEN'] },
  { method: 'POST', path: `${V1}/users`, family: 'auth', auth: 'required', errors: [...BODY, 'FORBIDDEN', 'CONFLICT'] },
  { method: 'GET', path: `${V1}/users/{id}`, family: 'auth', auth: 'required', errors: ['FORBIDDEN', 'NOT_FOUND'] },
  { method: 'PATCH', path: `${V1}/users/{id}`, family: 'auth', auth: 'required', errors: [...BODY, 'FORBIDDEN', 'NOT_FOUND'] },
  { method: 'DELETE', path: `${V1}/users/{id}`, family: 'auth', auth: 'required', errors: ['FORBIDDEN', 'NOT_FOUND'] },
  { method: 'GET', path: `${V1}/tenants/me`, family: 'auth', auth: 'required' },
  { method: 'PATCH', path: `${V1}/tenants/me`, family: 'auth', auth: 'required', errors: [...BODY, 'FORBIDDEN'] },
  { method: 'POST', path: `${V1}/tenants`, family: 'auth', auth: 'session', errors: [...BODY, 'FORBIDDEN', 'CONFLICT'] },
  // Each entity's layout and migration state (platform operator only).
  { method: 'GET', path: `${V1}/migrations`, family: 'migrations', auth: 'session', errors: ['FORBIDDEN'] },

  // API key management: session only; a key alone gets 403.
  { method: 'GET', path: `${V1}/keys`, family: 'keys', auth: 'session', errors: ['INVALID_REQUEST', 'FORBIDDEN'] },
  { method: 'POST', path: `${V1}/keys`, family: 'keys', auth: 'session', errors: [...BODY] },
  { method: 'DELETE', path: `${V1}/keys/{keyId}`, family: 'keys', auth: 'session', errors: ['NOT_FOUND'] },
  { method: 'GET', path: `${V1}/api-keys`, family: 'keys', auth: 'session', errors: ['INVALID_REQUEST', 'FORBIDDEN'] },
  { method: 'POST', path: `${V1}/api-keys`, family: 'keys', auth: 'session', errors: [...BODY] },
  { method: 'GET', path: `${V1}/api-keys/{id}`, family: 'keys', auth: 'session', errors: ['NOT_FOUND'] },
  { method: 'PATCH', path: `${V1}/api-keys/{id}`, family: 'keys', auth: 'session', errors: [...BODY, 'NOT_FOUND'] },
  { method: 'DELETE', path: `${V1}/api-keys/{id}`, family: 'keys', auth: 'session', errors: ['NOT_FOUND'] },
  { method: 'GET', path: `${V1}/api-keys/{id}/audit`, family: 'keys', auth: 'session', errors: ['INVALID_REQUEST', 'NOT_FOUND'] },

  // Batch: the outer request needs a caller; each sub-request needs its own scope.
  { method: 'POST', path: `${V1}/batch`, family: 'batch', auth: 'required', errors: [...BODY] },

  // Bulk import: the static tasks variant wins over the template (static beats {param}).
  { method: 'POST', path: `${V1}/import/tasks`, family: 'import', auth: 'required', scope: 'tasks:write', csvBody: true, errors: [...IMPORT] },
  { method: 'POST', path: `${V1}/import/{entity}`, family: 'import', auth: 'required', scope: '{entity}:write', csvBody: true, errors: [...IMPORT] },

  // GraphQL: each operation checks its own entity scope (shared/graphql/schema.ts).
  { method: 'POST', path: `${V1}/graphql`, family: 'graphql', auth: 'required', errors: [...GRAPHQL] },
  { method: 'GET', path: `${V1}/graphql`, family: 'graphql', auth: 'required', errors: [...GRAPHQL, 'METHOD_NOT_ALLOWED'] },
];

export const afterPlugins: readonly Route[] = [
  // Uploads: multipart within the Lambda limit, presigned POST up to 10 MiB, files private to their uploader.
  { method: 'POST', path: `${V1}/upload`, family: 'upload', auth: 'required', scope: 'uploads:write', rawBody: true, errors: [...MULTIPART] },
  { method: 'POST', path: `${V1}/upload/multiple`, family: 'upload', auth: 'required', scope: 'uploads:write', rawBody: true, errors: [...MULTIPART] },
  { method: 'POST', path: `${V1}/upload/presign`, family: 'upload', auth: 'required', scope: 'uploads:write', errors: [...BODY, 'FILE_TOO_LARGE', 'FILE_TYPE_NOT_ALLOWED'] },
  { method: 'POST', path: `${V1}/upload/complete`, family: 'upload', auth: 'required', scope: 'uploads:write', errors: [...BODY, 'NOT_FOUND', 'EMPTY_FILE', 'FILE_TOO_LARGE', 'FILE_TYPE_NOT_ALLOWED'] },
  { method: 'GET', path: `${V1}/uploads`, family: 'upload', auth: 'required', scope: 'uploads:read', errors: ['INVALID_REQUEST'] },
  { method: 'DELETE', path: `${V1}/uploads/{id}`, family: 'upload', auth: 'required', scope: 'uploads:delete', errors: ['NOT_FOUND'] },
  { method: 'GET', path: `${V1}/files/{id}`, family: 'upload', auth: 'required', scope: 'uploads:read', errors: ['NOT_FOUND'] },
  // The OpenAPI document and its reference page (shared/openapi): public, never rate-limited.
  { method: 'GET', path: `${V1}/openapi.json`, family: 'docs', auth: 'public' },
  { method: 'GET', path: '/api/docs', family: 'docs', auth: 'public' },
  { method: 'GET', path: '/api/docs/{asset}', family: 'docs', auth: 'public', errors: ['NOT_FOUND'] },
  // The web console (functions/dashboard): static files, public and never rate-limited.
  { method: 'GET', path: '/dashboard', family: 'dashboard', auth: 'public' },
  { method: 'GET', path: '/dashboard/{asset}', family: 'dashboard', auth: 'public', errors: ['NOT_FOUND'] },
  // The SSE stream: a streamed response (STREAMING_FAMILIES); the static tasks path wins over the template.
  { method: 'GET', path: `${V1}/stream/tasks`, family: 'stream', auth: 'required', scope: 'tasks:read', errors: ['INVALID_REQUEST', 'TOO_MANY_STREAMS'] },
  { method: 'GET', path: `${V1}/stream/{entity}`, family: 'stream', auth: 'required', scope: '{entity}:read', errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'TOO_MANY_STREAMS'] },
  // Webhooks: registrations, delivery log, replay, test ping; POST /webhooks/{id} is the inbound
  // receiver of a provider (API Gateway allows one parameter name per level, hence {id}).
  { method: 'POST', path: `${V1}/webhooks`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: [...BODY, 'LIMIT_EXCEEDED'] },
  { method: 'GET', path: `${V1}/webhooks`, family: 'webhooks', auth: 'required', scope: 'webhooks:read' },
  { method: 'GET', path: `${V1}/webhooks/{id}`, family: 'webhooks', auth: 'required', scope: 'webhooks:read', errors: ['NOT_FOUND'] },
  { method: 'PATCH', path: `${V1}/webhooks/{id}`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: [...BODY, 'NOT_FOUND'] },
  { method: 'DELETE', path: `${V1}/webhooks/{id}`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: ['NOT_FOUND'] },
  { method: 'POST', path: `${V1}/webhooks/{id}`, family: 'webhooks', auth: 'public', rawBody: true, errors: ['INVALID_REQUEST', 'INVALID_SIGNATURE', 'NOT_FOUND'] },
  { method: 'GET', path: `${V1}/webhooks/{id}/deliveries`, family: 'webhooks', auth: 'required', scope: 'webhooks:read', errors: ['INVALID_REQUEST', 'NOT_FOUND'] },
  { method: 'POST', path: `${V1}/webhooks/{id}/deliveries/{deliveryId}/retry`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: ['NOT_FOUND'] },
  { method: 'POST', path: `${V1}/webhooks/{id}/test`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: ['NOT_FOUND'] },

  // The API's index: the entities the caller may use, with their paths and links (shared/entities/api-index.ts).
  { method: 'GET', path: V1, family: 'entities', auth: 'optional' },
  // Registered entities: after every static path above, as SPEC.md orders them.
  // Reads are 'optional' so that public entities answer anonymous callers (the entities family
  // decides: functions/entities/handler.ts passes isPublicRead / scopeApplies); writes need a caller.
  { method: 'GET', path: `${V1}/{entity}`, family: 'entities', auth: 'optional', scope: '{entity}:read', errors: [...LIST, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'] },
  { method: 'POST', path: `${V1}/{entity}`, family: 'entities', auth: 'required', scope: '{entity}:write', errors: [...BODY, 'UNIQUE_VIOLATION', 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'] },
  { method: 'OPTIONS', path: `${V1}/{entity}`, family: 'entities', auth: 'optional', errors: ['ENTITY_NOT_FOUND'] },
  // Bulk update and delete: shared/entities/bulk.ts.
  { method: 'PATCH', path: `${V1}/{entity}`, family: 'entities', auth: 'required', scope: '{entity}:write', errors: [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'] },
  { method: 'DELETE', path: `${V1}/{entity}`, family: 'entities', auth: 'required', scope: '{entity}:delete', errors: [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'] },
  { method: 'GET', path: `${V1}/{entity}/{id}`, family: 'entities', auth: 'optional', scope: '{entity}:read', errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'] },
  { method: 'PATCH', path: `${V1}/{entity}/{id}`, family: 'entities', auth: 'required', scope: '{entity}:write', errors: [...BODY, 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT', 'UNIQUE_VIOLATION', 'PRECONDITION_FAILED'] },
  { method: 'DELETE', path: `${V1}/{entity}/{id}`, family: 'entities', auth: 'required', scope: '{entity}:delete', errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT', 'PRECONDITION_FAILED'] },
  // Child collections: the parent needs read; the child's own scopes are checked by the family.
  { method: 'GET', path: `${V1}/{entity}/{id}/{child}`, family: 'entities', auth: 'optional', scope: '{entity}:read', errors: [...LIST, 'ENTITY_NOT_FOUND', 'NOT_FOUND'] },
  { method: 'POST', path: `${V1}/{entity}/{id}/{child}`, family: 'entities', auth: 'required', scope: '{entity}:read', errors: [...BODY, 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'UNIQUE_VIOLATION'] },
];

/** Every route but the plugins', in route-table order. */
export const coreRoutes: readonly Route[] = [...beforePlugins, ...afterPlugins];

export function routeKey(method: string, path: string): string {
  return `${method} ${path}`;
}

/** Routes and the route behind an API Gateway event's httpMethod + resource. */
export interface RouteLookup {
  readonly routes: readonly Route[];
  findRoute(method: string, resource: string): Route | undefined;
}

/**
 * The lookup of `routes`. Paths without an OPTIONS route still answer CORS preflights: the
 * request goes to the family of the path's first route, and the cors middleware answers it
 * before authentication.
 */
export function routeLookup(routes: readonly Route[]): RouteLookup {
  const byKey = new Map(routes.map((r) => [routeKey(r.method, r.path), r]));
  return {
    routes,
    findRoute(method, resource) {
      return byKey.get(routeKey(method, resource)) ?? (method === 'OPTIONS' ? preflightRoute(routes, resource) : undefined);
    },
  };
}

/** The preflight (OPTIONS) route of `path`: public, served by the family of the path's first route. */
export function preflightRoute(routes: readonly Route[], path: string): Route | undefined {
  const first = routes.find((r) => r.path === path);
  return first && { method: 'OPTIONS', path, family: first.family, auth: 'public' };
}

/** The core routes' lookup: what the middleware stack uses unless a family serves plugin routes. */
export const coreRouteLookup: RouteLookup = routeLookup(coreRoutes);
