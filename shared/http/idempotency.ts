/**
 * Idempotency-Key (CONTRACT.md) on every POST: a retry with the same key and the same request
 * within 24 hours gets the first response back (with `Idempotent-Replayed: true`) and the work is
 * not done again; the same key with a different request answers 422 IDEMPOTENCY_KEY_REUSED; a
 * retry while the first is still running answers 409 IDEMPOTENCY_KEY_IN_PROGRESS (Retry-After: 1),
 * at most until the first request's own time limit (its Lambda's deadline, 29 s at most): a lock
 * whose request died (a crashed container) lapses then. The local runtime releases, when it
 * starts, every lock taken before (nothing from an earlier run still runs).
 *
 * Hand-written rather than Powertools idempotency: the record must live in the `limits` table
 * under our own key layout, be scoped to the caller, and hold the FINAL API Gateway response
 * (after the envelope), which Powertools' middy integration does not capture.
 *
 * Two middlewares, one per end of the stack (stack.ts):
 * - `claim` (a `before`, registered last: after authentication, rate limit and JSON parsing)
 *   validates the header and takes the lock with one conditional PutItem; when the key is
 *   already known it reads the record once and replays, refuses (422) or reports 409.
 * - `record` (an `after`/`onError`, registered before the envelope, so it runs after the
 *   envelope has built the response) stores a success (< 400) or releases the lock on an error
 *   response, so that the client can retry a failed request with the same key.
 *
 * Item: pk `IDEMP#<scope>#<sha256 hex of the key>`, sk `IDEMP`; scope is the caller
 * (`t:<tenant>#k:<keyId>` for an API key, `t:<tenant>#u:<userId>` for a session, `ip:<ip>` for
 * anonymous calls), so two callers never share a key. Attributes: status (in_progress |
 * completed), fingerprint (SHA-256 of method, path, query and raw body), lockId, lockedAt (ms),
 * lockedUntil (ms: the request's deadline), expiresAt (TTL, 24 hours after the first request), response (completed only).
 *
 * The stored response is sealed with AES-256-GCM under a key derived (HKDF) from the
 * Idempotency-Key itself and the scope: responses can carry secrets (a new API key, a session
 * cookie) and the table only ever sees the key's hash, so a reader of the table cannot open them.
 * Responses whose sealed form exceeds MAX_STORED_BYTES are not stored (the lock is released).
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { ApiError, BadRequestError } from '../errors.js';
import { logger } from '../logger.js';
import { onFirstUse } from '../on-first-use.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest, AuthContext } from './types.js';

/** node:crypto, loaded by the first request with an Idempotency-Key, not at every cold start. */
function nodeCrypto(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
/**
 * A lock is held until the request's own time limit (the Lambda's remaining time when the lock is
 * taken: 29 s at most, API Gateway's integration timeout), never longer than this: past it no
 * request can still be running, so a retry takes the lock over.
 */
export const LOCK_TIMEOUT_MS = 30_000;
/** DynamoDB items hold 400 KB; larger responses are not stored. */
export const MAX_STORED_BYTES = 350_000;

/** 1 to 255 printable ASCII characters (space included). */
const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;

/** Headers that belong to the request that is answered, not to the stored response. */
const PER_REQUEST_HEADER = /^(x-request-id|x-ratelimit-.*|retry-after|access-control-.*|vary|deprecation|sunset)$/i;

export class IdempotencyKeyReusedError extends ApiError {
  constructor() {
    super(422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request', {
      details: { [IDEMPOTENCY_HEADER]: 'was used with a different method, path or body' },
    });
  }
}

export class IdempotencyKeyInProgressError extends ApiError {
  constructor() {
    super(409, 'IDEMPOTENCY_KEY_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly', {
      headers: { 'Retry-After': '1' },
    });
  }
}

// ---- pure builders ------------------------------------------------------------------------

/** The header's value when the request is a POST that carries one; 400 when it is malformed. */
export function idempotencyKeyOf(req: Pick<ApiRequest, 'method' | 'headers'>): string | undefined {
  if (req.method !== 'POST') return undefined;
  const value = req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  if (value === undefined) return undefined;
  if (!KEY_PATTERN.test(value)) {
    throw new BadRequestError(`${IDEMPOTENCY_HEADER} must be 1 to 255 printable characters`, {
      [IDEMPOTENCY_HEADER]: 'must be 1 to 255 printable ASCII characters',
    });
  }
  return value;
}

/** Whose key it is: the API key, else the session's user, else the client IP. */
export function idempotencyScope(auth: AuthContext | undefined, ip: string): string {
  if (!auth) return `ip:${ip}`;
  if (auth.type === 'api_key' && auth.keyId) return `t:${auth.tenantId}#k:${auth.keyId}`;
  return `t:${auth.tenantId}#u:${auth.user.id}`;
}

export function idempotencyItemKey(scope: string, key: string): { pk: string; sk: 'IDEMP' } {
  return { pk: `IDEMP#${scope}#${nodeCrypto().createHash('sha256').update(key).digest('hex')}`, sk: 'IDEMP' };
}

/** SHA-256 of method, path, query (sorted) and the raw body bytes. */
export function requestFingerprint(method: string, path: string, multiQuery: Record<string, string[]>, rawBody: Buffer | undefined): string {
  const query = Object.keys(multiQuery)
    .sort()
    .flatMap((name) => multiQuery[name].map((v) => `${encodeURIComponent(name)}=${encodeURIComponent(v)}`))
    .join('&');
  const hash = nodeCrypto().createHash('sha256').update(`${method.toUpperCase()}\n${path}\n${query}\n`);
  if (rawBody) hash.update(rawBody);
  return hash.digest('hex');
}

export interface Claim {
  key: { pk: string; sk: 'IDEMP' };
  lockId: string;
  fingerprint: string;
  expiresAt: number;
  /** The request's deadline (ms): the lock is abandoned after it. */
  lockedUntil: number;
  /** Encryption key of the stored response. */
  secret: Buffer;
}

/** `timeLimitMs`: what the request has left to run (the Lambda's remaining time); bounded by LOCK_TIMEOUT_MS. */
export function newClaim(scope: string, idempotencyKey: string, fingerprint: string, nowMs: number, timeLimitMs = LOCK_TIMEOUT_MS): Claim {
  const held = Number.isFinite(timeLimitMs) && timeLimitMs > 0 ? Math.min(timeLimitMs, LOCK_TIMEOUT_MS) : LOCK_TIMEOUT_MS;
  return {
    lockedUntil: nowMs + held,
    key: idempotencyItemKey(scope, idempotencyKey),
    lockId: nodeCrypto().randomUUID(),
    fingerprint,
    expiresAt: Math.floor(nowMs / 1000) + IDEMPOTENCY_TTL_SECONDS,
    secret: sealingKey(scope, idempotencyKey),
  };
}

/**
 * The lock: succeeds when there is no record, the record has expired (TTL deletion lags), or the
 * same request's lock was abandoned.
 */
export function claimParams(claim: Claim, nowMs: number, table: string): PutCommandInput {
  return {
    TableName: table,
    Item: {
      ...claim.key,
      status: 'in_progress',
      fingerprint: claim.fingerprint,
      lockId: claim.lockId,
      lockedAt: nowMs,
      lockedUntil: claim.lockedUntil,
      expiresAt: claim.expiresAt,
    },
    ConditionExpression:
      'attribute_not_exists(pk) OR expiresAt < :now OR (#status = :inProgress AND fingerprint = :fingerprint AND ' +
      '(lockedUntil < :nowMs OR (attribute_not_exists(lockedUntil) AND lockedAt < :staleBefore)))',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':now': Math.floor(nowMs / 1000),
      ':inProgress': 'in_progress',
      ':fingerprint': claim.fingerprint,
      ':nowMs': nowMs,
      ':staleBefore': nowMs - LOCK_TIMEOUT_MS,
    },
  };
}

/** The completed record replaces the lock, only while the lock is still ours. */
export function completeParams(claim: Claim, sealed: Uint8Array, nowMs: number, table: string): PutCommandInput {
  return {
    TableName: table,
    Item: {
      ...claim.key,
      status: 'completed',
      fingerprint: claim.fingerprint,
      completedAt: nowMs,
      expiresAt: claim.expiresAt,
      response: sealed,
    },
    ConditionExpression: 'lockId = :lockId',
    ExpressionAttributeValues: { ':lockId': claim.lockId },
  };
}

export function releaseParams(claim: Claim, table: string) {
  return { TableName: table, Key: claim.key, ConditionExpression: 'lockId = :lockId', ExpressionAttributeValues: { ':lockId': claim.lockId } };
}

export interface IdempotencyRecord {
  status?: string;
  fingerprint?: string;
  lockedAt?: number;
  lockedUntil?: number;
  expiresAt?: number;
  response?: Uint8Array;
}

export type Existing = 'replay' | 'reused' | 'in_progress' | 'retry';

/** What to do about the record that made the lock fail. */
export function classifyExisting(item: IdempotencyRecord | undefined, fingerprint: string, nowMs: number): Existing {
  if (!item || Number(item.expiresAt ?? 0) < Math.floor(nowMs / 1000)) return 'retry';
  if (item.fingerprint !== fingerprint) return 'reused';
  if (item.status === 'completed') return 'replay';
  const abandoned = item.lockedUntil !== undefined ? Number(item.lockedUntil) < nowMs : Number(item.lockedAt ?? 0) < nowMs - LOCK_TIMEOUT_MS;
  if (abandoned) return 'retry';
  return 'in_progress';
}

export interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body: string;
  isBase64Encoded?: boolean;
}

/** The parts of a final response worth replaying; undefined when it must not be stored. */
export function storableResponse(result: APIGatewayProxyResult | undefined): StoredResponse | undefined {
  if (!result || result.statusCode >= 400 || typeof result.body !== 'string') return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    if (!PER_REQUEST_HEADER.test(name)) headers[name] = String(value);
  }
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    if (!PER_REQUEST_HEADER.test(name)) multiValueHeaders[name] = values.map(String);
  }
  return {
    statusCode: result.statusCode,
    headers,
    ...(Object.keys(multiValueHeaders).length ? { multiValueHeaders } : {}),
    body: result.body,
    ...(result.isBase64Encoded ? { isBase64Encoded: true } : {}),
  };
}

/** The stored response answering a retry: its status, body and headers, this request's own headers. */
export function replayResult(stored: StoredResponse, req: Pick<ApiRequest, 'requestId' | 'responseHeaders'>): APIGatewayProxyResult {
  return {
    statusCode: stored.statusCode,
    headers: { 'X-Request-ID': req.requestId, ...req.responseHeaders, ...stored.headers, [REPLAYED_HEADER]: 'true' },
    ...(stored.multiValueHeaders ? { multiValueHeaders: stored.multiValueHeaders } : {}),
    body: stored.body,
    ...(stored.isBase64Encoded ? { isBase64Encoded: true } : {}),
  };
}

export function sealingKey(scope: string, idempotencyKey: string): Buffer {
  return Buffer.from(nodeCrypto().hkdfSync('sha256', idempotencyKey, scope, 'idempotency-response', 32));
}

/** iv (12 bytes) | tag (16 bytes) | AES-256-GCM ciphertext of the JSON. */
export function seal(stored: StoredResponse, secret: Buffer): Uint8Array {
  const iv = nodeCrypto().randomBytes(12);
  const cipher = nodeCrypto().createCipheriv('aes-256-gcm', secret, iv);
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(stored), 'utf8'), cipher.final()]);
  return new Uint8Array(Buffer.concat([iv, cipher.getAuthTag(), ciphertext]));
}

export function open(sealed: Uint8Array, secret: Buffer): StoredResponse {
  const bytes = Buffer.from(sealed);
  const decipher = nodeCrypto().createDecipheriv('aes-256-gcm', secret, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')) as StoredResponse;
}

// ---- the middlewares ----------------------------------------------------------------------

const claims = new WeakMap<ApiRequest, Claim>();

/** The DynamoDB client and commands, loaded by the first request that carries an Idempotency-Key. */
const dynamo = onFirstUse(async () => {
  const [{ DeleteCommand, GetCommand, PutCommand }, { db, tableName }] = await Promise.all([import('@aws-sdk/lib-dynamodb'), import('../data/client.js')]);
  return { DeleteCommand, GetCommand, PutCommand, db, tableName };
});

function isConditionFailure(error: unknown): boolean {
  return (error as Error | undefined)?.name === 'ConditionalCheckFailedException';
}

async function release(claim: Claim): Promise<void> {
  const { DeleteCommand, db, tableName } = await dynamo();
  try {
    await db().send(new DeleteCommand(releaseParams(claim, tableName('limits'))));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

async function takeLock(req: ApiRequest, idempotencyKey: string, now: () => number, timeLeft: () => number): Promise<APIGatewayProxyResult | undefined> {
  const scope = idempotencyScope(req.auth, req.ip);
  const fingerprint = requestFingerprint(req.method, req.path, req.multiQuery, req.rawBody);
  const { GetCommand, PutCommand, db, tableName } = await dynamo();
  // Two rounds: a record that vanished or went stale between the lock and the read is retried once.
  for (let attempt = 0; attempt < 2; attempt++) {
    const nowMs = now();
    const claim = newClaim(scope, idempotencyKey, fingerprint, nowMs, timeLeft());
    try {
      await db().send(new PutCommand(claimParams(claim, nowMs, tableName('limits'))));
      claims.set(req, claim);
      return undefined;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const { Item } = await db().send(new GetCommand({ TableName: tableName('limits'), Key: claim.key, ConsistentRead: true }));
    const existing = Item as IdempotencyRecord | undefined;
    switch (classifyExisting(existing, fingerprint, now())) {
      case 'reused':
        throw new IdempotencyKeyReusedError();
      case 'in_progress':
        throw new IdempotencyKeyInProgressError();
      case 'replay':
        return replayResult(open(existing!.response!, claim.secret), req);
      case 'retry':
        continue;
    }
  }
  throw new IdempotencyKeyInProgressError();
}

async function finish(req: ApiRequest | undefined, result: APIGatewayProxyResult | undefined, now: () => number): Promise<void> {
  const claim = req && claims.get(req);
  if (!req || !claim) return;
  claims.delete(req);
  try {
    const { PutCommand, db, tableName } = await dynamo();
    const stored = storableResponse(result);
    const sealed = stored && seal(stored, claim.secret);
    if (!sealed || sealed.byteLength > MAX_STORED_BYTES) return await release(claim);
    await db().send(new PutCommand(completeParams(claim, sealed, now(), tableName('limits'))));
  } catch (error) {
    // The response still goes out; the lock lapses on its own at the request's deadline.
    if (!isConditionFailure(error)) logger.warn('idempotency record not written', { requestId: req.requestId, error: (error as Error).name });
  }
}

type Middleware = middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext>;

export function idempotency(options: { now?: () => number } = {}): { claim: Middleware; record: Middleware } {
  const now = options.now ?? Date.now;
  return {
    claim: {
      before: async function claimIdempotencyKey(request) {
        const req = request.context.api!;
        const key = idempotencyKeyOf(req);
        if (key === undefined) return;
        // A returned value ends the request here: middy skips the handler and every `after`.
        const context = request.context as Partial<Pick<ApiLambdaContext, 'getRemainingTimeInMillis'>>;
        return takeLock(req, key, now, () => (typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : LOCK_TIMEOUT_MS));
      },
    },
    record: {
      after: async function recordIdempotentResponse(request) {
        await finish(request.context.api, request.response ?? undefined, now);
      },
      onError: async function releaseIdempotencyKey(request) {
        await finish(request.context.api, request.response ?? undefined, now);
      },
    },
  };
}
