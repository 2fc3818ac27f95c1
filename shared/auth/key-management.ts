/**
 * API key management for both families (`/api/v1/keys` and `/api/v1/api-keys`), session only.
 *
 * Storage (identity table, docs/CONTRIBUTING.md):
 * - key item `APIKEY#<sha256 hex>` / `APIKEY`, listed per owner through byParent
 *   (gsi1pk `USER#<userId>#KEYS`);
 * - id pointer `KEYID#<keyId>` / `KEYID` → {keyHash, userId, tenantId}; while the key lives it is
 *   also on byParent under `TENANT#<tenantId>#KEYS` (an admin's tenant-wide listing). Revocation
 *   deletes the key item and marks the pointer `revokedAt` (so the audit log stays readable);
 * - audit entries `AUDIT#<keyId>` / `<ISO timestamp>#<auditId>`, written in the same transaction
 *   as the change they record.
 *
 * Access: a user sees and manages their own keys; an admin may also read, update, revoke and
 * audit any key of their tenant, and list them with `?all=true` (or one user's with `?userId=`).
 * Anything else answers 404 (existence is not revealed).
 *
 * Only the hash and the 12-character prefix are stored; the key itself leaves the service once,
 * in the creation response.
 */
import {
  BatchGetCommand,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { db, keyRequestsLast24h, tableName } from '../data/index.js';
import { BadRequestError, ForbiddenError, NotFoundError, ValidationError, type ErrorDetails } from '../errors.js';
import type { AuthContext, CallOrigin } from '../caller.js';
import { newId, randomString } from '../ids.js';
import {
  KEY_PREFIX_LENGTH,
  apiKeyItemKey,
  auditEntry,
  auditItem,
  auditPk,
  evictApiKey,
  forgetApiKeyUsage,
  hashApiKey,
  keyIdPointerKey,
  unwrittenUsage,
  type ApiKeyItem,
  type AuditAction,
  type AuditEntry,
  type KeyStatus,
} from './api-keys.js';
import type { CheckedBody } from '../route-types.js';
import type { keyBodySchemas } from './body-schemas.js';
import { knownResources, scopeProblem, type ScopeFamily } from './scope-catalog.js';

export const KEY_BODY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
export const KEY_BODY_LENGTH = 40;
export const KEY_WARNING = 'Store this key now: it is shown only once and cannot be retrieved again.';

export type Environment = 'live' | 'test';

/** A key as the API returns it (never the key itself, except `key` in the creation response). */
export interface KeyRecord {
  id: string;
  keyPrefix: string;
  name: string;
  scopes: string[];
  status: 'active' | 'inactive' | 'expired';
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
  updatedAt: string;
  environment: Environment;
  userId: string;
  totalRequests: number;
  requestsLast24h: number;
}

interface KeyPointer {
  pk: string;
  sk: 'KEYID';
  keyHash: string;
  userId: string;
  tenantId: string;
  revokedAt?: string;
}

type Caller = CallOrigin & { auth?: AuthContext };

/** A new key: `sk_<env>_` + 40 characters of [A-Za-z0-9_-] from the CSPRNG. */
export function generateApiKey(environment: Environment = 'live'): string {
  return `sk_${environment}_${randomString(KEY_BODY_LENGTH, KEY_BODY_ALPHABET)}`;
}

function identity(): string {
  return tableName('identity');
}

function userKeysIndexKey(userId: string): string {
  return `USER#${userId}#KEYS`;
}

function tenantKeysIndexKey(tenantId: string): string {
  return `TENANT#${tenantId}#KEYS`;
}

// ---------- validation ----------

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Whether YYYY-MM-DD names a day the calendar has (Date.parse rolls 2030-02-30 over to March). */
function isCalendarDate(ymd: string): boolean {
  const [y, m, d] = ymd.split('-').map(Number);
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/**
 * What a key without scopes is told: the scopes that exist, the form this family takes, and the
 * other family, so that a first try leads to a working one.
 */
export function scopesHint(family: ScopeFamily, resources: ReadonlySet<string>): string {
  const names = [...resources].sort();
  if (family === 'keys') {
    return 'must be a non-empty array of read, write, delete (this endpoint, /api/v1/keys, takes bare actions that apply to every entity; ' +
      `for per-entity scopes such as ${names[0] ?? 'tasks'}:read use POST /api/v1/api-keys)`;
  }
  return `must be a non-empty array of scopes, e.g. ["${names.includes('tasks') ? 'tasks' : names[0]}:read"]. ` +
    `This endpoint, /api/v1/api-keys, takes <resource>:<read|write|delete|*>, the bare read, write, delete, or * (admins); ` +
    `resources: ${names.join(', ')}. (POST /api/v1/keys takes only bare read, write, delete.)`;
}

/** Whether an expiry names a real day (and time) that lies ahead. */
function expiryProblem(value: string): string | undefined {
  const ms = ISO_DATETIME.test(value) && isCalendarDate(value.slice(0, 10)) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) return 'must be an ISO 8601 datetime or null';
  if (ms <= Date.now()) return 'must be in the future';
  return undefined;
}

/**
 * What a key body's schema (body-schemas.ts, checked by the middleware stack) cannot say:
 * each scope names an action and a resource of `family`'s vocabulary, and an expiry is a day of
 * the calendar that lies ahead. `refused`: the fields the schema already refused, which get the
 * scope hint (scopes) or are left alone, so that one answer names every field.
 */
export async function keyBodyProblems(body: Readonly<Record<string, unknown>>, family: ScopeFamily, refused: Readonly<Record<string, string>> = {}): Promise<ErrorDetails> {
  const details: ErrorDetails = {};
  const scopes = body.scopes;
  if (Array.isArray(scopes) && scopes.length > 0) {
    if (!refused.scopes) {
      const resources = await knownResources();
      const problem = scopes.map((scope) => scopeProblem(scope, family, resources)).find((p) => p !== undefined);
      if (problem) details.scopes = problem;
    }
  } else if (scopes !== undefined || refused.scopes) {
    // Missing, empty or not a list: the scopes that exist and the form this family takes.
    details.scopes = scopesHint(family, await knownResources());
  }
  if (!refused.expiresAt && typeof body.expiresAt === 'string') {
    const problem = expiryProblem(body.expiresAt);
    if (problem) details.expiresAt = problem;
  }
  return details;
}

async function checkKeyBody(body: Readonly<Record<string, unknown>>, family: ScopeFamily): Promise<void> {
  const details = await keyBodyProblems(body, family);
  if (Object.keys(details).length) throw new ValidationError(details);
}

/** A valid expiry in the form stored (ISO, UTC), null for none. */
function storedExpiry(value: string | null | undefined): string | null {
  return value ? new Date(Date.parse(value)).toISOString() : null;
}

/** `*` is reserved for administrators (CONTRACT.md): anyone else gets 403. */
function checkWildcard(scopes: readonly string[] | undefined, auth: AuthContext): void {
  if (scopes?.includes('*') && auth.user.role !== 'admin') {
    throw new ForbiddenError("Only an administrator may grant the '*' scope");
  }
}

// ---------- records ----------

function statusOf(item: ApiKeyItem, now = Date.now()): KeyRecord['status'] {
  if (item.status === 'active' && item.keyExpiresAt && Date.parse(item.keyExpiresAt) <= now) return 'expired';
  return item.status;
}

function maxIso(a: string | null | undefined, b: string | null): string | null {
  if (!a) return b;
  if (!b) return a;
  return a > b ? a : b;
}

/** The API view of a key item, with usage (requests counted here but not yet written included). */
export async function toRecord(item: ApiKeyItem): Promise<KeyRecord> {
  const requestsLast24h = await keyRequestsLast24h(item.id);
  const local = unwrittenUsage(item.id);
  const total = (item.totalRequests ?? 0) + local.pending;
  return {
    ...recordWithoutUsage(item),
    lastUsedAt: maxIso(item.lastUsedAt, local.lastUsedAt),
    // The lifetime total is written coalesced; it is never less than the last 24 hours.
    totalRequests: Math.max(total, requestsLast24h),
    requestsLast24h,
  };
}

const AUDIT_ACTIONS: ReadonlySet<string> = new Set<AuditAction>(['created', 'updated', 'revoked', 'expired', 'inactive', 'insufficient_scope']);

function isAuditAction(value: unknown): value is AuditAction {
  return typeof value === 'string' && AUDIT_ACTIONS.has(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An audit item as the API shows it (its keys left out); undefined for an item that is not one. */
function publicAudit(item: Record<string, unknown>): AuditEntry | undefined {
  const { id, keyId, action, ipAddress, userAgent, timestamp, details } = item;
  if (typeof id !== 'string' || typeof keyId !== 'string' || !isAuditAction(action) || typeof ipAddress !== 'string' || typeof userAgent !== 'string' || typeof timestamp !== 'string') return undefined;
  return { id, keyId, action, ipAddress, userAgent, timestamp, ...(isRecord(details) ? { details } : {}) };
}

/** A key item of the identity table (the index lists only these under a user's keys). */
function isApiKeyItem(item: unknown): item is ApiKeyItem {
  if (!isRecord(item)) return false;
  return item.sk === 'APIKEY' && typeof item.id === 'string' && typeof item.keyPrefix === 'string' && typeof item.userId === 'string' && typeof item.tenantId === 'string' && Array.isArray(item.scopes);
}

/** A key's id pointer (the index lists only these under a tenant's keys). */
function isKeyPointer(item: unknown): item is KeyPointer {
  return isRecord(item) && item.sk === 'KEYID' && typeof item.keyHash === 'string' && typeof item.userId === 'string' && typeof item.tenantId === 'string';
}

// ---------- lookups ----------

async function getPointer(keyId: string): Promise<KeyPointer | undefined> {
  if (!/^key_[A-Za-z0-9]{1,64}$/.test(keyId)) return undefined;
  const { Item } = await db().send(new GetCommand({ TableName: identity(), Key: keyIdPointerKey(keyId), ConsistentRead: true }));
  return Item as KeyPointer | undefined;
}

function mayManage(pointer: Pick<KeyPointer, 'userId' | 'tenantId'>, auth: AuthContext): boolean {
  if (pointer.tenantId !== auth.tenantId) return false;
  return pointer.userId === auth.user.id || auth.user.role === 'admin';
}

const notFound = () => new NotFoundError('API key not found');

/** The pointer of a key the caller may manage (revoked ones only when `allowRevoked`), else 404. */
async function resolvePointer(keyId: string, auth: AuthContext, allowRevoked = false): Promise<KeyPointer> {
  const pointer = await getPointer(keyId);
  if (!pointer || !mayManage(pointer, auth) || (pointer.revokedAt && !allowRevoked)) throw notFound();
  return pointer;
}

async function resolveKey(keyId: string, auth: AuthContext): Promise<{ pointer: KeyPointer; item: ApiKeyItem }> {
  const pointer = await resolvePointer(keyId, auth);
  const { Item } = await db().send(new GetCommand({ TableName: identity(), Key: apiKeyItemKey(pointer.keyHash), ConsistentRead: true }));
  if (!Item) throw notFound();
  return { pointer, item: Item as ApiKeyItem };
}

async function queryAll(input: ConstructorParameters<typeof QueryCommand>[0]): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

async function keysOfUser(userId: string): Promise<ApiKeyItem[]> {
  const items = await queryAll({
    TableName: identity(),
    IndexName: 'byParent',
    KeyConditionExpression: 'gsi1pk = :p',
    ExpressionAttributeValues: { ':p': userKeysIndexKey(userId) },
    ScanIndexForward: false,
  });
  return items.flatMap((item) => (isApiKeyItem(item) ? [item] : []));
}

async function keysOfTenant(tenantId: string): Promise<ApiKeyItem[]> {
  const pointers = (
    await queryAll({
      TableName: identity(),
      IndexName: 'byParent',
      KeyConditionExpression: 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': tenantKeysIndexKey(tenantId) },
      ScanIndexForward: false,
    })
  ).flatMap((item) => (isKeyPointer(item) ? [item] : []));
  const found = new Map<string, ApiKeyItem>();
  for (let i = 0; i < pointers.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = pointers.slice(i, i + 100).map((p) => apiKeyItemKey(p.keyHash));
    while (keys?.length) {
      const out = await db().send(new BatchGetCommand({ RequestItems: { [identity()]: { Keys: keys } } }));
      for (const item of out.Responses?.[identity()] ?? []) found.set(String(item.pk), item as ApiKeyItem);
      keys = out.UnprocessedKeys?.[identity()]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return pointers.map((p) => found.get(apiKeyItemKey(p.keyHash).pk)).filter((k): k is ApiKeyItem => k !== undefined);
}

// ---------- operations ----------

export interface ListOptions {
  all?: boolean;
  userId?: string;
}

/** The caller's keys, newest first; an admin may ask for the tenant's (`all`) or one user's. */
export async function listKeys(auth: AuthContext, options: ListOptions = {}): Promise<KeyRecord[]> {
  let items: ApiKeyItem[];
  if (options.all || (options.userId && options.userId !== auth.user.id)) {
    if (auth.user.role !== 'admin') throw new ForbiddenError("Only an administrator may list other users' keys");
    items = options.all ? await keysOfTenant(auth.tenantId) : (await keysOfUser(options.userId!)).filter((k) => k.tenantId === auth.tenantId);
  } else {
    items = await keysOfUser(auth.user.id);
  }
  return Promise.all(items.filter((k) => k.tenantId === auth.tenantId).map((k) => toRecord(k)));
}

export interface CreatedKey {
  record: KeyRecord;
  key: string;
}

/** A key's creation body, as its route declares it (body-schemas.ts; the stack has checked it). */
export type CreateKeyInput = CheckedBody<(typeof keyBodySchemas)['createKey' | 'createApiKey']>;

/** Creates a key for the caller (family decides the scope vocabulary); the key is returned once. */
export async function createKey(caller: Caller & { auth: AuthContext }, input: CreateKeyInput, family: ScopeFamily): Promise<CreatedKey> {
  const auth = caller.auth;
  await checkKeyBody(input, family);
  const name = input.name.trim();
  const scopes = [...new Set(input.scopes)];
  const expiresAt = storedExpiry(input.expiresAt);
  const environment = input.environment ?? 'live';
  checkWildcard(scopes, auth);

  const key = generateApiKey(environment);
  const hash = hashApiKey(key);
  const id = newId('key');
  const now = new Date().toISOString();
  const item: ApiKeyItem = {
    ...apiKeyItemKey(hash),
    id,
    keyPrefix: key.slice(0, KEY_PREFIX_LENGTH),
    name,
    scopes,
    status: 'active',
    keyExpiresAt: expiresAt,
    userId: auth.user.id,
    tenantId: auth.tenantId,
    environment,
    createdAt: now,
    updatedAt: now,
    lastUsedAt: null,
    totalRequests: 0,
    gsi1pk: userKeysIndexKey(auth.user.id),
    gsi1sk: `${now}#${id}`,
  };
  const pointer = {
    ...keyIdPointerKey(id),
    keyHash: hash,
    userId: auth.user.id,
    tenantId: auth.tenantId,
    gsi1pk: tenantKeysIndexKey(auth.tenantId),
    gsi1sk: `${now}#${id}`,
  };
  const audit = auditEntry(id, 'created', caller, { by: auth.user.id });
  await db().send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: identity(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: identity(), Item: pointer, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: identity(), Item: auditItem(audit) } },
      ],
    }),
  );
  // A remembered "unknown" for this hash (practically impossible) must not outlive the creation.
  evictApiKey({ hash });
  return { key, record: recordWithoutUsage(item) };
}

function recordWithoutUsage(item: ApiKeyItem): KeyRecord {
  return {
    id: item.id,
    keyPrefix: item.keyPrefix,
    name: item.name,
    scopes: item.scopes,
    status: statusOf(item),
    expiresAt: item.keyExpiresAt ?? null,
    lastUsedAt: item.lastUsedAt ?? null,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
    environment: item.environment ?? (item.keyPrefix.startsWith('sk_test_') ? 'test' : 'live'),
    userId: item.userId,
    totalRequests: item.totalRequests ?? 0,
    requestsLast24h: 0,
  };
}

export async function getKey(auth: AuthContext, keyId: string): Promise<KeyRecord> {
  const { item } = await resolveKey(keyId, auth);
  return toRecord(item);
}

/** A key's change, as its route declares it (body-schemas.ts; the stack has checked it). */
export type KeyChange = CheckedBody<(typeof keyBodySchemas)['updateApiKey']>;

/** PATCH {name?, scopes?, status?: active|inactive, expiresAt?}; takes effect at once in this container. */
export async function updateKey(caller: Caller & { auth: AuthContext }, keyId: string, input: KeyChange = {}): Promise<KeyRecord> {
  const auth = caller.auth;
  await checkKeyBody(input, 'api-keys');
  const name = input.name?.trim();
  const scopes = input.scopes && [...new Set(input.scopes)];
  const status: KeyStatus | undefined = input.status;
  checkWildcard(scopes, auth);

  const { pointer, item } = await resolveKey(keyId, auth);
  const changes: Partial<ApiKeyItem> = {};
  if (name !== undefined) changes.name = name;
  if (scopes !== undefined) changes.scopes = scopes;
  if (status !== undefined) changes.status = status;
  if ('expiresAt' in input) changes.keyExpiresAt = storedExpiry(input.expiresAt);
  const fields = Object.keys(changes).map((f) => (f === 'keyExpiresAt' ? 'expiresAt' : f));
  if (fields.length === 0) return toRecord(item);

  const now = new Date().toISOString();
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':updatedAt': now };
  const sets = ['updatedAt = :updatedAt'];
  for (const [field, value] of Object.entries(changes)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  const audit = auditEntry(keyId, 'updated', caller, { by: auth.user.id, fields });
  const transaction: TransactWriteCommandInput = {
    TransactItems: [
      {
        Update: {
          TableName: identity(),
          Key: apiKeyItemKey(pointer.keyHash),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      { Put: { TableName: identity(), Item: auditItem(audit) } },
    ],
  };
  await db().send(new TransactWriteCommand(transaction));
  evictApiKey({ hash: pointer.keyHash, keyId });
  return toRecord({ ...item, ...changes, updatedAt: now });
}

/** DELETE: the key item goes at once; the pointer stays (marked revoked) for the audit log. */
export async function revokeKey(caller: Caller & { auth: AuthContext }, keyId: string): Promise<{ id: string; revokedAt: string }> {
  const auth = caller.auth;
  const pointer = await resolvePointer(keyId, auth);
  const now = new Date().toISOString();
  const audit = auditEntry(keyId, 'revoked', caller, { by: auth.user.id });
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: identity(), Key: apiKeyItemKey(pointer.keyHash), ConditionExpression: 'attribute_exists(pk)' } },
          {
            Update: {
              TableName: identity(),
              Key: keyIdPointerKey(keyId),
              UpdateExpression: 'SET revokedAt = :now REMOVE gsi1pk, gsi1sk',
              ConditionExpression: 'attribute_not_exists(revokedAt)',
              ExpressionAttributeValues: { ':now': now },
            },
          },
          { Put: { TableName: identity(), Item: auditItem(audit) } },
        ],
      }),
    );
  } catch (error) {
    // Revoked concurrently: the key is gone either way.
    if ((error as Error).name === 'TransactionCanceledException') throw notFound();
    throw error;
  } finally {
    evictApiKey({ hash: pointer.keyHash, keyId });
    forgetApiKeyUsage(keyId);
  }
  return { id: keyId, revokedAt: now };
}

const AUDIT_SORT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#aud_[A-Za-z0-9]+$/;

/** The key's audit log, newest first (also for revoked keys), at most `limit` entries. */
export async function listAudit(auth: AuthContext, keyId: string, limit = 100, cursor?: string): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
  await resolvePointer(keyId, auth, true);
  let startKey: Record<string, unknown> | undefined;
  if (cursor) {
    // Only an audit sort key (`<ISO timestamp>#<auditId>`) continues the list; anything else is 400.
    const sk = Buffer.from(cursor, 'base64url').toString('utf8');
    if (!AUDIT_SORT_KEY.test(sk)) throw new BadRequestError('The cursor is invalid', { cursor: 'is not a cursor of this audit log' });
    startKey = { pk: auditPk(keyId), sk };
  }
  const page = await db().send(
    new QueryCommand({
      TableName: identity(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': auditPk(keyId) },
      ScanIndexForward: false,
      Limit: limit,
      ExclusiveStartKey: startKey,
    }),
  );
  const last = page.LastEvaluatedKey as { sk?: string } | undefined;
  return {
    entries: (page.Items ?? []).map(publicAudit).filter((entry) => entry !== undefined),
    nextCursor: last?.sk ? Buffer.from(last.sk, 'utf8').toString('base64url') : null,
  };
}
