/** The request body limits shared by the WAF rule and the local gateway (shared/body-limits.ts). */
import { describe, expect, it } from 'vitest';
import {
  BODY_TOO_LARGE_MESSAGE,
  isBinaryMediaType,
  LAMBDA_EVENT_BYTES,
  MAX_BINARY_BODY_BYTES,
  MAX_TEXT_BODY_BYTES,
  maxBodyBytes,
} from '../../shared/body-limits.js';
import { MULTIPART_MAX_BYTES } from '../../shared/uploads/limits.js';

describe('body limits', () => {
  it('leave 64 KiB of the 6,291,456-byte Lambda event for the rest of it, a binary body counted as base64', () => {
    expect(LAMBDA_EVENT_BYTES).toBe(6_291_456);
    expect(MAX_TEXT_BODY_BYTES).toBe(6_225_920);
    expect(MAX_BINARY_BODY_BYTES).toBe(4_669_440);
    expect(Buffer.alloc(MAX_BINARY_BODY_BYTES).toString('base64')).toHaveLength(MAX_TEXT_BODY_BYTES);
    expect(MULTIPART_MAX_BYTES).toBe(MAX_BINARY_BODY_BYTES);
  });

  it('tell binary media types by Content-Type, parameters and case aside', () => {
    expect(isBinaryMediaType('multipart/form-data; boundary=abc')).toBe(true);
    expect(isBinaryMediaType(' Application/Octet-Stream')).toBe(true);
    expect(isBinaryMediaType('application/json')).toBe(false);
    expect(isBinaryMediaType(undefined)).toBe(false);
    expect(maxBodyBytes('multipart/form-data; boundary=abc')).toBe(MAX_BINARY_BODY_BYTES);
    expect(maxBodyBytes('application/json; charset=utf-8')).toBe(MAX_TEXT_BODY_BYTES);
  });

  it('name both limits and the presigned upload flow in the 413 message', () => {
    expect(BODY_TOO_LARGE_MESSAGE).toContain('4,669,440 bytes of multipart/form-data or application/octet-stream');
    expect(BODY_TOO_LARGE_MESSAGE).toContain('6,225,920 bytes of any other type');
    expect(BODY_TOO_LARGE_MESSAGE).toContain('POST /api/v1/upload/presign');
  });
});

