/**
 * The OpenAPI 3.1 document, built from the sources that build the API so that it cannot drift:
 * THE route table (shared/routes.ts), each core route's description beside its declaration
 * (shared/route-declarations/), and the entity registry. Every route of the table appears — one the generator knows nothing about is described
 * generically, with the JSON Schemas a route may carry (`requestSchema`, `responseSchema`) — and
 * every registered entity expands the `{entity}` routes into paths of its own. Pure and
 * deterministic: the same sources give the same document, byte for byte.
 */
import { catalogueEntry } from '../errors.js';
import type { LoadedEntity } from '../registry/index.js';
import { isCountedFamily, routeKey, type Route } from '../routes.js';
import { coreRouteDocs } from '../route-declarations/index.js';
import type { RouteDoc, RouteDocSpec } from '../route-types.js';
import {
  COMMON_SCHEMAS,
  ERROR_STATUSES,
  HEADERS,
  RATE_LIMIT_HEADERS,
  SECURITY_SCHEMES,
  envelopeOf,
  ref,
  type Schema,
} from './components.js';
import { COMMON_PARAMETERS, entityOperations, entitySchemas, pascalCase } from './entities.js';
import type { OperationSpec, ResponseSpec } from './operation.js';
import { routeDocTools, SYSTEM_SCHEMAS } from './system.js';
import { webhookEntries } from './webhooks.js';

export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  paths: Record<string, Record<string, Schema>>;
  components: Record<string, Record<string, Schema>>;
  tags: { name: string; description: string }[];
  webhooks?: Record<string, Schema>;
};

/** What a plugin says about one of its routes beyond the route table (its declaration's plain data). */
export interface RouteDetails {
  summary?: string;
  description?: string;
  operationId?: string;
  requestSchema?: Schema;
  /** An example request body. */
  example?: unknown;
  responseSchema?: Schema;
  /** The status a success answers (default: 201 for POST, else 200). */
  status?: number;
}

export interface DocumentSources {
  routes: readonly Route[];
  entities: readonly LoadedEntity[];
  version: string;
  /** Details of routes without a description of their own (a plugin's summary, words and schemas). */
  routeDetails?: (route: Route) => RouteDetails | undefined;
}

/** What a route of another family may carry to be described better than generically. */
type DescribedRoute = Route & RouteDetails;

/** Order of the system tags in the page; entity tags follow, then any other family's. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Health: 'Liveness of the service and its database.',
  Auth: 'Sessions: log in with e-mail and password, refresh, log out. The session travels in the `session` cookie.',
  Users: 'The caller and, for admins, the users of the tenant.',
  Tenants: 'The caller\'s tenant; the platform operator creates tenants.',
  'API keys': 'API keys (session only): create, list, change, revoke, audit.',
  Batch: 'Several requests in one call.',
  Import: 'Bulk creation of records.',
  GraphQL: 'The registry as a GraphQL schema.',
  Webhooks: 'Registrations and deliveries of change events.',
  Stream: 'Server-sent events of changes.',
  Uploads: 'Files stored in S3.',
  Plugins: 'Endpoints added by plugins.',
  Docs: 'This description, its reference page and the dashboard.',
};

/**
 * A validator's JSON Schema (draft-07, as ajv compiles it) as OpenAPI 3.1 reads it (2020-12):
 * `dependencies` listing properties is `dependentRequired` there.
 */
function asOpenApiSchema(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value) && 'dependencies' in value) {
      const { dependencies, ...rest } = value as Record<string, unknown>;
      return { ...rest, dependentRequired: dependencies };
    }
    return value;
  }) as Schema;
}

/**
 * A route's description completed from its declaration: the summary (`{entity}` replaced by the
 * entity's slug), the body's JSON Schema and the query parameters are the declaration's.
 */
export function declaredOperation(route: Route, spec: RouteDocSpec, entity?: LoadedEntity): OperationSpec {
  const summary = route.summary?.replaceAll('{entity}', entity?.slug ?? 'records') ?? spec.summary ?? `${route.method} ${route.path}`;
  const parameters = withDeclaredQuery(route, spec.parameters);
  const body = route.body ? asOpenApiSchema(route.body) : spec.requestBody?.schema;
  const requestBody = spec.requestBody || route.body ? { ...spec.requestBody, schema: body ?? ref('GenericObject') } : undefined;
  const { requestBody: _given, parameters: _parameters, ...rest } = spec;
  return { ...rest, operationId: spec.operationId ?? route.operation, summary, ...(parameters.length ? { parameters } : {}), ...(requestBody ? { requestBody } : {}) };
}

/**
 * The route's declared query parameters, then the description's own; a parameter the description
 * names too keeps the declaration's words and takes the description's fields (an entity's own
 * example of a declared parameter).
 */
function withDeclaredQuery(route: Route, parameters: readonly Readonly<Record<string, unknown>>[] = []): Schema[] {
  const own = new Map(parameters.filter((p) => p.in === 'query' && typeof p.name === 'string').map((p) => [p.name as string, p]));
  const query: Schema[] = (route.query ?? []).map((q) => ({
    name: q.name,
    in: 'query',
    required: q.required ?? false,
    description: q.description,
    schema: q.schema,
    ...(q.example !== undefined ? { example: q.example } : {}),
    ...own.get(q.name),
  }));
  const declared = new Set((route.query ?? []).map((q) => q.name));
  return [...query, ...parameters.filter((p) => !(p.in === 'query' && declared.has(p.name as string)))];
}

function genericOperation(route: DescribedRoute): RouteDocSpec {
  const words = route.path
    .split('/')
    .filter((s) => s && s !== 'api' && s !== 'v1')
    .map((s) => (s.startsWith('{') ? `By${pascalCase(s.slice(1, -1))}` : pascalCase(s)));
  const tag = TAG_DESCRIPTIONS[pascalCase(route.family)] !== undefined ? pascalCase(route.family) : route.family;
  const success = route.status ?? (route.method === 'POST' ? 201 : 200);
  const hasBody = ['POST', 'PATCH', 'PUT'].includes(route.method);
  const bodySchema = route.body ?? route.requestSchema;
  // A body is required where its schema requires a property (a missing body is checked as {}).
  const bodyRequired = Array.isArray(bodySchema?.required) && bodySchema.required.length > 0;
  return {
    tag,
    operationId: route.operationId ?? `${route.method.toLowerCase()}${words.join('')}`,
    summary: route.summary ?? `${route.method} ${route.path}`,
    description: route.description ?? `An endpoint of the ${route.family} family.`,
    ...(hasBody ? { requestBody: { schema: bodySchema ?? ref('GenericObject'), required: bodyRequired, ...(route.example !== undefined ? { example: route.example } : {}) } } : {}),
    responses: {
      [success]: {
        description: 'Success.',
        schema: route.responseSchema
          ? envelopeOf(route.responseSchema)
          : route.response
            ? envelopeOf(ref(route.response))
            : { type: 'object', required: ['success'], properties: { success: { const: true } } },
      },
    },
    errors: hasBody ? [400, 422] : [],
  };
}

function securityOf(route: Route, scope: string | undefined, anonymous: boolean): Schema[] {
  if (route.auth === 'public') return [];
  const scopes = scope ? [scope] : [];
  if (route.auth === 'session') return [{ sessionCookie: [] }];
  return [{ bearerApiKey: scopes }, { apiKeyHeader: scopes }, { sessionCookie: [] }, ...(anonymous ? [{}] : [])];
}

function headersOf(names: readonly string[]): Record<string, Schema> {
  return Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
}

function responseObject(spec: ResponseSpec, counted: boolean): Schema {
  const headers = headersOf(['X-Request-ID', ...(counted ? RATE_LIMIT_HEADERS : []), ...(spec.headers ?? [])]);
  const out: Schema = { description: spec.description, headers };
  if (spec.schema) {
    const media: Schema = { schema: spec.schema };
    if (spec.example !== undefined) media.example = spec.example;
    const types = typeof spec.contentType === 'string' ? [spec.contentType] : (spec.contentType ?? ['application/json']);
    out.content = Object.fromEntries(types.map((t) => [t, media]));
  }
  return out;
}

function pathParameters(path: string, given: readonly Schema[]): Schema[] {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const have = new Set(given.filter((p) => p.in === 'path').map((p) => p.name));
  return names.filter((n) => !have.has(n)).map((n) => ({ name: n, in: 'path', required: true, description: `The ${n}.`, schema: { type: 'string' } }));
}

/** Methods whose record operations honour If-Match / If-Unmodified-Since (412 when the record changed). */
const CONDITIONAL_METHODS = new Set(['PATCH', 'PUT', 'DELETE']);

/**
 * Every error status an operation answers: those of the codes its route declares (the catalogue
 * gives each code's status), those of its description, and those the stack answers by the route's
 * properties — 401 and 403 where credentials are needed, 429 where counted, 400 and 413 where it
 * takes a body, 404 where its path has a parameter, 412 where a record is changed conditionally,
 * 503 and 504 where it reaches the database through the stack, 500 always.
 */
export function errorStatuses(route: Route, path: string, spec: Pick<OperationSpec, 'errors' | 'requestBody'>, counted: boolean): Set<number> {
  const errors = new Set(spec.errors);
  for (const code of route.errors ?? []) {
    const entry = catalogueEntry(code);
    if (entry) errors.add(entry.status);
  }
  if (route.auth !== 'public') {
    errors.add(401);
    errors.add(403);
  }
  if (counted) errors.add(429);
  if (spec.requestBody) {
    errors.add(400);
    errors.add(413);
  }
  if (path.includes('{')) errors.add(404);
  if (CONDITIONAL_METHODS.has(route.method) && route.family === 'entities' && route.path.endsWith('/{id}')) errors.add(412);
  if (counted || route.auth !== 'public') {
    errors.add(503);
    errors.add(504);
  }
  errors.add(500);
  return errors;
}

function operationObject(route: Route, path: string, spec: OperationSpec, scope: string | undefined, anonymous: boolean): Schema {
  const counted = isCountedFamily(route.family);
  const given = spec.parameters ?? [];
  const parameters = [...pathParameters(path, given), ...given];
  const responses: Record<string, Schema> = {};
  for (const [status, response] of Object.entries(spec.responses)) responses[status] = responseObject(response, counted);
  const errors = errorStatuses(route, path, spec, counted);
  for (const status of [...errors].sort((a, b) => a - b)) {
    if (responses[status] || !ERROR_STATUSES[status]) continue;
    responses[status] = { $ref: `#/components/responses/${ERROR_STATUSES[status].name}` };
  }
  const op: Schema = {
    tags: [spec.tag],
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    security: securityOf(route, scope, anonymous),
    ...(parameters.length ? { parameters } : {}),
  };
  if (spec.requestBody) {
    const media: Schema = { schema: spec.requestBody.schema };
    if (spec.requestBody.example !== undefined) media.example = spec.requestBody.example;
    op.requestBody = { required: spec.requestBody.required ?? true, content: { [spec.requestBody.contentType ?? 'application/json']: media } };
  }
  op.responses = responses;
  return op;
}

function errorResponses(): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [status, e] of Object.entries(ERROR_STATUSES)) {
    const extra = Number(status) === 429 || Number(status) === 503 ? ['Retry-After'] : [];
    out[e.name] = {
      description: `${e.description} Codes: ${e.codes.join(', ')}.`,
      headers: headersOf(['X-Request-ID', ...RATE_LIMIT_HEADERS, ...extra]),
      content: { 'application/json': { schema: ref('Error'), example: e.example } },
    };
  }
  return out;
}

/** Names of every component a value refers to, transitively. */
function referenced(roots: unknown, components: Record<string, Record<string, Schema>>): Set<string> {
  const seen = new Set<string>();
  const stack: unknown[] = [roots];
  while (stack.length) {
    const value = stack.pop();
    if (Array.isArray(value)) stack.push(...value);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/')) {
          const [, , kind, name] = v.split('/');
          const id = `${kind}/${name}`;
          if (!seen.has(id)) {
            seen.add(id);
            stack.push(components[kind]?.[name]);
          }
        } else stack.push(v);
      }
    }
  }
  return seen;
}

function prune(components: Record<string, Record<string, Schema>>, used: Set<string>): Record<string, Record<string, Schema>> {
  const out: Record<string, Record<string, Schema>> = {};
  for (const [kind, entries] of Object.entries(components)) {
    if (kind === 'securitySchemes') {
      out[kind] = entries;
      continue;
    }
    const kept = Object.entries(entries).filter(([name]) => used.has(`${kind}/${name}`));
    if (kept.length) out[kind] = Object.fromEntries(kept);
  }
  return out;
}

function entityTagDescription(entity: LoadedEntity): string {
  const access = entity.access.public
    ? 'Public: anyone may read; writes need credentials.'
    : entity.access.shared
      ? 'Shared: every user of the tenant sees every record.'
      : 'Private: each user sees their own records (admins every record of the tenant).';
  const off = Object.entries(entity.operations).filter(([, on]) => !on).map(([op]) => op);
  return `${pascalCase(entity.name)} records at /api/v1/${entity.slug}. ${access}${entity.softDelete ? ' Deletes are soft.' : ''}${off.length ? ` Disabled: ${off.join(', ')}.` : ''}`;
}

export function buildOpenApiDocument(sources: DocumentSources): OpenApiDocument {
  const entities = [...sources.entities].sort((a, b) => a.slug.localeCompare(b.slug));
  const bySlug = new Map(entities.map((e) => [e.slug, e]));
  const staticKeys = new Set(sources.routes.filter((r) => !r.path.includes('{entity}')).map((r) => routeKey(r.method, r.path)));
  const paths: Record<string, Record<string, Schema>> = {};
  const operationIds = new Map<string, number>();
  // The core routes' descriptions (shared/route-declarations/), by family and operation.
  const describedRoutes: Partial<Record<string, Readonly<Record<string, RouteDoc | undefined>>>> = coreRouteDocs();

  function add(route: Route, path: string, spec: OperationSpec, scope: string | undefined, anonymous: boolean): void {
    const method = route.method.toLowerCase();
    paths[path] ??= {};
    if (paths[path][method]) return;
    const count = operationIds.get(spec.operationId) ?? 0;
    operationIds.set(spec.operationId, count + 1);
    const unique = count === 0 ? spec : { ...spec, operationId: `${spec.operationId}${count + 1}` };
    paths[path][method] = operationObject(route, path, unique, scope, anonymous);
  }

  for (const route of sources.routes) {
    if (route.family === 'entities' && route.path.includes('{entity}')) {
      for (const entity of entities) {
        const scope = route.scope?.replace('{entity}', entity.slug);
        const anonymous = route.auth === 'optional' && entity.access.public;
        for (const { path, spec } of entityOperations({ entity, method: route.method, template: route.path, entities: bySlug })) {
          // An entity route's declared query parameters (the aggregate's functions) belong to each entity's operation.
          const parameters = withDeclaredQuery(route, spec.parameters);
          add(route, path, parameters.length ? { ...spec, parameters } : spec, route.method === 'OPTIONS' ? undefined : scope, anonymous);
        }
      }
      continue;
    }
    const describe = describedRoutes[route.family]?.[route.operation];
    if (route.path.includes('{entity}')) {
      for (const entity of entities) {
        const path = route.path.replace('{entity}', entity.slug);
        if (staticKeys.has(routeKey(route.method, path))) continue;
        const spec = declaredOperation(route, describe ? describe(routeDocTools(entity)) : genericOperation(route), entity);
        add(route, path, spec, route.scope?.replace('{entity}', entity.slug), route.auth === 'optional');
      }
      continue;
    }
    const described: DescribedRoute = { ...sources.routeDetails?.(route), ...route };
    add(route, route.path, declaredOperation(route, describe ? describe(routeDocTools()) : genericOperation(described)), route.scope, route.auth === 'optional');
  }

  const sortedPaths = Object.fromEntries(Object.entries(paths).filter(([, ops]) => Object.keys(ops).length));
  const hasWebhooks = sources.routes.some((r) => r.family === ('webhooks' as Route['family']));
  const webhooks = hasWebhooks ? webhookEntries(entities) : undefined;

  const schemas: Record<string, Schema> = { ...COMMON_SCHEMAS, ...SYSTEM_SCHEMAS };
  for (const entity of entities) Object.assign(schemas, entitySchemas(entity));
  const components: Record<string, Record<string, Schema>> = {
    schemas,
    responses: errorResponses(),
    parameters: {
      ...COMMON_PARAMETERS,
      IfNoneMatch: { name: 'If-None-Match', in: 'header', required: false, description: 'An ETag received before: 304 when unchanged.', schema: { type: 'string' } },
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Up to 255 characters: a retry with the same key and body within 24 hours returns the first response without repeating the work.',
        schema: { type: 'string', maxLength: 255 },
      },
    },
    headers: HEADERS,
    securitySchemes: SECURITY_SCHEMES,
  };
  const used = referenced({ paths: sortedPaths, webhooks }, components);

  const usedTags = new Set<string>();
  for (const ops of Object.values(sortedPaths)) for (const op of Object.values(ops)) for (const t of op.tags as string[]) usedTags.add(t);
  const entityTags = entities.filter((e) => usedTags.has(e.slug)).map((e) => ({ name: e.slug, description: entityTagDescription(e) }));
  const systemTags = Object.keys(TAG_DESCRIPTIONS).filter((t) => usedTags.has(t));
  const known = new Set([...systemTags, ...entityTags.map((t) => t.name)]);
  const otherTags = [...usedTags].filter((t) => !known.has(t)).sort();
  const tags = [
    ...systemTags.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
    ...entityTags,
    ...otherTags.map((name) => ({ name, description: `Endpoints of the ${name} family.` })),
  ];

  return {
    openapi: '3.1.0',
    info: {
      title: 'Entity Record API',
      version: sources.version,
      summary: 'JSON records for every entity of the registry, with API keys, sessions, scopes and row-level security.',
      description: [
        'Every entity of the registry gets list, create, read, update, delete and describe (OPTIONS) endpoints; the system endpoints manage sessions, users, tenants and API keys.',
        '',
        'Success answers `{success: true, data, pagination?, message?, warning?}`; errors answer `{success: false, error, code, details?}` with the codes listed on each response.',
        'Authenticate with an API key (`Authorization: Bearer <key>` or `X-API-Key`) or the session cookie of `POST /api/v1/auth/login`; the scopes an API key needs are listed on each operation.',
        'Authenticated answers carry `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`; a 429 adds `Retry-After`.',
      ].join('\n'),
    },
    // Relative to this document (served at <base>/api/v1/openapi.json): the deployment's own base, stage prefix included.
    servers: [{ url: '../..', description: 'This deployment' }],
    tags,
    paths: sortedPaths,
    ...(webhooks ? { webhooks } : {}),
    components: prune(components, used),
  };
}
