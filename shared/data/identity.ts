/**
 * Repository for tenants and users in the identity table (layout in docs/CONTRIBUTING.md):
 *
 * - Tenant: pk `TENANT#<id>`, sk `TENANT`
 * - User:   pk `USER#<id>`, sk `USER`; gsi1pk `TENANT#<tenantId>#USERS`, gsi1sk `<createdAt>#<id>`
 * - E-mail: pk `EMAIL#<lower-case e-mail>`, sk `EMAIL` → {userId} (uniqueness across all tenants)
 *
 * Key builders are pure; the I/O functions are thin wrappers around `db()`. `publicUser` is the
 * only way a user leaves this module towards a response: it drops passwordHash and key attributes.
 */
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type QueryCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Role } from '../caller.js';
import { newId } from '../ids.js';
import { db, tableName } from './client.js';

export const DEFAULT_TENANT_ID = 'ten_default';

export interface Tenant {
  id: string;
  name: string;
  settings: Record<string, unknown>;
  /** Set on the default tenant only: the platform operator's user id (the bootstrap admin). Never returned. */
  operatorUserId?: string;
  createdAt: string;
  updatedAt: string;
}

export interface User {
  id: string;
  tenantId: string;
  email: string;
  name: string;
  role: Role;
  passwordHash: string;
  preferences: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export type PublicUser = Omit<User, 'passwordHash'>;

// ---------- pure key builders ----------

export function tenantKey(tenantId: string): { pk: string; sk: 'TENANT' } {
  return { pk: `TENANT#${tenantId}`, sk: 'TENANT' };
}

export function userKey(userId: string): { pk: string; sk: 'USER' } {
  return { pk: `USER#${userId}`, sk: 'USER' };
}

export function emailKey(email: string): { pk: string; sk: 'EMAIL' } {
  return { pk: `EMAIL#${normalizeEmail(email)}`, sk: 'EMAIL' };
}

export function tenantUsersIndexKey(tenantId: string): string {
  return `TENANT#${tenantId}#USERS`;
}

export function userIndexSortKey(user: Pick<User, 'createdAt' | 'id'>): string {
  return `${user.createdAt}#${user.id}`;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'expiresAt'] as const;

function stripKeys<T>(item: Record<string, unknown>): T {
  const copy: Record<string, unknown> = { ...item };
  for (const name of KEY_ATTRIBUTES) delete copy[name];
  return copy as T;
}

/** The user as a response may show it: listed fields only, so never passwordHash (nor any password). */
export function publicUser(user: User | PublicUser): PublicUser {
  return {
    id: user.id,
    tenantId: user.tenantId,
    email: user.email,
    name: user.name,
    role: user.role,
    preferences: user.preferences ?? {},
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  };
}

export type PublicTenant = Omit<Tenant, 'operatorUserId'>;

export function publicTenant(tenant: Tenant): PublicTenant {
  return { id: tenant.id, name: tenant.name, settings: tenant.settings ?? {}, createdAt: tenant.createdAt, updatedAt: tenant.updatedAt };
}

function isConditionFailure(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return name === 'ConditionalCheckFailedException' || name === 'TransactionCanceledException';
}

// ---------- tenants ----------

export async function createTenant(input: { id?: string; name: string; settings?: Record<string, unknown> }): Promise<Tenant> {
  const now = new Date().toISOString();
  const tenant: Tenant = { id: input.id ?? newId('ten'), name: input.name, settings: input.settings ?? {}, createdAt: now, updatedAt: now };
  try {
    await db().send(
      new PutCommand({
        TableName: tableName('identity'),
        Item: { ...tenantKey(tenant.id), ...tenant },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new ConflictError(`Tenant ${tenant.id} already exists`);
    throw error;
  }
  return tenant;
}

export async function getTenant(tenantId: string): Promise<Tenant | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName('identity'), Key: tenantKey(tenantId), ConsistentRead: true }));
  return Item ? stripKeys<Tenant>(Item) : undefined;
}

export async function updateTenant(
  tenantId: string,
  changes: { name?: string; settings?: Record<string, unknown>; operatorUserId?: string },
): Promise<Tenant> {
  const { expression, names, values } = updateExpression({ ...changes, updatedAt: new Date().toISOString() });
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName('identity'),
        Key: tenantKey(tenantId),
        UpdateExpression: expression,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return stripKeys<Tenant>(Attributes!);
  } catch (error) {
    if (isConditionFailure(error)) throw new NotFoundError('Tenant not found');
    throw error;
  }
}

// ---------- users ----------

export interface NewUser {
  id?: string;
  tenantId: string;
  email: string;
  name: string;
  role: Role;
  passwordHash: string;
  preferences?: Record<string, unknown>;
}

export class DuplicateEmailError extends ConflictError {
  constructor(field = 'email') {
    super('A user with this email already exists', 'CONFLICT', { [field]: 'is already registered' });
  }
}

function buildUser(input: NewUser, now: string): User {
  return {
    id: input.id ?? newId('usr'),
    tenantId: input.tenantId,
    email: normalizeEmail(input.email),
    name: input.name,
    role: input.role,
    passwordHash: input.passwordHash,
    preferences: input.preferences ?? {},
    createdAt: now,
    updatedAt: now,
  };
}

/** The two puts that create a user: its e-mail uniqueness item and the user item. */
function userPuts(user: User) {
  return [
    {
      Put: {
        TableName: tableName('identity'),
        Item: { ...emailKey(user.email), userId: user.id },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName('identity'),
        Item: { ...userKey(user.id), gsi1pk: tenantUsersIndexKey(user.tenantId), gsi1sk: userIndexSortKey(user), ...user },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

/** Writes the user and its e-mail uniqueness item together; a taken e-mail → 409 CONFLICT. */
export async function createUser(input: NewUser): Promise<User> {
  const user = buildUser(input, new Date().toISOString());
  try {
    await db().send(new TransactWriteCommand({ TransactItems: userPuts(user) }));
  } catch (error) {
    if (isConditionFailure(error)) throw new DuplicateEmailError();
    throw error;
  }
  return user;
}

/** A new tenant and its first admin, in one transaction: either both exist afterwards or neither. */
export async function createTenantWithAdmin(
  tenantInput: { name: string; settings?: Record<string, unknown> },
  adminInput: Omit<NewUser, 'tenantId' | 'role'>,
): Promise<{ tenant: Tenant; admin: User }> {
  const now = new Date().toISOString();
  const tenant: Tenant = { id: newId('ten'), name: tenantInput.name, settings: tenantInput.settings ?? {}, createdAt: now, updatedAt: now };
  const admin = buildUser({ ...adminInput, tenantId: tenant.id, role: 'admin' }, now);
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName('identity'),
              Item: { ...tenantKey(tenant.id), ...tenant },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          ...userPuts(admin),
        ],
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new DuplicateEmailError('admin.email');
    throw error;
  }
  return { tenant, admin };
}

export async function getUser(userId: string): Promise<User | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName('identity'), Key: userKey(userId), ConsistentRead: true }));
  return Item ? stripKeys<User>(Item) : undefined;
}

export async function getUserByEmail(email: string): Promise<User | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName('identity'), Key: emailKey(email), ConsistentRead: true }));
  if (!Item || typeof Item.userId !== 'string') return undefined;
  return getUser(Item.userId);
}

/** Every item under one parent of the byParent index, all pages (the GSI is eventually consistent). */
export async function queryByParent(parentKey: string, projection?: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page: QueryCommandOutput = await db().send(
      new QueryCommand({
        TableName: tableName('identity'),
        IndexName: 'byParent',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': parentKey },
        ...(projection ? { ProjectionExpression: projection } : {}),
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** A tenant's users, oldest first. */
export async function listTenantUsers(tenantId: string): Promise<User[]> {
  return (await queryByParent(tenantUsersIndexKey(tenantId))).map((item) => stripKeys<User>(item));
}

export interface UserChanges {
  name?: string;
  role?: Role;
  passwordHash?: string;
  preferences?: Record<string, unknown>;
}

export async function updateUser(userId: string, changes: UserChanges): Promise<User> {
  const { expression, names, values } = updateExpression({ ...changes, updatedAt: new Date().toISOString() });
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName('identity'),
        Key: userKey(userId),
        UpdateExpression: expression,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return stripKeys<User>(Attributes!);
  } catch (error) {
    if (isConditionFailure(error)) throw new NotFoundError('User not found');
    throw error;
  }
}

/** Deletes the user and its e-mail item together. Sessions of the user stop working at once (verifySession reads the user). */
export async function deleteUser(user: Pick<User, 'id' | 'email'>): Promise<void> {
  await db().send(
    new TransactWriteCommand({
      TransactItems: [
        { Delete: { TableName: tableName('identity'), Key: userKey(user.id) } },
        {
          Delete: {
            TableName: tableName('identity'),
            Key: emailKey(user.email),
            ConditionExpression: 'attribute_not_exists(pk) OR userId = :id',
            ExpressionAttributeValues: { ':id': user.id },
          },
        },
      ],
    }),
  );
}

// ---------- helpers ----------

/** `SET #a = :a, ...` for every defined value. */
export function updateExpression(changes: Record<string, unknown>): {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  Object.entries(changes)
    .filter(([, value]) => value !== undefined)
    .forEach(([name, value], i) => {
      names[`#f${i}`] = name;
      values[`:v${i}`] = value;
      sets.push(`#f${i} = :v${i}`);
    });
  return { expression: `SET ${sets.join(', ')}`, names, values };
}
