/**
 * How each system route (everything but the entity routes) is described: one entry per
 * "METHOD /path" of shared/routes.ts. A route of the table without an entry here still appears in
 * the document, described generically (document.ts); give it an entry to say more. Entries of
 * routes `{entity}` in their path receive the entity they are expanded for.
 */
import type { LoadedEntity } from '../registry/index.js';
import { routeKey } from '../routes.js';
import { envelopeOf, ref, type Schema } from './components.js';
import { createExample, schemaNames } from './entities.js';
import type { OperationSpec, SystemSpec } from './operation.js';

export type Describe = (ctx: { entity?: LoadedEntity }) => SystemSpec;

const V1 = '/api/v1';
const object: Schema = { type: 'object', additionalProperties: true };
const str: Schema = { type: 'string' };
const json = (schema: Schema, description: string, extra: Partial<OperationSpec['responses'][number]> = {}) => ({ description, schema, ...extra });
const message = (description: string) => json({ type: 'object', required: ['success'], properties: { success: { const: true }, message: str, data: {} } }, description);

const session = (operationId: string, login = false): Describe => () => ({
  tag: 'Auth',
  operationId,
  ...(login ? { requestBody: { example: { email: 'admin@localhost', password: 'correct horse battery staple' } } } : {}),
  responses: { 200: json(envelopeOf(ref('Session')), 'The session; its token is in the Set-Cookie `session` cookie (HttpOnly).') },
  errors: [],
});

export const SYSTEM_OPERATIONS: Readonly<Record<string, Describe>> = {
  [routeKey('GET', V1)]: () => ({
    tag: 'Docs',
    operationId: 'getApiIndex',
   
    description:
      'Where to start: the entities the caller may use (only public ones without credentials), each with its path, the operations open to the caller and links to its OPTIONS description and its section of this reference; then links to the API\'s other parts.',
    responses: {
      200: json(envelopeOf(ref('ApiIndex'), { message: true }), 'The index.', {
        example: {
          success: true,
          data: {
            name: 'Entity Record API',
            version: 'v1',
            entities: [{ name: 'task', slug: 'tasks', path: '/api/v1/tasks', operations: ['list', 'read', 'create', 'update', 'delete'], public: false, links: { options: '/api/v1/tasks', docs: '/api/docs#/tasks' } }],
            links: { docs: '/api/docs', openapi: '/api/v1/openapi.json' },
          },
        },
      }),
    },
    errors: [],
  }),
  [routeKey('GET', '/api/health')]: () => ({
    tag: 'Health',
    operationId: 'getHealth',
   
    description: 'Whether the service and its database answer. Never cached, never rate-limited.',
    responses: {
      200: json(ref('Health'), 'Healthy.', { example: { status: 'ok', version: '1.0.0', timestamp: '2026-01-01T12:00:00.000Z' } }),
      503: json(ref('Health'), 'The database does not answer.'),
    },
    errors: [],
  }),

  [routeKey('POST', `${V1}/auth/login`)]: session('login', true),
  [routeKey('POST', `${V1}/auth/logout`)]: () => ({
    tag: 'Auth',
    operationId: 'logout',
   
    description: 'Ends the session on the server and clears the cookie. A session begun through an identity provider that has an end-session endpoint also answers `data.endSession: {name, url}`: its own sign-out.',
    responses: { 200: message('Logged out.') },
    errors: [],
  }),
  // Console sign-in through an identity provider (docs/authentication.md, "Identity providers"): for a browser.
  [routeKey('GET', `${V1}/auth/oidc`)]: () => ({
    tag: 'Auth', operationId: 'listSignInProviders',
    responses: { 200: json(envelopeOf({ type: 'array', items: ref('SignInProvider') }), 'The providers offering console sign-in; empty when none does.') }, errors: [],
  }),
  [routeKey('GET', `${V1}/auth/oidc/{provider}`)]: () => ({
    tag: 'Auth', operationId: 'startSignIn',
    description: 'Authorization code flow with PKCE, `state` and `nonce`; sets the 10-minute `oidc_flow` cookie that ties the answer to this browser.',
    responses: { 302: { description: "To the provider's authorization endpoint (to `/dashboard?signin=failed` when it cannot be reached).", headers: ['Location'] } }, errors: [],
  }),
  [routeKey('GET', `${V1}/auth/oidc/callback`)]: () => ({
    tag: 'Auth', operationId: 'finishSignIn',
    description: 'Where the provider sends the browser back: the code is exchanged, the ID token verified, the user found or created, and a session begun.',
    responses: { 302: { description: 'To `/dashboard` with the `session` cookie set, or to `/dashboard?signin=failed` (or `cancelled`) with the reason in the log.', headers: ['Location'] } }, errors: [],
  }),
  [routeKey('POST', `${V1}/auth/refresh`)]: session('refreshSession'),
  [routeKey('POST', `${V1}/auth`)]: session('refreshSessionShort'),

  [routeKey('GET', `${V1}/users/me`)]: () => ({
    tag: 'Users', operationId: 'getMe',
    responses: { 200: json(envelopeOf(ref('User')), 'The caller\'s user.') }, errors: [],
  }),
  [routeKey('PATCH', `${V1}/users/me`)]: () => ({
    tag: 'Users', operationId: 'updateMe',
    description: 'Name, preferences (metadata source), or the password (with currentPassword).',
    requestBody: { example: { preferences: { theme: 'dark' } } },
    responses: { 200: json(envelopeOf(ref('User')), 'The changed user.') }, errors: [400, 422],
  }),
  [routeKey('GET', `${V1}/users`)]: () => ({
    tag: 'Users', operationId: 'listUsers',
    responses: { 200: json(envelopeOf({ type: 'array', items: ref('User') }), 'The tenant\'s users.') }, errors: [],
  }),
  [routeKey('POST', `${V1}/users`)]: () => ({
    tag: 'Users', operationId: 'createUser',
    requestBody: { example: { email: 'ada@example.com', name: 'Ada', password: 'a long passphrase', role: 'user' } },
    responses: { 201: json(envelopeOf(ref('User')), 'The new user.') }, errors: [400, 409, 422],
  }),
  [routeKey('GET', `${V1}/users/{id}`)]: () => ({
    tag: 'Users', operationId: 'getUser',
    responses: { 200: json(envelopeOf(ref('User')), 'The user.') }, errors: [404],
  }),
  [routeKey('PATCH', `${V1}/users/{id}`)]: () => ({
    tag: 'Users', operationId: 'updateUser',
    requestBody: {},
    responses: { 200: json(envelopeOf(ref('User')), 'The changed user.') }, errors: [400, 404, 422],
  }),
  [routeKey('DELETE', `${V1}/users/{id}`)]: () => ({
    tag: 'Users', operationId: 'deleteUser',
    responses: { 200: json(envelopeOf({ type: 'object', required: ['id'], properties: { id: str } }, { message: true }), 'Removed.') }, errors: [404],
  }),

  [routeKey('GET', `${V1}/tenants/me`)]: () => ({
    tag: 'Tenants', operationId: 'getMyTenant',
    responses: { 200: json(envelopeOf(ref('Tenant')), 'The tenant.') }, errors: [],
  }),
  [routeKey('PATCH', `${V1}/tenants/me`)]: () => ({
    tag: 'Tenants', operationId: 'updateMyTenant',
    description: '`settings` is a metadata source, merged into the stored settings.',
    requestBody: {},
    responses: { 200: json(envelopeOf(ref('Tenant')), 'The changed tenant.') }, errors: [400, 422],
  }),
  [routeKey('POST', `${V1}/tenants`)]: () => ({
    tag: 'Tenants', operationId: 'createTenant',
    description: 'Only the bootstrap admin\'s session may: a tenant and its first admin.',
    requestBody: {},
    responses: { 201: json(envelopeOf(ref('CreatedTenant')), 'The new tenant and its admin.') }, errors: [400, 409, 422],
  }),

  [routeKey('GET', `${V1}/migrations`)]: () => ({
    tag: 'Tenants', operationId: 'listMigrations',
    description:
      'Only the bootstrap admin\'s session may. Per entity: the layout (hash, previous hash, content), state (pending, running, done, failed), records processed of total, start and end, the changes in words, which indexes are complete, and the report (duplicates of a value made unique, records a tightened rule refuses; the first 100 and their count). See docs/changing-entities.md.',
    responses: {
      200: json(
        envelopeOf({ type: 'array', items: ref('MigrationState') }),
        'The migration state of every entity.',
      ),
    },
    errors: [403],
  }),

  [routeKey('GET', `${V1}/keys`)]: () => ({
    tag: 'API keys', operationId: 'listKeys',
    responses: { 200: json(envelopeOf({ type: 'array', items: ref('ApiKey') }), 'Keys, never the full key.') }, errors: [400],
  }),
  [routeKey('POST', `${V1}/keys`)]: () => ({
    tag: 'API keys', operationId: 'createKey',
    requestBody: { example: { name: 'CI', scopes: ['read', 'write'] } },
    responses: { 201: json(envelopeOf(ref('CreatedApiKey'), { warning: true }), 'The key; `key` is shown this once.') }, errors: [400, 422],
  }),
  [routeKey('DELETE', `${V1}/keys/{keyId}`)]: () => ({
    tag: 'API keys', operationId: 'revokeKey',
    responses: { 200: message('Revoked at once.') }, errors: [404],
  }),
  [routeKey('GET', `${V1}/api-keys`)]: () => ({
    tag: 'API keys', operationId: 'listApiKeys',
    responses: { 200: json(envelopeOf({ type: 'array', items: ref('ApiKey') }), 'Keys, never the full key.') }, errors: [400],
  }),
  [routeKey('POST', `${V1}/api-keys`)]: () => ({
    tag: 'API keys', operationId: 'createApiKey',
    requestBody: { example: { name: 'Reporting', scopes: ['tasks:read'] } },
    responses: { 201: json(envelopeOf(ref('CreatedApiKey'), { warning: true }), 'The key; `key` is shown this once.') }, errors: [400, 422],
  }),
  [routeKey('GET', `${V1}/api-keys/{id}`)]: () => ({
    tag: 'API keys', operationId: 'getApiKey',
    responses: { 200: json(envelopeOf(ref('ApiKey')), 'The key record.') }, errors: [404],
  }),
  [routeKey('PATCH', `${V1}/api-keys/{id}`)]: () => ({
    tag: 'API keys', operationId: 'updateApiKey',
    description: 'An inactive key answers 401 INVALID_API_KEY until it is active again.',
    requestBody: { example: { status: 'inactive' } },
    responses: { 200: json(envelopeOf(ref('ApiKey')), 'The changed key.') }, errors: [400, 404, 422],
  }),
  [routeKey('DELETE', `${V1}/api-keys/{id}`)]: () => ({
    tag: 'API keys', operationId: 'revokeApiKey',
    responses: { 200: message('Revoked at once.') }, errors: [404],
  }),
  [routeKey('GET', `${V1}/api-keys/{id}/audit`)]: () => ({
    tag: 'API keys', operationId: 'listApiKeyAudit',
    description: 'Newest first; `Link: rel="next"` continues.',
    responses: { 200: json(envelopeOf({ type: 'array', items: ref('AuditEntry') }), 'Audit entries.', { headers: ['Link'] }) }, errors: [400, 404],
  }),

  [routeKey('POST', `${V1}/batch`)]: () => ({
    tag: 'Batch', operationId: 'runBatch',
    description: 'Sub-requests run in order, each authorised as the caller and counted against its rate limit; a failing one does not stop the others. The answer is always 200.',
    requestBody: {
      example: { requests: [{ id: 'a', method: 'POST', path: '/tasks', body: { title: 'Write the report' } }, { id: 'b', method: 'GET', path: '/tasks?limit=5' }] },
    },
    responses: { 200: json(ref('BatchResponse'), 'Each sub-request\'s status and body.') }, errors: [400, 422],
  }),

  [routeKey('POST', `${V1}/import/tasks`)]: () => ({
    tag: 'Import', operationId: 'importTasks',
    description: '`assignUsers` resolves each item\'s `assigneeEmail` to a user of the tenant; `notify` emits task.created for each imported task. Also takes `Content-Type: text/csv` (header row = field names, one task a row) with `?assignUsers=true&notify=true` in the query string.',
    requestBody: {
      schema: {
        type: 'object', required: ['tasks'],
        properties: { tasks: { type: 'array', minItems: 1, maxItems: 100, items: object }, assignUsers: { type: 'boolean', default: false }, notify: { type: 'boolean', default: false } },
      },
      example: { tasks: [{ title: 'First' }, { title: 'Second', assigneeEmail: 'ada@example.com' }], assignUsers: true },
    },
    responses: {
      201: json(envelopeOf({
        type: 'object', required: ['imported', 'failed', 'tasks', 'errors'],
        properties: { imported: { type: 'integer' }, failed: { type: 'integer' }, tasks: { type: 'array', items: object }, errors: { type: 'array', items: object } },
      }), 'What was imported and what failed.'),
    },
    errors: [400, 422],
  }),
  [routeKey('POST', `${V1}/import/{entity}`)]: ({ entity }) => ({
    tag: 'Import', operationId: `import${entity ? schemaNames(entity).record : ''}Records`,
    description: 'With skipInvalid an invalid item is reported and the rest imported; without, the first invalid item aborts (422 naming its index; 409 UNIQUE_VIOLATION when its only problem is a unique value another record or an earlier item holds) and nothing is written. Also takes `Content-Type: text/csv` (header row = field names, one item a row; an empty cell leaves the field out) with `?skipInvalid=true&returnFailures=true` in the query string.',
    requestBody: {
      schema: {
        type: 'object', required: ['items'],
        properties: {
          items: { type: 'array', minItems: 1, maxItems: 100, items: entity ? ref(schemaNames(entity).create) : object },
          options: { type: 'object', properties: { skipInvalid: { type: 'boolean', default: false }, returnFailures: { type: 'boolean', default: false } } },
        },
      },
      ...(entity ? { example: { items: [createExample(entity)], options: { skipInvalid: true, returnFailures: true } } } : {}),
    },
    responses: {
      201: json(envelopeOf({
        type: 'object', required: ['created', 'failed', 'items'],
        properties: {
          created: { type: 'integer' }, failed: { type: 'integer' },
          items: { type: 'array', items: entity ? ref(schemaNames(entity).record) : object },
          failures: { type: 'array', items: ref('ImportFailure') },
        },
      }), 'What was created and what failed.'),
    },
    errors: [400, 409, 422],
  }),

  [routeKey('POST', `${V1}/graphql`)]: () => ({
    tag: 'GraphQL', operationId: 'graphqlPost',
    description: 'Same auth, scopes and row-level security as REST. Answers are GraphQL results, not the REST envelope.',
    requestBody: { example: { query: '{ tasks(limit: 5) { edges { node { id title status } } pageInfo { hasNextPage } } }' } },
    responses: { 200: json(ref('GraphQLResponse'), 'The result.'), 400: json(ref('GraphQLResponse'), 'The query does not parse or validate.') },
    errors: [],
  }),
  [routeKey('GET', `${V1}/graphql`)]: () => ({
    tag: 'GraphQL', operationId: 'graphqlGet',
    description: 'Queries only; mutations need POST.',
    responses: { 200: json(ref('GraphQLResponse'), 'The result.'), 400: json(ref('GraphQLResponse'), 'The query does not parse or validate.') },
    errors: [],
  }),

  [routeKey('GET', `${V1}/openapi.json`)]: () => ({
    tag: 'Docs', operationId: 'getOpenApiDocument',
    description: 'The OpenAPI 3.1 description of the API, generated from the route table and the entity registry.',
    responses: { 200: json({ type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: str, info: object, paths: object } }, 'The OpenAPI document.', { headers: ['ETag'] }), 304: { description: 'Not modified (If-None-Match).' } },
    errors: [],
  }),
  [routeKey('GET', '/api/docs')]: () => ({
    tag: 'Docs', operationId: 'getDocsPage',
    responses: { 200: { description: 'An HTML page that renders this document, with "try it".', contentType: 'text/html', schema: str, headers: ['ETag'] } },
    errors: [],
  }),
  [routeKey('GET', '/api/docs/{asset}')]: () => ({
    tag: 'Docs', operationId: 'getDocsAsset',
    responses: {
      200: { description: 'The asset (JavaScript or CSS).', contentType: ['text/javascript', 'text/css'], schema: str, headers: ['ETag'] },
    },
    errors: [404],
  }),
  [routeKey('GET', '/dashboard')]: () => ({
    tag: 'Docs', operationId: 'getDashboard',
    responses: { 200: { description: 'The HTML page of the dashboard; it signs in with a session.', contentType: 'text/html', schema: str, headers: ['ETag'] } },
    errors: [],
  }),
  [routeKey('GET', '/dashboard/{asset}')]: () => ({
    tag: 'Docs', operationId: 'getDashboardAsset',
    responses: {
      200: { description: 'The asset (JavaScript or CSS).', contentType: ['text/javascript', 'text/css'], schema: str, headers: ['ETag'] },
    },
    errors: [404],
  }),

  // Families whose routes may be present: described here so that they appear with their shapes.
  [routeKey('POST', `${V1}/webhooks`)]: () => ({
    tag: 'Webhooks', operationId: 'createWebhook',
    description: 'Deliveries are POSTed to `url`, signed with `secret` (see the `webhooks` section). Needs `webhooks:write`.',
    requestBody: {
      example: { url: 'https://example.com/hooks', events: ['task.created'], secret: 'a shared secret' },
    },
    responses: { 201: json(envelopeOf(ref('Webhook')), 'The registration (never the secret).') }, errors: [400, 422],
  }),
  [routeKey('GET', `${V1}/webhooks`)]: () => ({
    tag: 'Webhooks', operationId: 'listWebhooks',
    responses: { 200: json(envelopeOf({ type: 'array', items: ref('Webhook') }), 'Registrations.') }, errors: [],
  }),
  [routeKey('DELETE', `${V1}/webhooks/{id}`)]: () => ({
    tag: 'Webhooks', operationId: 'deleteWebhook',
    responses: { 200: message('Removed.') }, errors: [404],
  }),
  [routeKey('GET', `${V1}/webhooks/{id}/deliveries`)]: () => ({
    tag: 'Webhooks', operationId: 'listWebhookDeliveries',
    responses: { 200: json(envelopeOf({ type: 'array', items: object }), 'Attempts with status, response code and time.') }, errors: [404],
  }),
  // `{id}` is the provider's name: API Gateway allows one parameter name per path level.
  [routeKey('POST', `${V1}/webhooks/{id}`)]: () => ({
    tag: 'Webhooks', operationId: 'receiveProviderWebhook',
    description: 'The path parameter is the provider, one of INBOUND_WEBHOOK_SECRETS: `generic` checks `x-webhook-signature` (hex HMAC-SHA256 of the raw body), `stripe` checks `Stripe-Signature`.',
    parameters: [
      { name: 'x-webhook-signature', in: 'header', required: false, description: 'generic: lowercase hex HMAC-SHA256 of the raw body.', schema: str },
      { name: 'Stripe-Signature', in: 'header', required: false, description: 'stripe: t=…,v1=….', schema: str },
    ],
    requestBody: { schema: object },
    responses: { 200: json({ type: 'object', required: ['received'], properties: { received: { const: true } } }, 'Accepted.') }, errors: [400, 404],
  }),
  [routeKey('GET', `${V1}/stream/tasks`)]: () => ({
    tag: 'Stream', operationId: 'streamTasks',
    description: 'Server-sent events: `{type: connected}` first, then task.created / task.updated (`task`) and task.deleted (`taskId`). Reconnect with Last-Event-ID to receive what was missed. Needs `tasks:read`.',
    parameters: [{ name: 'Last-Event-ID', in: 'header', required: false, description: 'The last `id:` received.', schema: str }],
    responses: { 200: { description: 'An event stream.', contentType: 'text/event-stream', schema: str } }, errors: [],
  }),
  [routeKey('POST', `${V1}/upload`)]: () => ({
    tag: 'Uploads', operationId: 'uploadFile',
    description: 'multipart/form-data with the part `file`; JPEG, PNG or PDF judged by the bytes; the request is at most 6 MB (larger files: presign).',
    requestBody: { contentType: 'multipart/form-data', schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
    responses: { 201: json(envelopeOf(ref('UploadResult')), 'The stored file.') }, errors: [400, 413],
  }),
  [routeKey('POST', `${V1}/upload/multiple`)]: () => ({
    tag: 'Uploads', operationId: 'uploadFiles',
    requestBody: { contentType: 'multipart/form-data', schema: { type: 'object', required: ['files'], properties: { files: { type: 'array', maxItems: 10, items: { type: 'string', contentMediaType: 'application/octet-stream' } } } } },
    responses: { 201: json(envelopeOf({ type: 'object', required: ['files'], properties: { files: { type: 'array', items: ref('UploadResult') } } }), 'The stored files.') }, errors: [400, 413],
  }),
  [routeKey('POST', `${V1}/upload/presign`)]: () => ({
    tag: 'Uploads', operationId: 'presignUpload',
    requestBody: {},
    responses: { 201: json(envelopeOf({ type: 'object', required: ['url', 'fields', 'key'], properties: { url: str, fields: { type: 'object', additionalProperties: str }, key: str, expiresAt: str } }), 'Where and how to POST the file.') }, errors: [400, 422],
  }),
  [routeKey('POST', `${V1}/upload/complete`)]: () => ({
    tag: 'Uploads', operationId: 'completeUpload',
    requestBody: {},
    responses: { 201: json(envelopeOf(ref('UploadResult')), 'The stored file.') }, errors: [400, 422],
  }),
  [routeKey('POST', `${V1}/ai/generate`)]: () => ({
    tag: 'Plugins', operationId: 'generateText',
    description: 'Charged in credits (402 INSUFFICIENT_CREDITS when they run out); 20 requests per hour per user.',
    requestBody: {
      example: { prompt: 'Summarise my open tasks', maxTokens: 100 },
    },
    responses: { 200: json(envelopeOf({ type: 'object', required: ['text', 'tokensUsed', 'model'], properties: { text: str, tokensUsed: { type: 'integer' }, model: str } }), 'The generated text.') },
    errors: [400, 402, 422],
  }),
};

/** Schemas only the entries above use (added when a route that uses them is present). */
export const SYSTEM_SCHEMAS: Record<string, Schema> = {
  ApiIndex: {
    type: 'object',
    additionalProperties: true,
    properties: { name: str, version: str, entities: { type: 'array', items: object }, links: object },
  },
  MigrationState: {
    type: 'object',
    required: ['entity', 'layout', 'state', 'processed', 'total', 'report'],
    properties: {
      entity: str,
      layout: { type: 'object', additionalProperties: true, properties: { hash: str, previous: str } },
      state: { type: 'string', enum: ['pending', 'running', 'done', 'failed'] },
      run: { type: 'integer' },
      changes: { type: 'array', items: str },
      processed: { type: 'integer' },
      total: { type: ['integer', 'null'] },
      startedAt: { type: ['string', 'null'], format: 'date-time' },
      endedAt: { type: ['string', 'null'], format: 'date-time' },
      error: { type: ['string', 'null'] },
      indexes: { type: 'array', items: { type: 'object', properties: { field: str, token: str, ready: { type: 'boolean' } } } },
      report: { type: 'object', properties: { count: { type: 'integer' }, entries: { type: 'array', items: object } } },
    },
  },
  Webhook: {
    type: 'object',
    required: ['id', 'url', 'events', 'status', 'createdAt', 'updatedAt'],
    properties: {
      id: str,
      url: str,
      events: { type: 'array', items: str },
      status: { type: 'string', enum: ['active', 'disabled'], description: '`disabled`: by PATCH, or after deliveries failed for too long; PATCH `active` re-enables it.' },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
      disabledAt: { type: 'string', format: 'date-time', description: 'When it was disabled (while it is).' },
    },
  },
  UploadResult: {
    type: 'object',
    required: ['id', 'url', 'filename', 'size', 'type'],
    properties: { id: str, url: str, filename: str, size: { type: 'integer' }, type: str },
  },
};
