/**
 * The parts of the OpenAPI document that do not depend on the registry: the envelopes, the error
 * responses with their codes, the response headers, the security schemes and the schemas of the
 * system resources (users, tenants, keys, ...). Plain data, read by document.ts.
 */
import { ERROR_CATALOGUE } from '../errors.js';

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

interface ErrorStatus {
  name: string;
  description: string;
  example: Schema;
}

/** Each error status's response component; the codes it carries come from the catalogue (shared/errors.ts). */
const STATUS_RESPONSES: Readonly<Record<number, ErrorStatus>> = {
  400: {
    name: 'BadRequest',
    description: 'The request is malformed: bad JSON, a body that is not an object, a bad query parameter, filter or sort.',
    example: { success: false, error: 'limit must be a positive integer', code: 'INVALID_REQUEST', details: { limit: 'must be a positive integer' } },
  },
  401: {
    name: 'Unauthorized',
    description: 'Missing or invalid credentials.',
    example: { success: false, error: 'Authentication is required', code: 'AUTHENTICATION_FAILED' },
  },
  402: {
    name: 'PaymentRequired',
    description: 'Not enough credits left for this call.',
    example: { success: false, error: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS' },
  },
  403: {
    name: 'Forbidden',
    description: 'Valid credentials without the needed scope or role, or a cross-origin cookie request (CSRF guard).',
    example: { success: false, error: 'Missing required scope: tasks:write', code: 'INSUFFICIENT_PERMISSIONS', details: { scope: 'requires tasks:write' } },
  },
  404: {
    name: 'NotFound',
    description: 'The record, the entity or the path does not exist (records of other users under row-level security answer 404 too).',
    example: { success: false, error: 'Not found', code: 'NOT_FOUND' },
  },
  405: {
    name: 'MethodNotAllowed',
    description: 'The operation is disabled for this entity or the method is not served on this path.',
    example: { success: false, error: 'DELETE is not allowed on /api/v1/orders/ord_1', code: 'METHOD_NOT_ALLOWED' },
  },
  409: {
    name: 'Conflict',
    description: 'The request conflicts with the current state (an e-mail already used, a value of a unique field another record holds: UNIQUE_VIOLATION with `details` naming the field, a concurrent change, an Idempotency-Key still in progress).',
    example: { success: false, error: 'A user with this e-mail already exists', code: 'CONFLICT' },
  },
  412: {
    name: 'PreconditionFailed',
    description: 'The record no longer matches `If-Match` or `If-Unmodified-Since`; `ETag` carries its current version.',
    example: { success: false, error: "The task 'tsk_1' has changed; it was not written", code: 'PRECONDITION_FAILED' },
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'The request is larger than 6 MB.',
    example: { success: false, error: 'The request body is too large', code: 'PAYLOAD_TOO_LARGE' },
  },
  422: {
    name: 'ValidationFailed',
    description: 'The body does not pass validation; `details` names each field.',
    example: { success: false, error: 'Validation failed', code: 'VALIDATION_FAILED', details: { title: 'is required' } },
  },
  429: {
    name: 'TooManyRequests',
    description: 'A rate limit is exhausted; retry after `Retry-After` seconds.',
    example: {
      success: false,
      error: 'Rate limit exceeded, retry in 60 seconds',
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 1000, resetAt: '2026-01-01T13:00:00.000Z' },
      retryAfter: 60,
    },
  },
  500: {
    name: 'InternalError',
    description: 'An unexpected error (never with internal details).',
    example: { success: false, error: 'An unexpected error occurred', code: 'INTERNAL_ERROR' },
  },
  502: {
    name: 'BadGateway',
    description: 'The function serving the request, or a service it calls, failed to answer.',
    example: { success: false, error: 'An upstream service failed', code: 'BAD_GATEWAY' },
  },
  503: {
    name: 'ServiceUnavailable',
    description: 'The database is temporarily unavailable; retry after `Retry-After` seconds.',
    example: { success: false, error: 'The service is temporarily unavailable', code: 'SERVICE_UNAVAILABLE' },
  },
  504: {
    name: 'GatewayTimeout',
    description: 'The request did not finish in time; retry it (with the same Idempotency-Key for a POST).',
    example: { success: false, error: 'The request did not finish in time; retry it (with the same Idempotency-Key for a POST)', code: 'GATEWAY_TIMEOUT' },
  },
};

/** The codes of the catalogue answered with `status`, in catalogue order. */
export function codesOfStatus(status: number): string[] {
  return Object.entries(ERROR_CATALOGUE).filter(([, e]) => e.status === status).map(([code]) => code);
}

/** The error statuses the document describes, each with the codes it may carry. */
export const ERROR_STATUSES: Readonly<Record<number, ErrorStatus & { codes: readonly string[] }>> = Object.fromEntries(
  Object.entries(STATUS_RESPONSES).map(([status, e]) => [status, { ...e, codes: codesOfStatus(Number(status)) }]),
);

const integerHeader = (description: string): Schema => ({ description, schema: { type: 'integer' } });

export const HEADERS: Record<string, Schema> = {
  'X-Request-ID': { description: 'The request id (the one sent, else a new one); quote it when reporting a problem.', schema: { type: 'string' } },
  'X-RateLimit-Limit': integerHeader('Requests allowed in the current window of the tightest limit that applies.'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.'),
  'X-RateLimit-Reset': integerHeader('When the current window ends (Unix seconds).'),
  'Retry-After': integerHeader('Seconds to wait before retrying.'),
  ETag: { description: 'Validator of the representation; send it back in If-None-Match to get 304.', schema: { type: 'string' } },
  'X-Total-Count': integerHeader('Records matching the query.'),
  'X-Page': integerHeader('The page returned.'),
  'X-Per-Page': integerHeader('The page size used.'),
  Location: { description: 'Where a redirect sends the browser.', schema: { type: 'string' } },
  Link: { description: 'RFC 8288 links: rel="next" and rel="prev" pages of the same query.', schema: { type: 'string' } },
};

/** Headers of every response of a counted (rate-limited) route. */
export const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

export const SECURITY_SCHEMES: Record<string, Schema> = {
  bearerApiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sk_live_… / sk_test_…',
    description: 'An API key: `Authorization: Bearer sk_live_<40 characters>`, or a JWT of a configured identity provider (docs/authentication.md). The scopes listed on an operation are the key scopes it needs.',
  },
  apiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'The same API key in the `X-API-Key` header.',
  },
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'session',
    description: 'The session cookie set by `POST /api/v1/auth/login` (HttpOnly). A session of a user holds read, write and delete on every entity; an admin holds `*`.',
  },
};

const isoDateTime: Schema = { type: 'string', format: 'date-time' };
const object: Schema = { type: 'object', additionalProperties: true };

export const COMMON_SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object',
    description: 'The error envelope of every failed request.',
    required: ['success', 'error', 'code'],
    properties: {
      success: { const: false },
      error: { type: 'string', description: 'A human-readable message.' },
      code: { type: 'string', description: 'A machine-readable code (see each response for the codes it may carry).', examples: ['VALIDATION_FAILED'] },
      details: { type: 'object', description: 'Field name (or parameter) → message.', additionalProperties: true },
      retryAfter: { type: 'integer', description: 'Seconds to wait (429 only).' },
    },
  },
  Message: {
    type: 'object',
    required: ['success'],
    properties: { success: { const: true }, message: { type: 'string' }, data: {} },
  },
  Pagination: {
    type: 'object',
    required: ['page', 'limit', 'total', 'totalPages', 'hasNext', 'hasPrev'],
    properties: {
      page: { type: 'integer', minimum: 1 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      total: { type: 'integer', minimum: 0 },
      totalPages: { type: 'integer', minimum: 0 },
      hasNext: { type: 'boolean' },
      hasPrev: { type: 'boolean' },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` to continue after this page.' },
    },
  },
  Health: {
    type: 'object',
    required: ['status', 'version', 'timestamp'],
    properties: {
      status: { type: 'string', enum: ['ok', 'degraded', 'unavailable'], description: '`degraded`: a part of the local runtime is restarting (`restarting` names it).' },
      version: { type: 'string' },
      timestamp: isoDateTime,
      restarting: { type: 'array', items: { type: 'string' } },
    },
  },
  SessionUser: {
    type: 'object',
    required: ['id', 'email', 'name', 'role', 'tenantId'],
    properties: {
      id: { type: 'string', examples: ['usr_3kTq9aZ1'] },
      email: { type: 'string', format: 'email' },
      name: { type: 'string' },
      role: { type: 'string', enum: ['admin', 'user'] },
      tenantId: { type: 'string' },
    },
  },
  Session: {
    type: 'object',
    required: ['user', 'expiresAt'],
    properties: { user: ref('SessionUser'), expiresAt: isoDateTime },
  },
  User: {
    type: 'object',
    required: ['id', 'tenantId', 'email', 'name', 'role', 'createdAt', 'updatedAt'],
    properties: {
      id: { type: 'string' },
      tenantId: { type: 'string' },
      email: { anyOf: [{ type: 'string', format: 'email' }, { const: '' }], description: 'Empty for a user of an identity provider whose tokens carry no e-mail address.' },
      name: { type: 'string' },
      role: { type: 'string', enum: ['admin', 'user'] },
      status: { type: 'string', enum: ['active', 'disabled'], description: '`disabled`: every credential of the user is refused.' },
      issuer: { type: 'string', description: 'The identity provider the user signs in with (absent for users with a password).' },
      preferences: object,
      createdAt: isoDateTime,
      updatedAt: isoDateTime,
    },
  },
  SignInProvider: {
    type: 'object',
    required: ['id', 'name'],
    properties: { id: { type: 'string', description: 'GET /api/v1/auth/oidc/{id} starts the sign-in.' }, name: { type: 'string', examples: ['Okta'] } },
  },
  Tenant: {
    type: 'object',
    required: ['id', 'name', 'settings'],
    properties: { id: { type: 'string' }, name: { type: 'string' }, settings: object },
  },
  CreatedTenant: {
    type: 'object',
    required: ['id', 'name', 'admin'],
    properties: { id: { type: 'string' }, name: { type: 'string' }, settings: object, admin: ref('SessionUser') },
  },
  ApiKey: {
    type: 'object',
    required: ['id', 'keyPrefix', 'name', 'scopes', 'status', 'createdAt'],
    properties: {
      id: { type: 'string', examples: ['key_7Hq2mX'] },
      keyPrefix: { type: 'string', description: 'The first 12 characters of the key, for display.' },
      name: { type: 'string' },
      scopes: { type: 'array', items: { type: 'string' }, examples: [['tasks:read', 'tasks:write']] },
      status: { type: 'string', enum: ['active', 'inactive', 'expired'] },
      expiresAt: { type: ['string', 'null'], format: 'date-time' },
      lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
      createdAt: isoDateTime,
      updatedAt: isoDateTime,
      environment: { type: 'string', enum: ['live', 'test'] },
      userId: { type: 'string' },
      totalRequests: { type: 'integer' },
      requestsLast24h: { type: 'integer' },
    },
  },
  CreatedApiKey: {
    allOf: [ref('ApiKey'), { type: 'object', required: ['key'], properties: { key: { type: 'string', description: 'The full key: shown in this response only.' } } }],
  },
  AuditEntry: {
    type: 'object',
    required: ['id', 'keyId', 'action', 'timestamp'],
    properties: {
      id: { type: 'string' },
      keyId: { type: 'string' },
      action: { type: 'string', examples: ['created', 'updated', 'revoked'] },
      ipAddress: { type: 'string' },
      userAgent: { type: 'string' },
      timestamp: isoDateTime,
      details: { type: 'object', additionalProperties: true, description: 'Who acted (`by`) and, for an update, the `fields` changed.' },
    },
  },
  BatchRequest: {
    type: 'object',
    required: ['requests'],
    properties: {
      requests: {
        type: 'array',
        minItems: 1,
        maxItems: 20,
        items: {
          type: 'object',
          required: ['id', 'method', 'path'],
          // What shared/batch/validate.ts (parseBatch) accepts, which checks the body.
          properties: {
            id: { type: 'string', minLength: 1, maxLength: 128, description: 'Unique within the batch.' },
            method: { type: 'string', enum: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'], description: 'Also accepted in lower case.' },
            path: { type: 'string', maxLength: 2048, pattern: '^/(?!/)', description: 'Relative to /api/v1, e.g. /tasks/tsk_1.' },
            body: object,
          },
        },
      },
    },
  },
  BatchResponse: {
    type: 'object',
    required: ['success', 'operationId', 'responses'],
    properties: {
      success: { const: true },
      operationId: { type: 'string', description: 'Names the batch for POST /api/v1/operations/{operationId}/undo: every record write of its sub-requests is reverted.' },
      responses: {
        type: 'array',
        items: { type: 'object', required: ['id', 'status', 'body'], properties: { id: { type: 'string' }, status: { type: 'integer' }, body: {} } },
      },
    },
  },
  GraphQLRequest: {
    type: 'object',
    required: ['query'],
    properties: { query: { type: 'string' }, variables: object, operationName: { type: ['string', 'null'] } },
  },
  GraphQLResponse: {
    type: 'object',
    description: 'A GraphQL result (not the REST envelope): `data` and/or `errors`.',
    properties: {
      data: { type: ['object', 'null'] },
      errors: { type: 'array', items: { type: 'object', required: ['message'], properties: { message: { type: 'string' }, extensions: object } } },
    },
  },
  EntityDescription: {
    type: 'object',
    required: ['entity', 'methods', 'schema', 'relations', 'permissions', 'rateLimit'],
    properties: {
      entity: { type: 'string' },
      slug: { type: 'string' },
      methods: { type: 'array', items: { type: 'string', enum: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'] } },
      schema: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          required: ['type', 'required', 'generated'],
          properties: {
            type: { type: 'string', description: 'string, number, enum, datetime, date (YYYY-MM-DD), boolean, uuid; array for manyToMany id lists.' },
            required: { type: 'boolean' },
            generated: { type: 'boolean' },
            unique: { type: 'boolean', description: 'No two live records hold the same value (409 UNIQUE_VIOLATION); absent when false.' },
          },
        },
      },
      relations: {
        type: 'object',
        additionalProperties: { type: 'object', properties: { type: { type: 'string' }, entity: { type: 'string' }, foreignKey: { type: 'string' } } },
      },
      permissions: {
        type: 'object',
        required: ['read', 'write', 'delete'],
        properties: { read: { type: 'boolean' }, write: { type: 'boolean' }, delete: { type: 'boolean' } },
      },
      rateLimit: { type: 'object', required: ['limit', 'window'], properties: { limit: { type: 'integer' }, window: { type: 'string' } } },
    },
  },
  DistinctValue: {
    type: 'object',
    required: ['value', 'label', 'entityType'],
    properties: { value: { type: ['string', 'number'], description: 'A number field\'s values are numbers (in numeric order); any other field\'s, text (in UTF-8 byte order).' }, label: { type: 'string' }, entityType: { type: 'string' } },
  },
  BulkFailure: {
    type: 'object',
    required: ['index', 'error'],
    properties: { index: { type: 'integer' }, id: { type: 'string' }, error: { type: 'string' }, code: { type: 'string' }, details: object },
  },
  Revision: {
    type: 'object',
    required: ['revision', 'at', 'operation', 'actor', 'changes'],
    properties: {
      revision: { type: 'integer', minimum: 1, description: 'The record\'s version after the write.' },
      at: { type: 'string', format: 'date-time' },
      operation: { type: 'string', enum: ['create', 'update', 'delete', 'restore', 'migration'] },
      actor: { type: 'object', required: ['type', 'id'], properties: { type: { type: 'string', enum: ['session', 'api_key', 'oidc', 'system'] }, id: { type: 'string', description: 'The user\'s id, or the API key\'s.' } } },
      requestId: { type: ['string', 'null'] },
      operationId: { type: ['string', 'null'], description: 'The bulk call (bulk update or delete) the write belonged to.' },
      changes: { type: 'object', additionalProperties: { type: 'object', properties: { from: {}, to: {} } }, description: 'The fields the write changed, before and after (null: absent). Protected fields never appear.' },
    },
  },
  ImportFailure: {
    type: 'object',
    required: ['index', 'error'],
    properties: { index: { type: 'integer' }, item: {}, error: { type: 'string' } },
  },
  GenericObject: object,
};

/** `{success: true, data: <schema>}`, plus pagination for lists. */
export function envelopeOf(data: Schema, extra: { pagination?: boolean; message?: boolean; warning?: boolean } = {}): Schema {
  const properties: Record<string, Schema> = { success: { const: true }, data };
  const required = ['success', 'data'];
  if (extra.pagination) {
    properties.pagination = ref('Pagination');
    required.push('pagination');
  }
  if (extra.message) properties.message = { type: 'string' };
  if (extra.warning) properties.warning = { type: 'string' };
  return { type: 'object', required, properties };
}
