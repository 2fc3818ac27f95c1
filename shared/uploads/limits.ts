import { LAMBDA_EVENT_BYTES, MAX_BINARY_BODY_BYTES } from '../body-limits.js';

/**
 * What an upload may be (SPEC.md "Limits"): at most 10 MiB, one of three media types judged
 * from the bytes, at most 10 files in one multiple upload.
 */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_FILES = 10;
export const ALLOWED_TYPES = ['image/jpeg', 'image/png', 'application/pdf'] as const;
export type AllowedType = (typeof ALLOWED_TYPES)[number];

/**
 * A Lambda request is at most 6 MB (6,291,456 bytes) as an event, and API Gateway hands binary
 * bodies over base64-encoded (4 characters per 3 bytes). Keeping 64 KiB for headers and the rest
 * of the event, a multipart body of at most this many bytes reaches the function on AWS; the
 * handler refuses larger ones with 413 everywhere, so a client meets locally what it would meet
 * in production.
 */
export const LAMBDA_REQUEST_BYTES = LAMBDA_EVENT_BYTES;
export const MULTIPART_MAX_BYTES = MAX_BINARY_BODY_BYTES;

/** A presigned POST is valid this long. */
export const PRESIGN_TTL_SECONDS = 15 * 60;
/** A presigned GET behind /api/v1/files/{id} is valid this long. */
export const DOWNLOAD_TTL_SECONDS = 60;

/** Objects not yet completed live under this prefix; the bucket expires them after a day. */
export const PENDING_PREFIX = 'pending/';

export function isAllowedType(type: string): type is AllowedType {
  return (ALLOWED_TYPES as readonly string[]).includes(type);
}
