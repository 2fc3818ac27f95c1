/**
 * The users behind identity provider tokens, matched by issuer and subject (`sub`), never by
 * e-mail: a provider asserting an address must not take over an account of this API.
 *
 * - Identity item: pk `OIDC#<issuer id>#<sub>`, sk `OIDC` → {userId, tenantId, issuer, subject,
 *   createdAt}. The issuer id is derived from the issuer URL (shared/auth/oidc-config.ts).
 * - The user item is an ordinary user (pk `USER#<id>`, listed under its tenant) with `issuer` and
 *   `subject`, no password and no e-mail uniqueness item: its e-mail is the provider's to manage
 *   and may be shared with a password user of this API.
 * - First use creates both in one transaction, each only if absent: concurrent first requests
 *   create one user; the losers read the winner's.
 * - Later tokens update the e-mail, name and role when their claims changed. A user stays in the
 *   tenant it was created in: a token naming another tenant is refused.
 * - The tenant of a new user: the tenant claim, else the issuer's `defaultTenant`, else refused. A
 *   tenant id that does not exist is refused, or created when the issuer has `createTenants`.
 * - A disabled user is refused (shared/auth/user-status.ts). A deleted user comes back as a new
 *   user at its next token (disable a user to keep them out).
 * - A container keeps a resolved user for SESSION_CACHE_SECONDS, like a session: a warm request
 *   reads nothing. Changes in this container forget it at once (forgetOidcUser).
 */
import { DeleteCommand, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import type { Role } from '../caller.js';
import { ConflictError } from '../errors.js';
import { createTenant, db, getTenant, tableName, userKey, type User } from '../data/index.js';
import { newId } from '../ids.js';
import { evictApiKeysOfUser } from './api-keys.js';
import type { TokenIdentity } from './oidc-claims.js';
import { issuerId } from './oidc-config.js';
import { forgetSessionsOfUser } from './sessions.js';
import { isDisabled } from './user-status.js';

/** What a tenant id from a claim may look like (it becomes part of every key of the tenant's data). */
const TENANT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** A user of an identity provider, as stored. */
export type OidcUser = User & { issuer: string; subject: string };

interface IdentityItem {
  pk: string;
  sk: 'OIDC';
  userId: string;
  tenantId: string;
  issuer: string;
  subject: string;
  createdAt: string;
}

/** Why a valid token opens nothing: for the logs only. */
export class IdentityRefused extends Error {
  constructor(readonly reason: string) {
    super(`identity refused: ${reason}`);
    this.name = 'IdentityRefused';
  }
}

export function oidcIdentityKey(issuerId: string, subject: string): { pk: string; sk: 'OIDC' } {
  return { pk: `OIDC#${issuerId}#${subject}`, sk: 'OIDC' };
}

export function isOidcUser(user: object): user is OidcUser {
  return typeof (user as { issuer?: unknown }).issuer === 'string';
}

// ---------- the container cache ----------

interface CachedUser {
  user: OidcUser;
  readAt: number;
}

const CACHE_MAX_ENTRIES = 10_000;
const cache = new Map<string, CachedUser>();
/** userId → performance.now() of its last change here: a read that began before must not fill the cache. */
const forgotten = new Map<string, number>();

function cacheKey(identity: TokenIdentity): string {
  return `${identity.issuer.id}#${identity.subject}`;
}

/** Forgets a user (disabled, deleted, changed) in this container. */
export function forgetOidcUser(userId: string): void {
  forgotten.delete(userId);
  forgotten.set(userId, performance.now());
  if (forgotten.size > CACHE_MAX_ENTRIES) forgotten.delete(forgotten.keys().next().value!);
  for (const [key, entry] of cache) if (entry.user.id === userId) cache.delete(key);
}

export function clearOidcUserCache(): void {
  cache.clear();
  forgotten.clear();
}

/** Whether the stored user already says what the token says. */
function current(user: OidcUser, identity: TokenIdentity): boolean {
  return user.role === identity.role && (identity.email === undefined || user.email === identity.email) && (identity.name === undefined || user.name === identity.name);
}

// ---------- resolution ----------

/** The user a verified token names: found, updated or created (see the module's rules), or IdentityRefused. */
export async function userForIdentity(identity: TokenIdentity): Promise<OidcUser> {
  const key = cacheKey(identity);
  const maxAgeMs = config().sessionCacheSeconds * 1000;
  const cached = cache.get(key);
  if (cached && Date.now() - cached.readAt < maxAgeMs && current(cached.user, identity) && sameTenant(cached.user, identity)) return cached.user;
  cache.delete(key);
  const readStarted = performance.now();
  const user = await resolve(identity);
  const at = forgotten.get(user.id);
  if (maxAgeMs > 0 && (at === undefined || at < readStarted)) {
    if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, { user, readAt: Date.now() });
  }
  return user;
}

function sameTenant(user: OidcUser, identity: TokenIdentity): boolean {
  return identity.tenant === undefined || identity.tenant === user.tenantId;
}

async function resolve(identity: TokenIdentity): Promise<OidcUser> {
  // An attempt that lost the creation race to a concurrent first request reads the winner's user
  // (again a little later while the winner's transaction is still in flight).
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 25 * attempt));
    const found = await existingUser(identity);
    if (found) return checkedAndUpdated(found, identity);
    const created = await createIdentity(identity);
    if (created) return created;
  }
  throw new Error('the identity was created and removed concurrently');
}

async function existingUser(identity: TokenIdentity): Promise<OidcUser | undefined> {
  const identityKey = oidcIdentityKey(identity.issuer.id, identity.subject);
  const { Item } = await db().send(new GetCommand({ TableName: tableName('identity'), Key: identityKey, ConsistentRead: true }));
  const item = Item as IdentityItem | undefined;
  if (!item) return undefined;
  const { Item: userItem } = await db().send(new GetCommand({ TableName: tableName('identity'), Key: userKey(item.userId), ConsistentRead: true }));
  if (userItem && isOidcUser(userItem)) return withoutKeys(userItem);
  // The user was deleted: the identity item goes too, and the next step creates a new user.
  await db()
    .send(
      new DeleteCommand({
        TableName: tableName('identity'),
        Key: identityKey,
        ConditionExpression: 'userId = :id',
        ExpressionAttributeValues: { ':id': item.userId },
      }),
    )
    .catch((error: unknown) => {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    });
  return undefined;
}

/** The user item without its table keys; an item that is not an identity provider's user is refused. */
function withoutKeys(item: object): OidcUser {
  if (!isOidcUser(item)) throw new Error('the identity item does not name a user of an identity provider');
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...user } = item as OidcUser & Record<'pk' | 'sk' | 'gsi1pk' | 'gsi1sk', unknown>;
  return user;
}

async function checkedAndUpdated(user: OidcUser, identity: TokenIdentity): Promise<OidcUser> {
  if (isDisabled(user)) throw new IdentityRefused('user disabled');
  if (!sameTenant(user, identity)) throw new IdentityRefused('the token names another tenant than the user’s');
  if (current(user, identity)) return user;
  const changes = { email: identity.email ?? user.email, name: identity.name ?? user.name, role: identity.role };
  const { Attributes } = await db().send(
    new UpdateCommand({
      TableName: tableName('identity'),
      Key: userKey(user.id),
      UpdateExpression: 'SET email = :email, #n = :name, #r = :role, updatedAt = :now',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#n': 'name', '#r': 'role' },
      ExpressionAttributeValues: { ':email': changes.email, ':name': changes.name, ':role': changes.role, ':now': new Date().toISOString() },
      ReturnValues: 'ALL_NEW',
    }),
  );
  if (changes.role !== user.role) {
    // Its sessions (console sign-in) and keys carry the role: they are read again.
    evictApiKeysOfUser(user.id);
    forgetSessionsOfUser(user.id);
  }
  return withoutKeys(Attributes!);
}

/** The tenant a new user goes into, created when the issuer allows it; IdentityRefused otherwise. */
async function tenantFor(identity: TokenIdentity): Promise<string> {
  const tenantId = identity.tenant ?? identity.issuer.defaultTenant;
  if (!tenantId) throw new IdentityRefused('no tenant claim and no defaultTenant');
  if (!TENANT_ID_PATTERN.test(tenantId)) throw new IdentityRefused('the tenant claim is not a tenant id');
  if (await getTenant(tenantId)) return tenantId;
  if (!identity.issuer.createTenants || tenantId !== identity.tenant) throw new IdentityRefused('unknown tenant');
  try {
    await createTenant({ id: tenantId, name: tenantId });
  } catch (error) {
    // Created meanwhile by a concurrent first request.
    if (!(error instanceof ConflictError)) throw error;
  }
  return tenantId;
}

/** Creates the identity and its user together; undefined when another request created the identity first. */
async function createIdentity(identity: TokenIdentity): Promise<OidcUser | undefined> {
  const tenantId = await tenantFor(identity);
  const now = new Date().toISOString();
  const role: Role = identity.role;
  const user: OidcUser = {
    id: newId('usr'),
    tenantId,
    email: identity.email ?? '',
    name: identity.name ?? identity.email ?? identity.subject,
    role,
    // No password: the password sign-in never finds this user (it has no e-mail item), and a
    // password cannot be set for it (shared/auth/users.ts).
    passwordHash: '',
    preferences: {},
    createdAt: now,
    updatedAt: now,
    issuer: identity.issuer.issuer,
    subject: identity.subject,
  };
  const item: IdentityItem = { ...oidcIdentityKey(identity.issuer.id, identity.subject), userId: user.id, tenantId, issuer: user.issuer, subject: user.subject, createdAt: now };
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tableName('identity'), Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              TableName: tableName('identity'),
              // Listed under its tenant like every user (the layout of shared/data/identity.ts).
              Item: { ...userKey(user.id), gsi1pk: `TENANT#${tenantId}#USERS`, gsi1sk: `${now}#${user.id}`, ...user },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TransactionCanceledException' || name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
  return user;
}

/** Deletes a user of an identity provider with its identity item (the user has no e-mail item). */
export async function deleteOidcUser(user: OidcUser): Promise<void> {
  forgetOidcUser(user.id);
  await db().send(
    new TransactWriteCommand({
      TransactItems: [
        { Delete: { TableName: tableName('identity'), Key: userKey(user.id) } },
        {
          Delete: {
            TableName: tableName('identity'),
            Key: oidcIdentityKey(issuerId(user.issuer), user.subject),
            ConditionExpression: 'attribute_not_exists(pk) OR userId = :id',
            ExpressionAttributeValues: { ':id': user.id },
          },
        },
      ],
    }),
  );
  forgetOidcUser(user.id);
}
