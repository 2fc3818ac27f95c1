/**
 * The API's own routes (all but the plugins'), the types of the route table (shared/route-types.ts), and the lookup a
 * middleware stack resolves a request's route with. No imports but a type: a function whose routes are all
 * core (every family but plugins) resolves its requests here, and its cold start never loads the
 * plugin declarations that shared/routes.ts adds to these to make THE route table.
 *
 * Path templates use API Gateway's {param} syntax. Static segments win over parameters, so the
 * core paths (users, api-keys, keys, auth, ...) resolve before {entity}, as SPEC.md orders them.
 */
import { authBodySchemas } from './auth/body-schemas.js';
import type { ErrorCode } from './errors.js';
import type { Family, JsonSchema, QueryParameter, Route } from './route-types.js';
import type { TableDefinition } from './tables.js';

export type { AuthMode, Family, HttpMethod, JsonSchema, QueryParameter, Route, RouteRateLimit } from './route-types.js';

/**
 * How a family may touch a table (infra/aws/permissions.ts grants exactly this):
 *   describe   – dynamodb:DescribeTable only (a liveness check)
 *   read       – GetItem, BatchGetItem, Query, Scan, ConditionCheckItem, DescribeTable, stream reads, indexes included
 *   readUpdate – read plus dynamodb:UpdateItem: changes existing items, never creates or deletes
 *   readWrite  – read plus PutItem, UpdateItem, DeleteItem, BatchWriteItem
 */
export type TableAccess = 'describe' | 'read' | 'readUpdate' | 'readWrite';
export type TableGrants = Partial<Record<TableDefinition['id'], TableAccess>>;

export interface FamilyDeclaration {
  /** The tables its function may touch, and how (least privilege). */
  tables: TableGrants;
  /** A batch sub-request may be dispatched to it (functions/batch/families.ts loads it), or why not. */
  batch: true | string;
  /** Its requests are not counted against any rate limit (static documents, the health check). */
  uncounted?: true;
}

/** Whether a request of `family` counts against the caller's rate limits. */
export function isCountedFamily(family: string): boolean {
  return !(Object.hasOwn(FAMILIES, family) && FAMILIES[family as Family].uncounted);
}

/**
 * Every family that authenticates reads the identity table and updates it, best effort (a session's
 * sliding expiry, an API key's lastUsedAt), and counts rate limits and idempotency records.
 */
const AUTHENTICATES: TableGrants = { identity: 'readUpdate', limits: 'readWrite' };
/** Families that read and write records: the record, its counters and its change event. */
const RECORD_WRITER: TableGrants = { records: 'readWrite', events: 'readWrite', identity: 'readUpdate', limits: 'readWrite' };

/** Each family's declaration: what its function may touch and whether a batch reaches it. */
export const FAMILIES: Readonly<Record<Family, FamilyDeclaration>> = /* @__PURE__ */ (() => ({
  // GET /api/health checks that the database answers; it is public and keeps no counters.
  health: { tables: { identity: 'describe' }, batch: 'the health check is not under /api/v1', uncounted: true },
  // Login, sessions, users, tenants.
  auth: { tables: { identity: 'readWrite', limits: 'readWrite' }, batch: true },
  // API keys.
  keys: { tables: { identity: 'readWrite', limits: 'readWrite' }, batch: true },
  entities: { tables: RECORD_WRITER, batch: true },
  import: { tables: RECORD_WRITER, batch: true },
  // A batch dispatches in-process to every batchable family: entities (records, events), auth and
  // keys (identity readWrite: users, keys), all of them counting in limits.
  batch: { tables: { ...RECORD_WRITER, identity: 'readWrite' }, batch: 'a batch cannot contain another batch' },
  graphql: { tables: RECORD_WRITER, batch: true },
  // Text generation keeps credits and the audit of grants in identity (infra/aws/plugins.ts adds Bedrock).
  plugins: { tables: { identity: 'readWrite', limits: 'readWrite' }, batch: true },
  // Upload records only (its bucket grants are in infra/aws/uploads.ts).
  upload: { tables: { uploads: 'readWrite', ...AUTHENTICATES }, batch: 'uploads carry multipart bodies or move objects in S3; they are sent on their own' },
  // The OpenAPI document and its page: built from code, public and never counted.
  docs: { tables: {}, batch: 'the API description and its page are static documents', uncounted: true },
  // The dashboard's static files.
  dashboard: { tables: {}, batch: 'the dashboard is a page and its static files', uncounted: true },
  // The SSE stream reads change events; its open-stream leases live in limits.
  stream: { tables: { events: 'read', ...AUTHENTICATES }, batch: 'a streamed response (text/event-stream) cannot be a sub-response' },
  // Registrations, delivery log, replays and pings, inbound provider events (the webhooks table).
  webhooks: { tables: { webhooks: 'readWrite', ...AUTHENTICATES }, batch: 'deliveries and inbound receivers act outside the request (a replay or ping waits for a receiver)' },
  // Migration states and reports live in the records table (shared/migrations/state.ts).
  migrations: { tables: { records: 'read', ...AUTHENTICATES }, batch: 'the migration status of the platform operator is read on its own (a session only)' },
}))();

/**
 * Families whose Lambda streams its response (awslambda.streamifyResponse): API Gateway invokes
 * them with responseTransferMode STREAM, and they may run up to the streaming limit.
 */
export const STREAMING_FAMILIES: readonly Family[] = ['stream'];
/** Function timeout of a streaming family: API Gateway's 15-minute streaming limit. */
export const STREAMING_TIMEOUT_SECONDS = 900;

const V1 = '/api/v1';

/** Codes that go together: a JSON body, a listing query, an import, a GraphQL request, a multipart upload. */
const BODY: readonly ErrorCode[] = ['INVALID_REQUEST', 'VALIDATION_FAILED'];
const LIST: readonly ErrorCode[] = ['INVALID_REQUEST', 'INVALID_FILTER', 'INVALID_SORT'];
const IMPORT: readonly ErrorCode[] = [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED', 'UNIQUE_VIOLATION', 'IMPORT_INCOMPLETE'];
const GRAPHQL: readonly ErrorCode[] = ['BAD_REQUEST', 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'QUERY_TOO_DEEP', 'QUERY_TOO_COMPLEX'];
const STRING = { type: 'string' } as const;
const KEY_LIST_QUERY: readonly QueryParameter[] = [
  { name: 'all', description: 'Admins: every key of the tenant.', schema: { type: 'boolean' } },
  { name: 'userId', description: 'Admins: the keys of this user.', schema: STRING },
];
const SIGN_IN_CALLBACK_QUERY: readonly QueryParameter[] = ['code', 'state', 'iss', 'error', 'error_description'].map((name) => ({
  name,
  description: 'Set by the identity provider (OAuth 2.0 authorization response).',
  schema: STRING,
}));
const PAGE_QUERY: readonly QueryParameter[] = [
  { name: 'limit', description: 'At most 100.', schema: { type: 'integer', minimum: 1, default: 100 } },
  { name: 'cursor', description: "From the previous page's Link.", schema: STRING },
];
const GRAPHQL_QUERY: readonly QueryParameter[] = [
  { name: 'query', required: true, description: 'The GraphQL document.', schema: STRING, example: '{ tasks(limit: 5) { edges { node { id title } } } }' },
  { name: 'variables', description: 'A JSON object.', schema: STRING },
  { name: 'operationName', description: 'Which operation of the document to run.', schema: STRING },
];
/**
 * The bodies below are what the stack validates (shared/http/validate-body.ts, by the precompiled
 * validators of shared/http/bodies/); what a schema cannot say (a scope's entity exists, a webhook
 * URL resolves to a public address, an expiry lies ahead) the services check.
 */
const KEY_NAME = { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' } as const;
const KEY_SCOPES = (scopes: string): JsonSchema => ({ type: 'array', minItems: 1, maxItems: 50, items: STRING, description: scopes });
/** A date (2030-01-31) or a date-time, checked against the calendar and the clock by the service. */
const KEY_EXPIRY: JsonSchema = { type: ['string', 'null'], description: 'An ISO 8601 date-time (or date) in the future; null: never expires.', examples: ['2030-01-31T00:00:00Z'] };
const keyBody = (scopes: string): JsonSchema => ({
  type: 'object',
  required: ['name', 'scopes'],
  additionalProperties: false,
  properties: {
    name: KEY_NAME,
    scopes: KEY_SCOPES(scopes),
    expiresAt: KEY_EXPIRY,
    environment: { type: 'string', enum: ['live', 'test'], default: 'live', description: '`test` gives an sk_test_ key.' },
  },
});
// An empty change answers the key unchanged.
const KEY_CHANGE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: KEY_NAME,
    scopes: KEY_SCOPES('`<entity>:read|write|delete`, `<entity>:*`, or `*` (admins only).'),
    status: { type: 'string', enum: ['active', 'inactive'] },
    expiresAt: KEY_EXPIRY,
  },
};
const WEBHOOK_FIELDS = {
  // The target rule (https, a public address) is the service's: it resolves the name.
  url: { type: 'string', minLength: 1, maxLength: 2048, description: 'An https:// URL that resolves to a public address.' },
  events: { type: 'array', minItems: 1, items: STRING, description: 'Event names such as task.created.' },
  secret: { type: 'string', minLength: 8, maxLength: 512, writeOnly: true },
} as const;
const WEBHOOK_BODY: JsonSchema = { type: 'object', required: ['url', 'events', 'secret'], additionalProperties: false, properties: WEBHOOK_FIELDS };
const WEBHOOK_CHANGE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...WEBHOOK_FIELDS, status: { type: 'string', enum: ['active', 'disabled'], description: '`active` re-enables a disabled webhook.' } },
};
const PRESIGN_BODY: JsonSchema = {
  type: 'object',
  required: ['filename', 'type', 'size'],
  properties: { filename: { type: 'string', minLength: 1, maxLength: 1024, pattern: '\\S' }, type: { type: 'string', minLength: 1 }, size: { type: 'integer', minimum: 1 } },
};
const COMPLETE_BODY: JsonSchema = { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1, description: 'The key /api/v1/upload/presign returned.' } } };
const MULTIPART: readonly ErrorCode[] = ['INVALID_REQUEST', 'NO_FILE', 'EMPTY_FILE', 'FILE_TOO_LARGE', 'TOO_MANY_FILES', 'FILE_TYPE_NOT_ALLOWED'];

/**
 * The routes before the plugins' in THE route table (shared/routes.ts), then those after them:
 * plugin routes go after GraphQL, before the uploads. The order is the API description's (and the
 * typed client's).
 */
export const beforePlugins: readonly Route[] = /* @__PURE__ */ (() => [
  { method: 'GET', path: '/api/health', family: 'health', auth: 'public', errors: [], summary: 'Health check', response: 'Health' },

  { method: 'POST', path: `${V1}/auth/login`, family: 'auth', auth: 'public', errors: [...BODY, 'AUTHENTICATION_FAILED'], summary: 'Log in', body: authBodySchemas.login, response: 'Session' },
  { method: 'POST', path: `${V1}/auth/logout`, family: 'auth', auth: 'session', summary: 'Log out' },
  { method: 'POST', path: `${V1}/auth/refresh`, family: 'auth', auth: 'session', summary: 'Refresh the session', response: 'Session' },
  { method: 'POST', path: `${V1}/auth`, family: 'auth', auth: 'session', summary: 'Refresh the session (short path)', response: 'Session' },
  // Console sign-in through an identity provider (shared/auth/oidc-console.ts): the browser is redirected.
  { method: 'GET', path: `${V1}/auth/oidc`, family: 'auth', auth: 'public', summary: 'Identity providers the console signs in with', response: 'SignInProvider' },
  { method: 'GET', path: `${V1}/auth/oidc/callback`, family: 'auth', auth: 'public', summary: 'The identity provider sends the browser back here (a redirect to the console, signed in)', query: SIGN_IN_CALLBACK_QUERY },
  { method: 'GET', path: `${V1}/auth/oidc/{provider}`, family: 'auth', auth: 'public', errors: ['NOT_FOUND'], summary: 'Sign in to the console with an identity provider (a redirect to it)' },
  { method: 'GET', path: `${V1}/users/me`, family: 'auth', auth: 'required', summary: 'The caller', response: 'User' },
  // A change to the caller's own user: read-only keys may not (a session has write; keys need `write` or `*`).
  { method: 'PATCH', path: `${V1}/users/me`, family: 'auth', auth: 'required', scope: 'write', errors: [...BODY], summary: 'Change the caller', body: authBodySchemas.updateMe, response: 'User' },
  { method: 'GET', path: `${V1}/users`, family: 'auth', auth: 'required', errors: ['FORBIDDEN'], summary: 'Users of the tenant (admin)', response: 'User' },
  { method: 'POST', path: `${V1}/users`, family: 'auth', auth: 'required', errors: [...BODY, 'FORBIDDEN', 'CONFLICT'], summary: 'Add a user to the tenant (admin)', body: authBodySchemas.createUser, response: 'User' },
  { method: 'GET', path: `${V1}/users/{id}`, family: 'auth', auth: 'required', errors: ['FORBIDDEN', 'NOT_FOUND'], summary: 'A user of the tenant (admin)', response: 'User' },
  { method: 'PATCH', path: `${V1}/users/{id}`, family: 'auth', auth: 'required', errors: [...BODY, 'FORBIDDEN', 'NOT_FOUND'], summary: 'Change a user (admin)', body: authBodySchemas.updateUser, response: 'User' },
  { method: 'DELETE', path: `${V1}/users/{id}`, family: 'auth', auth: 'required', errors: ['FORBIDDEN', 'NOT_FOUND'], summary: 'Remove a user (admin)' },
  { method: 'GET', path: `${V1}/tenants/me`, family: 'auth', auth: 'required', summary: "The caller's tenant", response: 'Tenant' },
  { method: 'PATCH', path: `${V1}/tenants/me`, family: 'auth', auth: 'required', errors: [...BODY, 'FORBIDDEN'], summary: 'Change the tenant (admin)', body: authBodySchemas.updateTenant, response: 'Tenant' },
  { method: 'POST', path: `${V1}/tenants`, family: 'auth', auth: 'session', errors: [...BODY, 'FORBIDDEN', 'CONFLICT'], summary: 'Create a tenant (platform operator)', body: authBodySchemas.createTenant, response: 'CreatedTenant' },
  // Each entity's layout and migration state (platform operator only).
  { method: 'GET', path: `${V1}/migrations`, family: 'migrations', auth: 'session', errors: ['FORBIDDEN'], summary: "Each entity's layout and migration state (platform operator)", response: 'MigrationState' },

  // API key management: session only; a key alone gets 403.
  { method: 'GET', path: `${V1}/keys`, family: 'keys', auth: 'session', errors: ['INVALID_REQUEST', 'FORBIDDEN'], summary: "The caller's API keys", query: KEY_LIST_QUERY, response: 'ApiKey' },
  { method: 'POST', path: `${V1}/keys`, family: 'keys', auth: 'session', errors: [...BODY], summary: 'Create an API key (bare scopes)', body: keyBody('read, write, delete (that action on every entity).'), response: 'CreatedApiKey' },
  { method: 'DELETE', path: `${V1}/keys/{keyId}`, family: 'keys', auth: 'session', errors: ['NOT_FOUND'], summary: 'Revoke an API key' },
  { method: 'GET', path: `${V1}/api-keys`, family: 'keys', auth: 'session', errors: ['INVALID_REQUEST', 'FORBIDDEN'], summary: "The caller's API keys", query: KEY_LIST_QUERY, response: 'ApiKey' },
  { method: 'POST', path: `${V1}/api-keys`, family: 'keys', auth: 'session', errors: [...BODY], summary: 'Create an API key (entity scopes)', body: keyBody('`<entity>:read|write|delete`, `<entity>:*`, or `*` (admins only).'), response: 'CreatedApiKey' },
  { method: 'GET', path: `${V1}/api-keys/{id}`, family: 'keys', auth: 'session', errors: ['NOT_FOUND'], summary: 'An API key', response: 'ApiKey' },
  { method: 'PATCH', path: `${V1}/api-keys/{id}`, family: 'keys', auth: 'session', errors: [...BODY, 'NOT_FOUND'], summary: 'Change an API key', body: KEY_CHANGE, response: 'ApiKey' },
  { method: 'DELETE', path: `${V1}/api-keys/{id}`, family: 'keys', auth: 'session', errors: ['NOT_FOUND'], summary: 'Revoke an API key' },
  { method: 'GET', path: `${V1}/api-keys/{id}/audit`, family: 'keys', auth: 'session', errors: ['INVALID_REQUEST', 'NOT_FOUND'], summary: 'Audit log of an API key', query: PAGE_QUERY, response: 'AuditEntry' },

  // Batch: the outer request needs a caller; each sub-request needs its own scope.
  { method: 'POST', path: `${V1}/batch`, family: 'batch', auth: 'required', errors: [...BODY], summary: 'Run up to 20 requests', body: { $ref: '#/components/schemas/BatchRequest' }, response: 'BatchResponse' },

  // Bulk import: the static tasks variant wins over the template (static beats {param}).
  { method: 'POST', path: `${V1}/import/tasks`, family: 'import', auth: 'required', scope: 'tasks:write', csvBody: true, errors: [...IMPORT], summary: 'Import tasks' },
  { method: 'POST', path: `${V1}/import/{entity}`, family: 'import', auth: 'required', scope: '{entity}:write', csvBody: true, errors: [...IMPORT], summary: 'Import {entity}' },

  // GraphQL: each operation checks its own entity scope (shared/graphql/schema.ts).
  { method: 'POST', path: `${V1}/graphql`, family: 'graphql', auth: 'required', errors: [...GRAPHQL], summary: 'GraphQL query or mutation', body: { $ref: '#/components/schemas/GraphQLRequest' }, response: 'GraphQLResponse' },
  { method: 'GET', path: `${V1}/graphql`, family: 'graphql', auth: 'required', errors: [...GRAPHQL, 'METHOD_NOT_ALLOWED'], summary: 'GraphQL query (GET)', query: GRAPHQL_QUERY, response: 'GraphQLResponse' },
])();

export const afterPlugins: readonly Route[] = /* @__PURE__ */ (() => [
  // Uploads: multipart within the Lambda limit, presigned POST up to 10 MiB, files private to their uploader.
  { method: 'POST', path: `${V1}/upload`, family: 'upload', auth: 'required', scope: 'uploads:write', rawBody: true, errors: [...MULTIPART], summary: 'Upload a file', response: 'UploadResult' },
  { method: 'POST', path: `${V1}/upload/multiple`, family: 'upload', auth: 'required', scope: 'uploads:write', rawBody: true, errors: [...MULTIPART], summary: 'Upload up to 10 files' },
  { method: 'POST', path: `${V1}/upload/presign`, family: 'upload', auth: 'required', scope: 'uploads:write', errors: [...BODY, 'FILE_TOO_LARGE', 'FILE_TYPE_NOT_ALLOWED'], summary: 'Presigned POST for a file up to 10 MiB', body: PRESIGN_BODY },
  { method: 'POST', path: `${V1}/upload/complete`, family: 'upload', auth: 'required', scope: 'uploads:write', errors: [...BODY, 'NOT_FOUND', 'EMPTY_FILE', 'FILE_TOO_LARGE', 'FILE_TYPE_NOT_ALLOWED'], summary: 'Check a presigned upload', body: COMPLETE_BODY, response: 'UploadResult' },
  { method: 'GET', path: `${V1}/uploads`, family: 'upload', auth: 'required', scope: 'uploads:read', errors: ['INVALID_REQUEST'], summary: "The caller's uploads" },
  { method: 'DELETE', path: `${V1}/uploads/{id}`, family: 'upload', auth: 'required', scope: 'uploads:delete', errors: ['NOT_FOUND'], summary: 'Delete an upload' },
  { method: 'GET', path: `${V1}/files/{id}`, family: 'upload', auth: 'required', scope: 'uploads:read', errors: ['NOT_FOUND'], summary: 'Download a file (a redirect to a short-lived URL)' },
  // The OpenAPI document and its reference page (shared/openapi): public, never rate-limited.
  { method: 'GET', path: `${V1}/openapi.json`, family: 'docs', auth: 'public', summary: 'This document' },
  { method: 'GET', path: '/api/docs', family: 'docs', auth: 'public', summary: 'The API reference page' },
  { method: 'GET', path: '/api/docs/{asset}', family: 'docs', auth: 'public', errors: ['NOT_FOUND'], summary: 'A script or style sheet of the reference page' },
  // The web console (functions/dashboard): static files, public and never rate-limited.
  { method: 'GET', path: '/dashboard', family: 'dashboard', auth: 'public', summary: 'The dashboard, a web console of the API' },
  { method: 'GET', path: '/dashboard/{asset}', family: 'dashboard', auth: 'public', errors: ['NOT_FOUND'], summary: 'A script or style sheet of the dashboard (content-hashed name, cached for a year)' },
  // The SSE stream: a streamed response (STREAMING_FAMILIES); the static tasks path wins over the template.
  { method: 'GET', path: `${V1}/stream/tasks`, family: 'stream', auth: 'required', scope: 'tasks:read', errors: ['INVALID_REQUEST', 'TOO_MANY_STREAMS'], summary: 'Task change events (SSE)' },
  { method: 'GET', path: `${V1}/stream/{entity}`, family: 'stream', auth: 'required', scope: '{entity}:read', errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'TOO_MANY_STREAMS'], summary: 'Change events of {entity} (SSE)' },
  // Webhooks: registrations, delivery log, replay, test ping; POST /webhooks/{id} is the inbound
  // receiver of a provider (API Gateway allows one parameter name per level, hence {id}).
  { method: 'POST', path: `${V1}/webhooks`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: [...BODY, 'LIMIT_EXCEEDED'], summary: 'Register a webhook', body: WEBHOOK_BODY, response: 'Webhook' },
  { method: 'GET', path: `${V1}/webhooks`, family: 'webhooks', auth: 'required', scope: 'webhooks:read', summary: "The tenant's webhooks", response: 'Webhook' },
  { method: 'GET', path: `${V1}/webhooks/{id}`, family: 'webhooks', auth: 'required', scope: 'webhooks:read', errors: ['NOT_FOUND'], summary: 'A webhook', response: 'Webhook' },
  { method: 'PATCH', path: `${V1}/webhooks/{id}`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: [...BODY, 'NOT_FOUND'], summary: 'Change a webhook', body: WEBHOOK_CHANGE, response: 'Webhook' },
  { method: 'DELETE', path: `${V1}/webhooks/{id}`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: ['NOT_FOUND'], summary: 'Remove a webhook' },
  { method: 'POST', path: `${V1}/webhooks/{id}`, family: 'webhooks', auth: 'public', rawBody: true, errors: ['INVALID_REQUEST', 'INVALID_SIGNATURE', 'NOT_FOUND'], summary: 'Inbound provider webhook' },
  { method: 'GET', path: `${V1}/webhooks/{id}/deliveries`, family: 'webhooks', auth: 'required', scope: 'webhooks:read', errors: ['INVALID_REQUEST', 'NOT_FOUND'], summary: 'Delivery attempts of a webhook', query: PAGE_QUERY },
  { method: 'POST', path: `${V1}/webhooks/{id}/deliveries/{deliveryId}/retry`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: ['NOT_FOUND'], summary: 'Deliver an attempt again' },
  { method: 'POST', path: `${V1}/webhooks/{id}/test`, family: 'webhooks', auth: 'required', scope: 'webhooks:write', errors: ['NOT_FOUND'], summary: 'Send a test event to a webhook' },

  // The API's index: the entities the caller may use, with their paths and links (shared/http/operations/api-index.ts).
  { method: 'GET', path: V1, family: 'entities', auth: 'optional', summary: 'The entities you may use', response: 'ApiIndex' },
  // Registered entities: after every static path above, as SPEC.md orders them.
  // Reads are 'optional' so that public entities answer anonymous callers (the entities family
  // decides: functions/entities/handler.ts passes isPublicRead / scopeApplies); writes need a caller.
  { method: 'GET', path: `${V1}/{entity}`, family: 'entities', auth: 'optional', scope: '{entity}:read', errors: [...LIST, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'List records' },
  { method: 'POST', path: `${V1}/{entity}`, family: 'entities', auth: 'required', scope: '{entity}:write', errors: [...BODY, 'UNIQUE_VIOLATION', 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Create a record' },
  { method: 'OPTIONS', path: `${V1}/{entity}`, family: 'entities', auth: 'optional', errors: ['ENTITY_NOT_FOUND'], summary: 'Describe an entity' },
  // Bulk update and delete: shared/entities/bulk.ts.
  { method: 'PATCH', path: `${V1}/{entity}`, family: 'entities', auth: 'required', scope: '{entity}:write', errors: [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Update many records' },
  { method: 'DELETE', path: `${V1}/{entity}`, family: 'entities', auth: 'required', scope: '{entity}:delete', errors: [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Delete many records' },
  { method: 'GET', path: `${V1}/{entity}/{id}`, family: 'entities', auth: 'optional', scope: '{entity}:read', errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Read a record' },
  { method: 'PATCH', path: `${V1}/{entity}/{id}`, family: 'entities', auth: 'required', scope: '{entity}:write', errors: [...BODY, 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT', 'UNIQUE_VIOLATION', 'PRECONDITION_FAILED'], summary: 'Update a record' },
  { method: 'DELETE', path: `${V1}/{entity}/{id}`, family: 'entities', auth: 'required', scope: '{entity}:delete', errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT', 'PRECONDITION_FAILED'], summary: 'Delete a record' },
  // Child collections: the parent needs read; the child's own scopes are checked by the family.
  { method: 'GET', path: `${V1}/{entity}/{id}/{child}`, family: 'entities', auth: 'optional', scope: '{entity}:read', errors: [...LIST, 'ENTITY_NOT_FOUND', 'NOT_FOUND'], summary: 'List the records of a relation' },
  { method: 'POST', path: `${V1}/{entity}/{id}/{child}`, family: 'entities', auth: 'required', scope: '{entity}:read', errors: [...BODY, 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'UNIQUE_VIOLATION'], summary: 'Create a record of a relation' },
])();

/** Every route but the plugins', in route-table order. */
export const coreRoutes: readonly Route[] = /* @__PURE__ */ (() => [...beforePlugins, ...afterPlugins])();

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
export const coreRouteLookup: RouteLookup = /* @__PURE__ */ routeLookup(coreRoutes);
