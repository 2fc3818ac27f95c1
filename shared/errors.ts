/**
 * The one error hierarchy. Every error a handler or middleware throws is an ApiError (or is
 * turned into one by toApiError); shared/http/error-envelope.ts maps it to the response.
 */
export type ErrorDetails = Record<string, unknown>;

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
    options: { details?: ErrorDetails; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }

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
  constructor(message = 'The request is malformed', details?: ErrorDetails, code = 'INVALID_REQUEST') {
    super(400, code, message, { details });
  }
}

export class ValidationError extends ApiError {
  constructor(details: ErrorDetails, message = 'Validation failed') {
    super(422, 'VALIDATION_FAILED', message, { details });
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Authentication is required', code = 'AUTHENTICATION_FAILED') {
    super(401, code, message);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message = 'Access to this resource is denied', code = 'FORBIDDEN') {
    super(403, code, message);
  }
}

export class InsufficientPermissionsError extends ApiError {
  constructor(scope: string) {
    super(403, 'INSUFFICIENT_PERMISSIONS', `Missing required scope: ${scope}`, { details: { scope: `requires ${scope}` } });
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'Not found', code = 'NOT_FOUND') {
    super(404, code, message);
  }
}

export class EntityNotFoundError extends ApiError {
  constructor(entity: string) {
    super(404, 'ENTITY_NOT_FOUND', `Entity '${entity}' is not registered`);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(message = 'This operation is not allowed', allow?: string[]) {
    super(405, 'METHOD_NOT_ALLOWED', message, { headers: allow ? { Allow: allow.join(', ') } : {} });
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, code = 'CONFLICT', details?: ErrorDetails) {
    super(409, code, message, { details });
  }
}

/** 409 UNIQUE_VIOLATION: another live record holds the value of a `unique: true` field; `details` names each such field. */
export class UniqueViolationError extends ApiError {
  readonly fields: string[];
  constructor(entity: string, fields: readonly string[]) {
    super(409, 'UNIQUE_VIOLATION', `Another record of ${entity} already has this ${fields.join(' and ')} (${fields.length > 1 ? 'each must' : 'it must'} be unique)`, {
      details: Object.fromEntries(fields.map((f) => [f, 'must be unique: another record already has this value'])),
    });
    this.fields = [...fields];
  }
}

/** 412: an If-Match / If-Unmodified-Since that the record no longer satisfies; `etag` is the current one, when there is a record to show. */
export class PreconditionFailedError extends ApiError {
  constructor(message: string, etag?: string) {
    super(412, 'PRECONDITION_FAILED', message, { headers: etag ? { ETag: etag } : {} });
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(message = 'The request body is too large') {
    super(413, 'PAYLOAD_TOO_LARGE', message);
  }
}

export class RateLimitError extends ApiError {
  constructor(retryAfter: number, limit: number, resetAt: number) {
    super(429, 'RATE_LIMIT_EXCEEDED', `Rate limit exceeded, retry in ${retryAfter} seconds`, {
      headers: { 'Retry-After': String(retryAfter) },
      extra: { retryAfter },
      details: { limit, resetAt: new Date(resetAt * 1000).toISOString() },
    });
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(message = 'The service is temporarily unavailable', retryAfter = 1) {
    super(503, 'SERVICE_UNAVAILABLE', message, { headers: { 'Retry-After': String(retryAfter) } });
  }
}

export class InsufficientCreditsError extends ApiError {
  constructor(required: number, balance: number) {
    super(402, 'INSUFFICIENT_CREDITS', `Insufficient credits: this request reserves ${required}, the balance is ${balance}`, {
      details: { credits: `requires ${required}, balance ${balance}` },
    });
  }
}

/** An upstream service answered with an error the caller cannot fix (its details stay in the logs). */
export class BadGatewayError extends ApiError {
  constructor(message = 'An upstream service failed', code = 'BAD_GATEWAY') {
    super(502, code, message);
  }
}

export class GatewayTimeoutError extends ApiError {
  constructor(message = 'An upstream service did not answer in time', code = 'GATEWAY_TIMEOUT') {
    super(504, code, message);
  }
}

export class InternalError extends ApiError {
  constructor() {
    super(500, 'INTERNAL_ERROR', 'An unexpected error occurred');
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
  if (isUnavailableError(error)) return new ServiceUnavailableError();
  return new InternalError();
}
