/**
 * API key verification (SPEC.md Authentication rule 7), built for a warm path with no reads:
 *
 * extract (Authorization: Bearer, else X-API-Key) → format check (before any lookup) → SHA-256 →
 * key data from the container cache (5 minutes), else the key item `APIKEY#<hash>` and its owner
 * `USER#<id>` from the identity table → constant-time comparison of the stored hash → status →
 * expiry → the owner's context with the key's scopes. The scopes themselves are checked by the
 * authorize middleware (which calls `apiKeyScopeDenied` to audit and pad a denial).
 *
 * - Every failed validation (malformed, unknown, inactive, expired, insufficient scope, and
 *   errors such as an unreachable database) takes at least FAILURE_FLOOR_MS from its start.
 * - The cache is per container, keyed by hash, bounded (MAX_CACHE_ENTRIES, oldest first out) and
 *   also remembers unknown hashes. Writes in this container (create, update, revoke) evict at
 *   once; another container may serve a stale entry for at most the cache time.
 * - lastUsedAt and totalRequests are written off the response path, coalesced: at most one
 *   UpdateItem per key per LAST_USED_INTERVAL_MS per container, fire-and-forget, carrying the
 *   number of requests counted since the last write (`recordApiKeyUse`, called by the rate-limit
 *   middleware once it has counted the request).
 * - Neither the key nor its hash is ever logged; logs name the key id.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { db, tableName } from '../data/index.js';
import { UnauthorizedError } from '../errors.js';
import { newId } from '../ids.js';
import { logger } from '../logger.js';
import type { AuthContext, AuthUser, CallOrigin, Role } from '../caller.js';
import { isDisabled } from './user-status.js';

export const API_KEY_PATTERN = /^sk_(live|test)_[A-Za-z0-9_-]{40}$/;
export const KEY_PREFIX_LENGTH = 12;
export const FAILURE_FLOOR_MS = 100;
export const LAST_USED_INTERVAL_MS = 60_000;
export const MAX_CACHE_ENTRIES = 10_000;

export type KeyStatus = 'active' | 'inactive';

/** The key item in the identity table (docs/CONTRIBUTING.md). */
export interface ApiKeyItem {
  pk: string;
  sk: 'APIKEY';
  id: string;
  keyPrefix: string;
  name: string;
  scopes: string[];
  status: KeyStatus;
  /** ISO datetime or null. */
  keyExpiresAt: string | null;
  userId: string;
  tenantId: string;
  environment: 'live' | 'test';
  createdAt: string;
  updatedAt: string;
  lastUsedAt?: string | null;
  totalRequests?: number;
  gsi1pk: string;
  gsi1sk: string;
}

/** Audit actions recorded for a key (CONTRACT.md "Key audit log"). */
export type AuditAction = 'created' | 'updated' | 'revoked' | 'expired' | 'inactive' | 'insufficient_scope';

export interface AuditEntry {
  id: string;
  keyId: string;
  action: AuditAction;
  ipAddress: string;
  userAgent: string;
  timestamp: string;
  details?: Record<string, unknown>;
}

// ---------- pure helpers ----------

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function apiKeyItemKey(hash: string): { pk: string; sk: 'APIKEY' } {
  return { pk: `APIKEY#${hash}`, sk: 'APIKEY' };
}

export function keyIdPointerKey(keyId: string): { pk: string; sk: 'KEYID' } {
  return { pk: `KEYID#${keyId}`, sk: 'KEYID' };
}

export function auditPk(keyId: string): string {
  return `AUDIT#${keyId}`;
}

export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** Authorization: Bearer <key> (preferred), else X-API-Key. Header names are lower-case. */
export function extractApiKey(headers: Record<string, string>): string | undefined {
  const authorization = headers.authorization;
  if (authorization) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization.trim());
    if (match) return match[1];
  }
  const header = headers['x-api-key']?.trim();
  return header ? header : undefined;
}

/** Constant-time equality of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) {
    // Still spend a comparison, so a length mismatch is not faster.
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

/** The scopes a key grants: its own, except `*` once its owner is no longer an admin. */
export function effectiveScopes(scopes: readonly string[], role: Role): string[] {
  return role === 'admin' ? [...scopes] : scopes.filter((s) => s !== '*');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `floorMs` have passed since `startedAt` (performance.now()). */
export async function padToFloor(startedAt: number, floorMs = FAILURE_FLOOR_MS): Promise<void> {
  const remaining = floorMs - (performance.now() - startedAt);
  // +1: setTimeout may fire a fraction of a millisecond early.
  if (remaining > 0) await sleep(Math.ceil(remaining) + 1);
}

// ---------- the container cache ----------

interface FoundEntry {
  found: true;
  hash: string;
  keyId: string;
  status: KeyStatus;
  /** Epoch ms, or null for no expiry. */
  expiresAtMs: number | null;
  /** Its owner is disabled: the key authenticates nobody (kept as found, so enabling the owner evicts it). */
  ownerDisabled: boolean;
  /** The authentication result, shared read-only; verifyApiKey hands out copies. */
  auth: AuthContext;
  loadedAt: number;
}

interface MissingEntry {
  found: false;
  hash: string;
  loadedAt: number;
}

type CacheEntry = FoundEntry | MissingEntry;

const cache = new Map<string, CacheEntry>();
const hashByKeyId = new Map<string, string>();

function cacheTtlMs(): number {
  return config().apiKeyCacheSeconds * 1000;
}

function remember(entry: CacheEntry): void {
  if (cache.size >= MAX_CACHE_ENTRIES) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) forget(oldest);
  }
  cache.set(entry.hash, entry);
  if (entry.found) hashByKeyId.set(entry.keyId, entry.hash);
}

function forget(hash: string): void {
  const entry = cache.get(hash);
  cache.delete(hash);
  if (entry?.found && hashByKeyId.get(entry.keyId) === hash) hashByKeyId.delete(entry.keyId);
}

/** Drops a key from this container's cache (by hash, by id, or both): after create, update, revoke. */
export function evictApiKey(ref: { hash?: string; keyId?: string }): void {
  if (ref.hash) forget(ref.hash);
  if (ref.keyId) {
    const hash = hashByKeyId.get(ref.keyId);
    if (hash) forget(hash);
    hashByKeyId.delete(ref.keyId);
  }
}

/**
 * Drops every cached key of a user from this container's cache: after the user's role changes or
 * the user is deleted, the next request reloads the owner (a demoted admin's key loses `*`).
 */
export function evictApiKeysOfUser(userId: string): void {
  for (const [hash, entry] of cache) if (entry.found && entry.auth.user.id === userId) forget(hash);
}

/** For tests and benchmarks. */
export function clearApiKeyCache(): void {
  cache.clear();
  hashByKeyId.clear();
  usage.clear();
}

export function apiKeyCacheSize(): number {
  return cache.size;
}

interface UserProjection {
  id: string;
  tenantId: string;
  email: string;
  name?: string;
  role: Role;
}

async function load(hash: string): Promise<CacheEntry> {
  const now = Date.now();
  const { Item } = await db().send(new GetCommand({ TableName: tableName('identity'), Key: apiKeyItemKey(hash) }));
  const item = Item as ApiKeyItem | undefined;
  if (!item) return { found: false, hash, loadedAt: now };
  const { Item: userItem } = await db().send(
    new GetCommand({
      TableName: tableName('identity'),
      Key: { pk: `USER#${item.userId}`, sk: 'USER' },
      ProjectionExpression: 'id, tenantId, email, #n, #r, #s',
      ExpressionAttributeNames: { '#n': 'name', '#r': 'role', '#s': 'status' },
    }),
  );
  const owner = userItem as UserProjection | undefined;
  // A key whose owner is gone (or moved tenant) authenticates nobody.
  if (!owner || owner.tenantId !== item.tenantId) return { found: false, hash, loadedAt: now };
  const user: AuthUser = { id: owner.id, email: owner.email, name: owner.name, role: owner.role };
  return {
    found: true,
    hash: item.pk.slice('APIKEY#'.length),
    keyId: item.id,
    status: item.status,
    expiresAtMs: item.keyExpiresAt ? Date.parse(item.keyExpiresAt) : null,
    ownerDisabled: isDisabled(owner),
    auth: { type: 'api_key', user, tenantId: item.tenantId, scopes: effectiveScopes(item.scopes, owner.role), keyId: item.id },
    loadedAt: now,
  };
}

async function lookup(hash: string): Promise<CacheEntry> {
  const cached = cache.get(hash);
  if (cached && Date.now() - cached.loadedAt < cacheTtlMs()) return cached;
  if (cached) forget(hash);
  const entry = await load(hash);
  remember(entry);
  return entry;
}

// ---------- audit of failures ----------

/**
 * Writes one audit entry of a failed authentication, from whichever family saw it. UpdateItem
 * (an upsert of a new item) rather than PutItem: every family may update the identity table
 * (infra/aws/permissions.ts, readUpdate), only auth and keys may put. Key management writes its
 * own entries inside its transactions.
 */
export async function writeAudit(keyId: string, action: AuditAction, req: CallOrigin, details?: Record<string, unknown>): Promise<AuditEntry> {
  const entry = auditEntry(keyId, action, req, details);
  const { pk, sk, ...attributes } = auditItem(entry) as { pk: string; sk: string } & Record<string, unknown>;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(attributes).map(([name, value], i) => {
    names[`#a${i}`] = name;
    values[`:v${i}`] = value;
    return `#a${i} = :v${i}`;
  });
  await db().send(
    new UpdateCommand({
      TableName: tableName('identity'),
      Key: { pk, sk },
      UpdateExpression: `SET ${sets.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
  );
  return entry;
}

export function auditEntry(keyId: string, action: AuditAction, req: CallOrigin, details?: Record<string, unknown>): AuditEntry {
  return {
    id: newId('aud'),
    keyId,
    action,
    ipAddress: req.ip,
    userAgent: (req.userAgent ?? '').slice(0, 512),
    timestamp: new Date().toISOString(),
    ...(details ? { details } : {}),
  };
}

export function auditItem(entry: AuditEntry): Record<string, unknown> {
  return { pk: auditPk(entry.keyId), sk: `${entry.timestamp}#${entry.id}`, ...entry };
}

function auditQuietly(keyId: string, action: AuditAction, req: CallOrigin, details?: Record<string, unknown>): Promise<void> {
  return writeAudit(keyId, action, req, details).then(
    () => undefined,
    (error: unknown) => logger.warn('key audit write failed', { keyId, action, error: (error as Error).name }),
  );
}

// ---------- verification ----------

/** When each request's key verification started, so a scope denial is padded from there. */
const verificationStarts = new WeakMap<CallOrigin, number>();

function invalid(message = 'Invalid API key'): UnauthorizedError {
  return new UnauthorizedError(message, 'INVALID_API_KEY');
}

/**
 * The caller behind a key, or UnauthorizedError INVALID_API_KEY / EXPIRED_KEY. Every failure
 * (and every error) leaves no sooner than FAILURE_FLOOR_MS after the call.
 */
export async function verifyApiKey(key: string, req: CallOrigin): Promise<AuthContext> {
  const startedAt = performance.now();
  let pending: Promise<void> | undefined;
  try {
    if (!API_KEY_PATTERN.test(key)) throw invalid('The API key is malformed');
    const hash = hashApiKey(key);
    const entry = await lookup(hash);
    if (!entry.found || !sameHash(entry.hash, hash) || entry.ownerDisabled) throw invalid();
    if (entry.status !== 'active') {
      pending = auditQuietly(entry.keyId, 'inactive', req);
      throw invalid('The API key is inactive');
    }
    if (entry.expiresAtMs !== null && Date.now() >= entry.expiresAtMs) {
      pending = auditQuietly(entry.keyId, 'expired', req);
      throw new UnauthorizedError('The API key has expired', 'EXPIRED_KEY');
    }
    verificationStarts.set(req, startedAt);
    rememberHash(entry.keyId, entry.hash);
    const { auth } = entry;
    // Copies: a handler changing its req.auth must not change the cached entry.
    return { type: auth.type, user: { ...auth.user }, tenantId: auth.tenantId, scopes: [...auth.scopes], keyId: auth.keyId };
  } catch (error) {
    await Promise.all([padToFloor(startedAt), pending]);
    throw error;
  }
}

/**
 * Called by the authorize middleware before it answers 403 to a key: records the denial in the
 * key's audit log and pads the failure to the floor, counted from the key's verification.
 */
export async function apiKeyScopeDenied(req: CallOrigin & { auth?: AuthContext }, scope: string): Promise<void> {
  const keyId = req.auth?.keyId;
  if (req.auth?.type !== 'api_key' || !keyId) return;
  const startedAt = verificationStarts.get(req) ?? performance.now();
  await Promise.all([padToFloor(startedAt), auditQuietly(keyId, 'insufficient_scope', req, { scope })]);
}

// ---------- usage: lastUsedAt and totalRequests, coalesced ----------

interface Usage {
  hash: string;
  /** Requests counted in this container and not yet written. */
  pending: number;
  /** Epoch ms of the last write (0: never). */
  lastWriteAt: number;
  /** Epoch ms of the last use seen in this container. */
  lastUsedAt: number;
}

const usage = new Map<string, Usage>();

function rememberHash(keyId: string, hash: string): void {
  const state = usage.get(keyId);
  if (!state) {
    if (usage.size >= MAX_CACHE_ENTRIES) {
      // Drop the oldest entry with nothing pending; usage of a dropped key is simply re-created.
      for (const [id, s] of usage) {
        if (s.pending === 0) {
          usage.delete(id);
          break;
        }
      }
    }
    usage.set(keyId, { hash, pending: 0, lastWriteAt: 0, lastUsedAt: 0 });
  } else if (state.hash !== hash) {
    state.hash = hash;
  }
}

/**
 * Counts one request of a key (after the rate-limit counter): at most one UpdateItem per key per
 * LAST_USED_INTERVAL_MS, never awaited, errors logged without the key.
 */
export function recordApiKeyUse(keyId: string, now = Date.now()): void {
  const state = usage.get(keyId);
  if (!state) return;
  state.pending += 1;
  state.lastUsedAt = now;
  if (now - state.lastWriteAt < LAST_USED_INTERVAL_MS) return;
  const count = state.pending;
  state.pending = 0;
  state.lastWriteAt = now;
  void writeUsage(keyId, state.hash, now, count);
}

async function writeUsage(keyId: string, hash: string, now: number, count: number): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName('identity'),
        Key: apiKeyItemKey(hash),
        UpdateExpression: 'SET lastUsedAt = :t ADD totalRequests :n',
        // Never resurrect a revoked key.
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':t': new Date(now).toISOString(), ':n': count },
      }),
    );
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return;
    logger.warn('key usage write failed', { keyId, error: (error as Error).name });
  }
}

/** What this container has counted for a key but not yet written (added to reads of the key). */
export function unwrittenUsage(keyId: string): { pending: number; lastUsedAt: string | null } {
  const state = usage.get(keyId);
  return { pending: state?.pending ?? 0, lastUsedAt: state?.lastUsedAt ? new Date(state.lastUsedAt).toISOString() : null };
}

/** Forgets a revoked key's usage state (its pending count has nowhere to go). */
export function forgetApiKeyUsage(keyId: string): void {
  usage.delete(keyId);
}
