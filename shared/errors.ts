/**
 * The one error hierarchy and THE catalogue of error codes. Every error a handler or middleware
 * throws is an ApiError (or is turned into one by toApiError); shared/http/envelope.ts maps it to
 * the response. Every code the API answers is in ERROR_CATALOGUE once, with its status: the
 * classes below take their status from it, the OpenAPI document lists a route's answers from it,
 * and the error table of docs/api-conventions.md is generated from it (`npm run errors:docs`).
 * A test greps the source for codes and fails on one that is not here.
 */
export type ErrorDetails = Record<string, unknown>;

export interface CatalogueEntry {
  status: number;
  /** One line: when the API answers this code. */
  description: string;
  /** Whether the same request, sent again later, may succeed. */
  retry: boolean;
  /** Where the code appears when not as the envelope's `code`: GraphQL `extensions.code`. */
  surface?: 'graphql';
}

export const ERROR_CATALOGUE = {
  // 400
  INVALID_REQUEST: { status: 400, retry: false, description: 'The request is malformed: bad JSON, a body that is not an object, a bad query parameter or header.' },
  INVALID_FILTER: { status: 400, retry: false, description: 'The `filter` parameter does not parse or names a field or operator the entity does not have.' },
  INVALID_SORT: { status: 400, retry: false, description: 'The `sort` parameter names a field that cannot be sorted on.' },
  AGGREGATE_TOO_LARGE: { status: 400, retry: false, description: 'An aggregate would scan more records than `AGGREGATE_SCAN_LIMIT` allows (100,000 by default): narrow it with filters.' },
  INVALID_SIGNATURE: { status: 400, retry: false, description: 'An inbound provider webhook whose signature does not match its body.' },
  NO_FILE: { status: 400, retry: false, description: 'An upload without a file in the expected multipart part.' },
  EMPTY_FILE: { status: 400, retry: false, description: 'An uploaded file has no bytes.' },
  FILE_TOO_LARGE: { status: 400, retry: false, description: 'An uploaded file is over the size allowed (10 MiB).' },
  TOO_MANY_FILES: { status: 400, retry: false, description: 'More files in one upload request than allowed (10).' },
  FILE_TYPE_NOT_ALLOWED: { status: 400, retry: false, description: 'The file\'s bytes are not one of the allowed types (JPEG, PNG, PDF).' },
  QUERY_TOO_DEEP: { status: 400, retry: false, description: 'A GraphQL query nested deeper than allowed.', surface: 'graphql' },
  QUERY_TOO_COMPLEX: { status: 400, retry: false, description: 'A GraphQL query whose complexity is over the limit.', surface: 'graphql' },
  BAD_REQUEST: { status: 400, retry: false, description: 'A GraphQL request without a query, with bad variables or an unknown operation name.', surface: 'graphql' },
  GRAPHQL_PARSE_FAILED: { status: 400, retry: false, description: 'A GraphQL document that does not parse.', surface: 'graphql' },
  GRAPHQL_VALIDATION_FAILED: { status: 400, retry: false, description: 'A GraphQL document that does not validate against the schema.', surface: 'graphql' },
  BAD_USER_INPUT: { status: 400, retry: false, description: 'A GraphQL field error caused by the arguments given.', surface: 'graphql' },
  // 401
  AUTHENTICATION_FAILED: { status: 401, retry: false, description: 'No credentials where they are required, or a wrong e-mail or password.' },
  INVALID_API_KEY: { status: 401, retry: false, description: 'The API key is unknown, revoked or inactive.' },
  EXPIRED_KEY: { status: 401, retry: false, description: 'The API key is past its expiry.' },
  INVALID_SESSION: { status: 401, retry: false, description: 'The session cookie is expired or unknown: log in again.' },
  // 402
  INSUFFICIENT_CREDITS: { status: 402, retry: false, description: 'Not enough credits left for this call (text generation).' },
  // 403
  FORBIDDEN: { status: 403, retry: false, description: 'The caller may not do this: a role or a session is needed, or a cross-origin cookie request (CSRF guard).' },
  INSUFFICIENT_PERMISSIONS: { status: 403, retry: false, description: 'The API key lacks the scope the operation needs (`details.scope` names it).' },
  // 404
  NOT_FOUND: { status: 404, retry: false, description: 'The record or the path does not exist (records hidden by row-level security too).' },
  ENTITY_NOT_FOUND: { status: 404, retry: false, description: 'No entity of that name is registered.' },
  // 405
  METHOD_NOT_ALLOWED: { status: 405, retry: false, description: 'The operation is disabled for this entity or the method is not served on this path (`Allow` lists those that are).' },
  // 409
  CONFLICT: { status: 409, retry: false, description: 'The request conflicts with the current state (an e-mail already registered, a concurrent change).' },
  UNIQUE_VIOLATION: { status: 409, retry: false, description: 'Another record already holds the value of a `unique: true` field (`details` names the field).' },
  LIMIT_EXCEEDED: { status: 409, retry: false, description: 'A per-tenant limit is reached (webhook registrations).' },
  IDEMPOTENCY_KEY_IN_PROGRESS: { status: 409, retry: true, description: 'A request with this Idempotency-Key is still running; retry after `Retry-After`.' },
  // 412
  PRECONDITION_FAILED: { status: 412, retry: false, description: 'The record no longer matches `If-Match` / `If-Unmodified-Since` (`ETag` carries the current one).' },
  // 413
  PAYLOAD_TOO_LARGE: { status: 413, retry: false, description: 'The request body is over what a function can receive (about 6 MB; less for binary bodies).' },
  // 422
  VALIDATION_FAILED: { status: 422, retry: false, description: 'The body does not pass validation; `details` names every failing field.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, retry: false, description: 'This Idempotency-Key was used before with a different request.' },
  // 429
  RATE_LIMIT_EXCEEDED: { status: 429, retry: true, description: 'A rate limit is exhausted; retry after `Retry-After` seconds.' },
  TOO_MANY_STREAMS: { status: 429, retry: true, description: 'The user already has as many event streams open as allowed; close one or retry after `Retry-After`.' },
  // 500
  INTERNAL_ERROR: { status: 500, retry: false, description: 'An unexpected error; its cause is logged with the request id, never sent.' },
  // 502
  BAD_GATEWAY: { status: 502, retry: true, description: 'The function serving the request, or an upstream service, failed to answer properly.' },
  AI_PROVIDER_ERROR: { status: 502, retry: true, description: 'The text generation provider failed (its details stay in the logs).' },
  // 503
  SERVICE_UNAVAILABLE: { status: 503, retry: true, description: 'The database (or a provider) is busy or unreachable; retry after `Retry-After`.' },
  IMPORT_INCOMPLETE: { status: 503, retry: true, description: 'A database fault part-way through an import; `data` reports what was written. Retry with the same Idempotency-Key.' },
  // 504
  GATEWAY_TIMEOUT: { status: 504, retry: true, description: 'The request did not finish in time (the API\'s own limit or the gateway\'s 29 seconds).' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The catalogue's entry of `code`, undefined for a code it does not hold. */
export function catalogueEntry(code: string): CatalogueEntry | undefined {
  return Object.hasOwn(ERROR_CATALOGUE, code) ? (ERROR_CATALOGUE as Record<string, CatalogueEntry>)[code] : undefined;
}

/** The status of a catalogued code. */
export function statusOf(code: ErrorCode): number {
  return ERROR_CATALOGUE[code].status;
}

export interface ApiErrorOptions {
  details?: ErrorDetails;
  /** Extra response headers (Retry-After, Allow, ...). */
  headers?: Record<string, string>;
  /** Extra top-level body fields (retryAfter on 429). */
  extra?: Record<string, unknown>;
  /** What led to this error (ES2022 `cause`): for the logs, never serialized to the client. */
  cause?: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: ErrorDetails;
  /** Extra response headers (Retry-After, Allow, ...). */
  readonly headers: Record<string, string>;
  /** Extra top-level body fields (retryAfter on 429). */
  readonly extra: Record<string, unknown>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }

  /** An error of a catalogued code, its status from the catalogue. */
  static of(code: ErrorCode, message: string, options: ApiErrorOptions = {}): ApiError {
    return new ApiError(statusOf(code), code, message, options);
  }

  /** The body sent to the client: never the cause, never a stack. */
  toJSON(): Record<string, unknown> {
    return {
      success: false,
      error: this.message,
      code: this.code,
      ...(this.details ? { details: this.details } : {}),
      ...this.extra,
    };
  }
}

export class BadRequestError extends ApiError {
  constructor(message = 'The request is malformed', details?: ErrorDetails, code: ErrorCode = 'INVALID_REQUEST', cause?: unknown) {
    super(statusOf(code), code, message, { details, cause });
  }
}

export class ValidationError extends ApiError {
  constructor(details: ErrorDetails, message = 'Validation failed') {
    super(statusOf('VALIDATION_FAILED'), 'VALIDATION_FAILED', message, { details });
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Authentication is required', code: ErrorCode = 'AUTHENTICATION_FAILED') {
    super(statusOf(code), code, message);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message = 'Access to this resource is denied', code: ErrorCode = 'FORBIDDEN') {
    super(statusOf(code), code, message);
  }
}

export class InsufficientPermissionsError extends ApiError {
  constructor(scope: string) {
    super(statusOf('INSUFFICIENT_PERMISSIONS'), 'INSUFFICIENT_PERMISSIONS', `Missing required scope: ${scope}`, { details: { scope: `requires ${scope}` } });
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'Not found', code: ErrorCode = 'NOT_FOUND') {
    super(statusOf(code), code, message);
  }
}

export class EntityNotFoundError extends ApiError {
  constructor(entity: string) {
    super(statusOf('ENTITY_NOT_FOUND'), 'ENTITY_NOT_FOUND', `Entity '${entity}' is not registered`);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(message = 'This operation is not allowed', allow?: string[]) {
    super(statusOf('METHOD_NOT_ALLOWED'), 'METHOD_NOT_ALLOWED', message, { headers: allow ? { Allow: allow.join(', ') } : {} });
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, code: ErrorCode = 'CONFLICT', details?: ErrorDetails) {
    super(statusOf(code), code, message, { details });
  }
}

/** 409 UNIQUE_VIOLATION: another live record holds the value of a `unique: true` field; `details` names each such field. */
export class UniqueViolationError extends ApiError {
  readonly fields: string[];
  constructor(entity: string, fields: readonly string[]) {
    super(statusOf('UNIQUE_VIOLATION'), 'UNIQUE_VIOLATION', `Another record of ${entity} already has this ${fields.join(' and ')} (${fields.length > 1 ? 'each must' : 'it must'} be unique)`, {
      details: Object.fromEntries(fields.map((f) => [f, 'must be unique: another record already has this value'])),
    });
    this.fields = [...fields];
  }
}

/** 412: an If-Match / If-Unmodified-Since that the record no longer satisfies; `etag` is the current one, when there is a record to show. */
export class PreconditionFailedError extends ApiError {
  constructor(message: string, etag?: string) {
    super(statusOf('PRECONDITION_FAILED'), 'PRECONDITION_FAILED', message, { headers: etag ? { ETag: etag } : {} });
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(message = 'The request body is too large') {
    super(statusOf('PAYLOAD_TOO_LARGE'), 'PAYLOAD_TOO_LARGE', message);
  }
}

export class RateLimitError extends ApiError {
  constructor(retryAfter: number, limit: number, resetAt: number) {
    super(statusOf('RATE_LIMIT_EXCEEDED'), 'RATE_LIMIT_EXCEEDED', `Rate limit exceeded, retry in ${retryAfter} seconds`, {
      headers: { 'Retry-After': String(retryAfter) },
      extra: { retryAfter },
      details: { limit, resetAt: new Date(resetAt * 1000).toISOString() },
    });
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(message = 'The service is temporarily unavailable', retryAfter = 1, cause?: unknown) {
    super(statusOf('SERVICE_UNAVAILABLE'), 'SERVICE_UNAVAILABLE', message, { headers: { 'Retry-After': String(retryAfter) }, cause });
  }
}

export class InsufficientCreditsError extends ApiError {
  constructor(required: number, balance: number) {
    super(statusOf('INSUFFICIENT_CREDITS'), 'INSUFFICIENT_CREDITS', `Insufficient credits: this request reserves ${required}, the balance is ${balance}`, {
      details: { credits: `requires ${required}, balance ${balance}` },
    });
  }
}

/** An upstream service answered with an error the caller cannot fix (its details stay in the logs). */
export class BadGatewayError extends ApiError {
  constructor(message = 'An upstream service failed', code: ErrorCode = 'BAD_GATEWAY', cause?: unknown) {
    super(statusOf(code), code, message, { cause });
  }
}

export class GatewayTimeoutError extends ApiError {
  constructor(message = 'An upstream service did not answer in time', code: ErrorCode = 'GATEWAY_TIMEOUT', cause?: unknown) {
    super(statusOf(code), code, message, { cause });
  }
}

export class InternalError extends ApiError {
  constructor(cause?: unknown) {
    super(statusOf('INTERNAL_ERROR'), 'INTERNAL_ERROR', 'An unexpected error occurred', { cause });
  }
}

/** AWS SDK error names that mean "the database is busy or unreachable": answered 503, not 500. */
const UNAVAILABLE_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
]);

export function isUnavailableError(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { name?: string; code?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  if (e.name && UNAVAILABLE_ERROR_NAMES.has(e.name)) return true;
  if (e.code && UNAVAILABLE_ERROR_NAMES.has(e.code)) return true;
  if (e.$retryable && typeof e.$retryable === 'object' && 'throttling' in e.$retryable) return true;
  const status = e.$metadata?.httpStatusCode;
  return status === 503 || status === 500 && e.name === 'InternalServerError';
}

/** Turns anything thrown into an ApiError; unknown errors never leak their message. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isUnavailableError(error)) return new ServiceUnavailableError(undefined, undefined, error);
  return new InternalError(error);
}
