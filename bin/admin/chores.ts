/**
 * The operator's chores on the identity table, through the domain code the API itself runs
 * (shared/data/identity.ts, shared/auth/*): the same validation, hashing and layout. They act as
 * the platform operator would, without a session: tenants, users, roles, keys, passwords.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_TENANT_ID, createTenantWithAdmin, createUser, getTenant, getUser, getUserByEmail, listTenantUsers, normalizeEmail, updateUser, type User } from '../../shared/data/identity.js';
import { db, tableName } from '../../shared/data/client.js';
import { keyIdPointerKey } from '../../shared/auth/api-keys.js';
import { createKey, listKeys, revokeKey, type CreateKeyInput, type Environment, type KeyRecord } from '../../shared/auth/key-management.js';
import { generatePassword, hashPassword, MIN_PASSWORD_LENGTH } from '../../shared/auth/passwords.js';
import { revokeUserSessions } from '../../shared/auth/sessions.js';
import { scopesForRole } from '../../shared/scopes.js';
import { ApiError } from '../../shared/errors.js';
import type { AuthContext, Role } from '../../shared/caller.js';
import { loadRegistry } from '../../shared/registry/index.js';

/** A mistake the operator can fix: printed as one line, exit code 1. */
export class ChoreError extends Error {}

/** An ApiError from the domain code, said the way the API would say it. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const details = (error.toJSON() as { details?: Record<string, string> }).details;
    return details ? `${error.message}: ${Object.entries(details).map(([k, v]) => `${k} ${v}`).join('; ')}` : error.message;
  }
  return (error as Error).message;
}

async function userByEmail(email: string): Promise<User> {
  const user = await getUserByEmail(normalizeEmail(email));
  if (!user) throw new ChoreError(`No user has the e-mail ${email}`);
  return user;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024) throw new ChoreError(`A password has ${MIN_PASSWORD_LENGTH} to 1024 characters`);
}

/** The session-like caller the key functions expect, for `user`. */
export function actingAs(user: User): { auth: AuthContext; ip: string; userAgent: string } {
  return {
    auth: { type: 'session', user: { id: user.id, email: user.email, name: user.name, role: user.role }, tenantId: user.tenantId, scopes: scopesForRole(user.role) },
    ip: '127.0.0.1',
    userAgent: 'era-admin-cli',
  };
}

export async function createTenant(name: string, admin: { email: string; name: string; password?: string }) {
  const password = admin.password ?? generatePassword();
  checkPassword(password);
  const { tenant, admin: user } = await createTenantWithAdmin({ name }, { email: normalizeEmail(admin.email), name: admin.name, passwordHash: await hashPassword(password) });
  return { tenant: { id: tenant.id, name: tenant.name }, admin: { id: user.id, email: user.email }, password: admin.password ? undefined : password };
}

export async function createTenantUser(input: { email: string; name: string; role: Role; tenantId: string; password?: string }) {
  if (!(await getTenant(input.tenantId))) throw new ChoreError(`No tenant has the id ${input.tenantId}`);
  const password = input.password ?? generatePassword();
  checkPassword(password);
  const user = await createUser({ tenantId: input.tenantId, email: normalizeEmail(input.email), name: input.name, role: input.role, passwordHash: await hashPassword(password) });
  return { user: { id: user.id, email: user.email, role: user.role, tenantId: user.tenantId }, password: input.password ? undefined : password };
}

export async function listUsers(tenantId: string) {
  return (await listTenantUsers(tenantId)).map((u) => ({ id: u.id, email: u.email, name: u.name, role: u.role, createdAt: u.createdAt }));
}

export async function setRole(email: string, role: Role) {
  const user = await userByEmail(email);
  const tenant = await getTenant(user.tenantId);
  if (role !== 'admin' && tenant?.operatorUserId === user.id) throw new ChoreError(`${user.email} is the platform operator (ADMIN_EMAIL): it stays an admin`);
  const updated = await updateUser(user.id, { role });
  return { id: updated.id, email: updated.email, role: updated.role };
}

/** Sets a new password (given or generated) and ends the user's sessions. */
export async function resetPassword(email: string, password?: string) {
  const user = await userByEmail(email);
  const chosen = password ?? generatePassword();
  checkPassword(chosen);
  await updateUser(user.id, { passwordHash: await hashPassword(chosen) });
  const ended = await revokeUserSessions(user.id);
  return { email: user.email, password: password ? undefined : chosen, sessionsEnded: ended };
}

export async function createApiKey(email: string, input: { name: string; scopes: string[]; expiresAt?: string; environment?: string }) {
  await loadRegistry();
  const user = await userByEmail(email);
  const body: CreateKeyInput = { name: input.name, scopes: input.scopes };
  if (input.expiresAt) body.expiresAt = input.expiresAt;
  if (input.environment) body.environment = input.environment as Environment;
  const created = await createKey(actingAs(user), body, 'api-keys');
  return { key: created.key, record: created.record };
}

export async function listApiKeys(email: string): Promise<KeyRecord[]> {
  const user = await userByEmail(email);
  return listKeys(actingAs(user).auth);
}

export async function revokeApiKey(keyId: string) {
  const pointer = (await db().send(new GetCommand({ TableName: tableName('identity'), Key: keyIdPointerKey(keyId) }))).Item;
  if (!pointer || pointer.revokedAt) throw new ChoreError(`No active key has the id ${keyId}`);
  const owner = await getUser(String(pointer.userId));
  if (!owner) throw new ChoreError(`The owner of ${keyId} no longer exists`);
  return revokeKey(actingAs(owner), keyId);
}

export { DEFAULT_TENANT_ID };
