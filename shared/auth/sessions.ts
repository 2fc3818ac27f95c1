/**
 * Sessions (CONTRACT.md): opaque random tokens, stored hashed, 12 hours sliding expiry.
 *
 * - The token is 32 random bytes, base64url; only its SHA-256 hex is stored, at pk
 *   `SESSION#<hash>` in the identity table. The hash is the session's id (AuthContext.sessionId).
 * - `expiresAt` (epoch seconds) is also the table's TTL attribute; an item past it is treated
 *   as absent even before DynamoDB removes it.
 * - Sliding expiry without a write per request: the expiry is pushed forward only when more than
 *   SLIDE_INTERVAL_SECONDS have passed since the last extension (`extendedAt`).
 * - Each session is also listed under its user (gsi1pk `USER#<userId>#SESSIONS`), so that a
 *   password change or a deleted user can end every session of that user.
 * - A container keeps a verified session and its user for SESSION_CACHE_SECONDS (60): a warm
 *   session request reads nothing it read within that time. Logout, a role change, a password
 *   change or a deleted user forget the cached entries at once in the container that made the
 *   change (every family, locally: one process); other containers may still accept the old
 *   session or role for at most SESSION_CACHE_SECONDS. 0 turns the cache off (a read per request).
 * - A session begun through an identity provider's sign-in (shared/auth/oidc-console.ts) keeps
 *   the provider's `issuer`, so that signing out can offer the provider's own sign-out.
 * - A disabled user's sessions are ended when the user is disabled, and refused anyway.
 */
import { createHash, randomBytes } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { db, getUser, queryByParent, tableName } from '../data/index.js';
import { logger } from '../logger.js';
import type { AuthContext, Role } from '../caller.js';
import { scopesForRole } from '../scopes.js';
import { isDisabled } from './user-status.js';

export const SESSION_COOKIE = 'session';

/** How long a session may go without its expiry being pushed forward. */
export const SLIDE_INTERVAL_SECONDS = 5 * 60;

/** The shape a token must have (43 base64url characters for 32 bytes); anything else is refused unread. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface SessionUser {
  id: string;
  tenantId: string;
  email: string;
  name?: string;
  role: Role;
}

export interface SessionItem {
  pk: string;
  sk: 'SESSION';
  gsi1pk: string;
  gsi1sk: string;
  userId: string;
  tenantId: string;
  createdAt: string;
  /** Epoch seconds of the last creation or extension. */
  extendedAt: number;
  /** Epoch seconds; the TTL attribute. */
  expiresAt: number;
  /** The identity provider the user signed in with (console sign-in), if any. */
  issuer?: string;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function userSessionsIndexKey(userId: string): string {
  return `USER#${userId}#SESSIONS`;
}

export function sessionKey(hash: string): { pk: string; sk: 'SESSION' } {
  return { pk: `SESSION#${hash}`, sk: 'SESSION' };
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Whether a session last extended at `extendedAt` should be extended at `now`. */
export function needsExtension(extendedAt: number, now: number): boolean {
  return now - extendedAt > SLIDE_INTERVAL_SECONDS;
}

interface CachedSession {
  session: SessionItem;
  user: SessionUser;
  /** Date.now() when read. */
  readAt: number;
}

/** Most sessions a container keeps (the oldest read is dropped first). */
const CACHE_MAX_ENTRIES = 10_000;
const cache = new Map<string, CachedSession>();

/**
 * When a session (`s:<hash>`) or a user's sessions (`u:<userId>`) were last forgotten
 * (performance.now()). A read that began before must not fill the cache: it may have read the
 * session or user as they were before the change, and would keep them for SESSION_CACHE_SECONDS
 * after a logout.
 */
const forgotten = new Map<string, number>();

function markForgotten(key: string): void {
  forgotten.delete(key);
  forgotten.set(key, performance.now());
  if (forgotten.size > CACHE_MAX_ENTRIES) forgotten.delete(forgotten.keys().next().value!);
}

function forgottenSince(key: string, since: number): boolean {
  const at = forgotten.get(key);
  return at !== undefined && at >= since;
}

/** Forgets the cached sessions of a user (its role, e-mail or password changed, it was deleted). */
export function forgetSessionsOfUser(userId: string): void {
  markForgotten(`u:${userId}`);
  for (const [hash, entry] of cache) if (entry.session.userId === userId) cache.delete(hash);
}

export function clearSessionCache(): void {
  cache.clear();
  forgotten.clear();
}

/** The session and its user: from this container's cache when read within SESSION_CACHE_SECONDS. */
async function sessionAndUser(hash: string): Promise<CachedSession | undefined> {
  const maxAgeMs = config().sessionCacheSeconds * 1000;
  const cached = cache.get(hash);
  if (cached && Date.now() - cached.readAt < maxAgeMs) return cached;
  cache.delete(hash);
  const readStarted = performance.now();
  const { Item } = await db().send(new GetCommand({ TableName: tableName('identity'), Key: sessionKey(hash), ConsistentRead: true }));
  const session = Item as SessionItem | undefined;
  if (!session || session.expiresAt <= nowSeconds()) return undefined;
  const user = await getUser(session.userId);
  if (!user || user.tenantId !== session.tenantId || isDisabled(user)) return undefined;
  const entry: CachedSession = { session, user: { id: user.id, tenantId: user.tenantId, email: user.email, name: user.name, role: user.role }, readAt: Date.now() };
  const changedMeanwhile = forgottenSince(`s:${hash}`, readStarted) || forgottenSince(`u:${session.userId}`, readStarted);
  if (maxAgeMs > 0 && !changedMeanwhile) {
    if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(hash, entry);
  }
  return entry;
}

export async function createSession(user: SessionUser, options: { issuer?: string } = {}): Promise<{ token: string; hash: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const hash = hashToken(token);
  const now = nowSeconds();
  const expiresAt = now + config().sessionTtlSeconds;
  const createdAt = new Date(now * 1000).toISOString();
  const item: SessionItem = {
    ...sessionKey(hash),
    gsi1pk: userSessionsIndexKey(user.id),
    gsi1sk: `${createdAt}#${hash}`,
    userId: user.id,
    tenantId: user.tenantId,
    createdAt,
    extendedAt: now,
    expiresAt,
    ...(options.issuer ? { issuer: options.issuer } : {}),
  };
  await db().send(new PutCommand({ TableName: tableName('identity'), Item: item }));
  return { token, hash, expiresAt };
}

/** The caller behind a session token, or undefined when the token is unknown, expired or its user is gone. */
export async function verifySession(token: string): Promise<AuthContext | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  const hash = hashToken(token);
  const entry = await sessionAndUser(hash);
  const now = nowSeconds();
  if (!entry || entry.session.expiresAt <= now) {
    cache.delete(hash);
    return undefined;
  }
  const { session, user } = entry;
  let renewedUntil: number | undefined;
  if (needsExtension(session.extendedAt ?? 0, now)) {
    renewedUntil = now + config().sessionTtlSeconds;
    // Best effort: a failed extension must not fail the request.
    await db()
      .send(
        new UpdateCommand({
          TableName: tableName('identity'),
          Key: sessionKey(hash),
          UpdateExpression: 'SET expiresAt = :exp, extendedAt = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':exp': renewedUntil, ':now': now },
        }),
      )
      .then(() => {
        session.extendedAt = now;
        session.expiresAt = renewedUntil!;
      })
      .catch((error: unknown) => {
        renewedUntil = undefined;
        logger.warn('session extension failed', { error: (error as Error).name });
      });
  }
  return {
    type: 'session',
    user: { id: user.id, email: user.email, name: user.name, role: user.role },
    tenantId: user.tenantId,
    scopes: scopesForRole(user.role),
    sessionId: hash,
    ...(renewedUntil ? { sessionRenewedUntil: renewedUntil } : {}),
  };
}

/** Ends a session; answers the identity provider it was begun with, if any. */
export async function revokeSession(hash: string): Promise<{ issuer?: string }> {
  markForgotten(`s:${hash}`);
  cache.delete(hash);
  const { Attributes } = await db().send(new DeleteCommand({ TableName: tableName('identity'), Key: sessionKey(hash), ReturnValues: 'ALL_OLD' }));
  // Again once deleted: a read that began before the delete landed may still have found it.
  markForgotten(`s:${hash}`);
  const issuer = (Attributes as SessionItem | undefined)?.issuer;
  return issuer ? { issuer } : {};
}

/** Ends every session of a user, except `exceptHash` (the caller's own, on a password change). */
export async function revokeUserSessions(userId: string, exceptHash?: string): Promise<number> {
  forgetSessionsOfUser(userId);
  const hashes = (await queryByParent(userSessionsIndexKey(userId), 'pk'))
    .map((item) => String(item.pk).slice('SESSION#'.length))
    .filter((hash) => hash !== exceptHash);
  for (let i = 0; i < hashes.length; i += 25) {
    const chunk = hashes.slice(i, i + 25);
    let requests: Record<string, unknown>[] | undefined = chunk.map((hash) => ({ DeleteRequest: { Key: sessionKey(hash) } }));
    for (let attempt = 0; requests?.length && attempt < 5; attempt++) {
      const result = await db().send(new BatchWriteCommand({ RequestItems: { [tableName('identity')]: requests as never } }));
      requests = result.UnprocessedItems?.[tableName('identity')] as Record<string, unknown>[] | undefined;
    }
  }
  // Again once deleted: a read that began before the deletes landed may still have found them.
  forgetSessionsOfUser(userId);
  return hashes.length;
}

function cookieAttributes(maxAgeSeconds: number): string {
  return `HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAgeSeconds}${config().secureCookies ? '; Secure' : ''}`;
}

export function sessionCookie(token: string, maxAgeSeconds = config().sessionTtlSeconds): string {
  return `${SESSION_COOKIE}=${token}; ${cookieAttributes(maxAgeSeconds)}`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; ${cookieAttributes(0)}`;
}
