/**
 * How large a request body may be: the same figures on AWS (a WAF rule, infra/aws/body-limit.ts)
 * and locally (infra/local/gateway.ts), so that a client meets the same 413 everywhere.
 *
 * A synchronous Lambda invocation carries at most 6,291,456 bytes (6 MiB) of event JSON, and API
 * Gateway puts the body into that event: base64-encoded for the API's binary media types (4
 * characters for every 3 bytes), as a JSON string otherwise. 64 KiB of the event are kept for the
 * rest of it: the headers twice (`headers`, `multiValueHeaders`), the query string twice, the
 * request context. API Gateway caps the request line and headers of a REST API at 10 KB, so the
 * rest stays well under that.
 *
 * What remains uncertain is JSON escaping: a text body is embedded as a JSON string, where every
 * `"` and `\` of the body takes two bytes, so a text body under the limit can still make an event
 * Lambda refuses. That request gets API Gateway's integration failure (infra/aws/api.ts).
 */
export const LAMBDA_EVENT_BYTES = 6 * 1024 * 1024;
export const EVENT_RESERVE_BYTES = 64 * 1024;

/** The media types API Gateway hands to the functions base64-encoded (the REST API's binaryMediaTypes). */
export const BINARY_MEDIA_TYPES = ['multipart/form-data', 'application/octet-stream'] as const;

/** A body of any other type: 6,225,920 bytes. */
export const MAX_TEXT_BODY_BYTES = LAMBDA_EVENT_BYTES - EVENT_RESERVE_BYTES;
/** A body of a binary media type, whose base64 form must fit where a text body does: 4,669,440 bytes. */
export const MAX_BINARY_BODY_BYTES = Math.floor(MAX_TEXT_BODY_BYTES / 4) * 3;

/** The presigned upload flow, where every 413 sends large files. */
export const UPLOAD_PRESIGN_ROUTE = 'POST /api/v1/upload/presign';

/** Whether API Gateway treats a body of this Content-Type as binary (parameters such as `boundary` aside). */
export function isBinaryMediaType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return (BINARY_MEDIA_TYPES as readonly string[]).includes(type);
}

export function maxBodyBytes(contentType: string | undefined): number {
  return isBinaryMediaType(contentType) ? MAX_BINARY_BODY_BYTES : MAX_TEXT_BODY_BYTES;
}

/** 6225920 → '6,225,920' without Intl, whose first use loads ICU data (about 20 ms at a cold start). */
export const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** The 413 message, word for word the same from the WAF rule, the gateway responses and the local gateway. */
export const BODY_TOO_LARGE_MESSAGE =
  `The request body is too large: at most ${grouped(MAX_BINARY_BODY_BYTES)} bytes of ${BINARY_MEDIA_TYPES.join(' or ')}, ` +
  `${grouped(MAX_TEXT_BODY_BYTES)} bytes of any other type; upload files with ${UPLOAD_PRESIGN_ROUTE}`;

/**
 * Responses of at least this many bytes are gzip-compressed for a client that accepts gzip: by
 * API Gateway on AWS (the REST API's minimumCompressionSize), by the local gateway the same way.
 * Streamed responses (the event stream) are never compressed.
 */
export const MIN_COMPRESSION_BYTES = 1024;
