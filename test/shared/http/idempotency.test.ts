import { describe, expect, it } from 'vitest';
import {
  LOCK_TIMEOUT_MS,
  claimParams,
  classifyExisting,
  completeParams,
  idempotencyItemKey,
  idempotencyKeyOf,
  idempotencyScope,
  newClaim,
  open,
  releaseParams,
  replayResult,
  requestFingerprint,
  seal,
  sealingKey,
  storableResponse,
} from '../../../shared/http/idempotency.js';
import type { AuthContext } from '../../../shared/http/types.js';

const NOW = 1_750_000_000_000;
const user = { id: 'usr_1', email: 'a@b.c', role: 'user' as const };
const session: AuthContext = { type: 'session', user, tenantId: 'ten_1', scopes: [], sessionId: 'h' };
const apiKey: AuthContext = { type: 'api_key', user, tenantId: 'ten_1', scopes: [], keyId: 'key_1' };

describe('idempotency key header', () => {
  it('is read on POST only', () => {
    expect(idempotencyKeyOf({ method: 'POST', headers: { 'idempotency-key': 'abc' } })).toBe('abc');
    expect(idempotencyKeyOf({ method: 'PATCH', headers: { 'idempotency-key': 'abc' } })).toBeUndefined();
    expect(idempotencyKeyOf({ method: 'POST', headers: {} })).toBeUndefined();
  });

  it('accepts 1 to 255 printable ASCII characters, spaces included', () => {
    expect(idempotencyKeyOf({ method: 'POST', headers: { 'idempotency-key': 'x'.repeat(255) } })).toHaveLength(255);
    expect(idempotencyKeyOf({ method: 'POST', headers: { 'idempotency-key': 'order 42 ~!' } })).toBe('order 42 ~!');
  });

  it.each([['empty', ''], ['256 characters', 'x'.repeat(256)], ['non-ASCII', 'clé'], ['a control character', 'a\u0001b']])(
    'refuses a key that is %s with 400 INVALID_REQUEST naming the header',
    (_, value) => {
      expect(() => idempotencyKeyOf({ method: 'POST', headers: { 'idempotency-key': value } })).toThrow(
        expect.objectContaining({ status: 400, code: 'INVALID_REQUEST', details: { 'Idempotency-Key': expect.any(String) } }),
      );
    },
  );
});

describe('idempotency scope and item key', () => {
  it('scopes a key to the API key, the session user, or the client IP', () => {
    expect(idempotencyScope(apiKey, '1.2.3.4')).toBe('t:ten_1#k:key_1');
    expect(idempotencyScope(session, '1.2.3.4')).toBe('t:ten_1#u:usr_1');
    expect(idempotencyScope(undefined, '1.2.3.4')).toBe('ip:1.2.3.4');
  });

  it('stores the SHA-256 of the key, never the key', () => {
    const key = idempotencyItemKey('t:ten_1#u:usr_1', 'my-key');

    expect(key).toEqual({ pk: expect.stringMatching(/^IDEMP#t:ten_1#u:usr_1#[0-9a-f]{64}$/), sk: 'IDEMP' });
    expect(key.pk).not.toContain('my-key');
    expect(idempotencyItemKey('t:ten_2#u:usr_1', 'my-key').pk).not.toBe(key.pk);
  });
});

describe('request fingerprint', () => {
  const body = Buffer.from('{"a":1}');

  it('is stable for the same request, whatever the order of query parameters', () => {
    expect(requestFingerprint('POST', '/api/v1/tasks', { b: ['2'], a: ['1'] }, body)).toBe(requestFingerprint('post', '/api/v1/tasks', { a: ['1'], b: ['2'] }, body));
  });

  it('changes with the method, path, query or body', () => {
    const base = requestFingerprint('POST', '/api/v1/tasks', {}, body);

    expect(requestFingerprint('PATCH', '/api/v1/tasks', {}, body)).not.toBe(base);
    expect(requestFingerprint('POST', '/api/v1/products', {}, body)).not.toBe(base);
    expect(requestFingerprint('POST', '/api/v1/tasks', { x: ['1'] }, body)).not.toBe(base);
    expect(requestFingerprint('POST', '/api/v1/tasks', {}, Buffer.from('{"a":2}'))).not.toBe(base);
    expect(requestFingerprint('POST', '/api/v1/tasks', {}, undefined)).not.toBe(base);
  });
});

describe('lock, completion and release parameters', () => {
  const claim = newClaim('t:ten_1#u:usr_1', 'k1', 'fp', NOW);

  it('takes the lock only when the key is free, expired, or abandoned by the same request', () => {
    const params = claimParams(claim, NOW, 'Limits');

    expect(params.TableName).toBe('Limits');
    expect(params.Item).toMatchObject({ ...claim.key, status: 'in_progress', fingerprint: 'fp', lockId: claim.lockId, lockedAt: NOW, expiresAt: NOW / 1000 + 86_400 });
    expect(params.ConditionExpression).toContain('attribute_not_exists(pk)');
    expect(params.ExpressionAttributeValues).toMatchObject({ ':now': NOW / 1000, ':fingerprint': 'fp', ':staleBefore': NOW - LOCK_TIMEOUT_MS });
  });

  it('completes and releases only while the lock is still this request’s', () => {
    const sealed = new Uint8Array([1, 2, 3]);

    expect(completeParams(claim, sealed, NOW, 'Limits')).toMatchObject({
      Item: { ...claim.key, status: 'completed', response: sealed, expiresAt: claim.expiresAt },
      ConditionExpression: 'lockId = :lockId',
      ExpressionAttributeValues: { ':lockId': claim.lockId },
    });
    expect(releaseParams(claim, 'Limits')).toMatchObject({ Key: claim.key, ConditionExpression: 'lockId = :lockId' });
  });
});

describe('an existing record', () => {
  const fresh = { status: 'in_progress', fingerprint: 'fp', lockedAt: NOW - 1000, expiresAt: NOW / 1000 + 100 };

  it('is replayed when completed for the same request', () => {
    expect(classifyExisting({ ...fresh, status: 'completed' }, 'fp', NOW)).toBe('replay');
  });

  it('refuses another request under the same key, completed or not', () => {
    expect(classifyExisting({ ...fresh, status: 'completed' }, 'other', NOW)).toBe('reused');
    expect(classifyExisting(fresh, 'other', NOW)).toBe('reused');
  });

  it('is in progress while its lock is younger than the timeout, then may be taken over', () => {
    expect(classifyExisting(fresh, 'fp', NOW)).toBe('in_progress');
    expect(classifyExisting({ ...fresh, lockedAt: NOW - LOCK_TIMEOUT_MS - 1 }, 'fp', NOW)).toBe('retry');
  });

  it('is held until the request\'s own deadline (its remaining time, at most the timeout), then may be taken over', () => {
    const claim = newClaim('ip:1', 'k', 'fp', NOW, 5_000);
    expect(claim.lockedUntil).toBe(NOW + 5_000);
    expect(newClaim('ip:1', 'k', 'fp', NOW, 10 * 60_000).lockedUntil).toBe(NOW + LOCK_TIMEOUT_MS);
    expect(newClaim('ip:1', 'k', 'fp', NOW, 0).lockedUntil).toBe(NOW + LOCK_TIMEOUT_MS);
    expect(claimParams(claim, NOW, 'Limits').Item).toMatchObject({ lockedUntil: NOW + 5_000 });
    expect(claimParams(claim, NOW, 'Limits').ConditionExpression).toContain('lockedUntil < :nowMs');

    const held = { ...fresh, lockedUntil: NOW + 5_000 };
    expect(classifyExisting(held, 'fp', NOW + 4_999)).toBe('in_progress');
    expect(classifyExisting(held, 'fp', NOW + 5_001)).toBe('retry');
  });

  it('is ignored when gone or expired', () => {
    expect(classifyExisting(undefined, 'fp', NOW)).toBe('retry');
    expect(classifyExisting({ ...fresh, status: 'completed', expiresAt: NOW / 1000 - 1 }, 'other', NOW)).toBe('retry');
  });
});

describe('stored responses', () => {
  const result = {
    statusCode: 201,
    headers: { 'Content-Type': 'application/json', 'X-Request-ID': 'r1', 'X-RateLimit-Remaining': '9', 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': 'x' },
    multiValueHeaders: { 'Set-Cookie': ['session=abc'] },
    body: '{"success":true}',
  };

  it('keeps status, body and the response’s own headers, not the per-request ones', () => {
    expect(storableResponse(result)).toEqual({
      statusCode: 201,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
      multiValueHeaders: { 'Set-Cookie': ['session=abc'] },
      body: '{"success":true}',
    });
  });

  it('stores no error response and no streamed body', () => {
    expect(storableResponse({ ...result, statusCode: 422 })).toBeUndefined();
    expect(storableResponse({ ...result, body: {} as never })).toBeUndefined();
    expect(storableResponse(undefined)).toBeUndefined();
  });

  it('replays with this request’s id and rate-limit headers, marked as replayed', () => {
    const replay = replayResult(storableResponse(result)!, { requestId: 'r2', responseHeaders: { 'X-RateLimit-Remaining': '3' } });

    expect(replay).toEqual({
      statusCode: 201,
      headers: { 'X-Request-ID': 'r2', 'X-RateLimit-Remaining': '3', 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Idempotent-Replayed': 'true' },
      multiValueHeaders: { 'Set-Cookie': ['session=abc'] },
      body: '{"success":true}',
    });
  });

  it('seals a response so that only the same key and scope open it', () => {
    const stored = storableResponse(result)!;
    const sealed = seal(stored, sealingKey('scope', 'key'));

    expect(Buffer.from(sealed).includes('session=abc')).toBe(false);
    expect(open(sealed, sealingKey('scope', 'key'))).toEqual(stored);
    expect(() => open(sealed, sealingKey('scope', 'other key'))).toThrow();
    expect(() => open(sealed, sealingKey('other scope', 'key'))).toThrow();
  });
});
