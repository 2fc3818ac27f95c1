/**
 * The auth family's business logic: login, the caller's own user, a tenant's users, the
 * caller's tenant and tenant creation by the operator. Handlers stay thin; everything that
 * decides something lives here. Nothing returned from here contains a password or its hash.
 *
 * Rules (also in docs/authentication.md):
 * - E-mails are unique across all tenants and stored lower-case.
 * - Passwords: at least 8 characters (at most 1024).
 * - User administration (POST/GET /users, GET/PATCH/DELETE /users/{id}) is for admins: a session
 *   of an admin, or an admin's API key holding `*`; anybody else gets 403 FORBIDDEN. Another
 *   tenant's user id answers 404.
 * - An admin cannot delete themself nor change their own role; the operator can be neither
 *   deleted nor demoted through the API, nor have their password reset by another admin.
 * - Changing a password needs a session (not an API key); the own password needs currentPassword
 *   (wrong → 422 with details.currentPassword). A password change ends the user's other sessions;
 *   an admin's reset ends all of them.
 * - `preferences` (user) and `settings` (tenant) are JSON objects merged shallowly on PATCH; a
 *   key set to null is removed; each is limited to 10 000 bytes of JSON.
 * - An admin may disable a user of the tenant (`status: disabled`): every credential of theirs is
 *   refused until enabled again (shared/auth/user-status.ts); not themself, not the operator.
 * - Users of an identity provider (shared/auth/oidc-users.ts) show their `issuer`; they have no
 *   password here, so none can be set for them.
 */
import { ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import {
  createTenantWithAdmin,
  createUser,
  deleteUser,
  getTenant,
  getUser,
  getUserByEmail,
  listTenantUsers,
  normalizeEmail,
  publicTenant,
  publicUser,
  updateTenant,
  updateUser,
  type PublicTenant,
  type PublicUser,
  type User,
  type UserChanges,
} from '../data/index.js';
import { evictApiKeysOfUser } from './api-keys.js';
import { isOperator } from './bootstrap.js';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from './passwords.js';
import { deleteOidcUser, forgetOidcUser, isOidcUser } from './oidc-users.js';
import { createSession, forgetSessionsOfUser, hashToken, revokeSession, revokeUserSessions } from './sessions.js';
import { isDisabled, setUserStatus, statusOf, type UserStatus } from './user-status.js';
import { signedIn } from './sign-in-listeners.js';
import { bodyValidator } from './validate.js';
import { invalidateMetadataSources } from '../entities/rules.js';
import { unstorable } from '../registry/index.js';

/** A failed login takes at least this long, whatever failed. */
export const LOGIN_FAILURE_FLOOR_MS = 100;
export const MAX_OBJECT_BYTES = 10_000;

// ---------- bodies (body-schemas.ts, validated by the precompiled validators) ----------

interface LoginInput {
  email: string;
  password: string;
}
const validateLogin = bodyValidator<LoginInput>('login');

interface UpdateMeInput {
  name?: string;
  password?: string;
  currentPassword?: string;
  preferences?: Record<string, unknown>;
}
const validateUpdateMe = bodyValidator<UpdateMeInput>('updateMe');

interface CreateUserInput {
  email: string;
  name: string;
  password: string;
  role?: 'admin' | 'user';
}
const validateCreateUser = bodyValidator<CreateUserInput>('createUser');

interface UpdateUserInput {
  name?: string;
  role?: 'admin' | 'user';
  password?: string;
  status?: UserStatus;
}
const validateUpdateUser = bodyValidator<UpdateUserInput>('updateUser');

interface UpdateTenantInput {
  name?: string;
  settings?: Record<string, unknown>;
}
const validateUpdateTenant = bodyValidator<UpdateTenantInput>('updateTenant');

interface CreateTenantInput {
  name: string;
  settings?: Record<string, unknown>;
  admin: { email: string; name: string; password: string };
}
const validateCreateTenant = bodyValidator<CreateTenantInput>('createTenant');

// ---------- helpers ----------

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until at least `floorMs` have passed since `startedAt` (performance.now()). */
export async function padTo(startedAt: number, floorMs: number): Promise<void> {
  const remaining = floorMs - (performance.now() - startedAt);
  if (remaining > 0) await sleep(Math.ceil(remaining));
}

/**
 * Shallow merge; a key set to null is removed. Throws 422 when the result is too large or holds
 * what DynamoDB cannot store (deep nesting, empty keys, unsafe numbers) or a `__proto__` key.
 */
export function mergeObject(current: Record<string, unknown> | undefined, changes: Record<string, unknown>, field: string): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(changes)) {
    if (key === '__proto__') throw new ValidationError({ [field]: "'__proto__' is not an allowed key" });
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  const problem = unstorable(merged);
  if (problem) throw new ValidationError({ [field]: problem });
  if (Buffer.byteLength(JSON.stringify(merged)) > MAX_OBJECT_BYTES) {
    throw new ValidationError({ [field]: `must be at most ${MAX_OBJECT_BYTES} bytes of JSON` });
  }
  return merged;
}

export interface SessionUserView {
  id: string;
  email: string;
  name: string;
  role: 'admin' | 'user';
  tenantId: string;
}

function sessionUserView(user: User): SessionUserView {
  return { id: user.id, email: user.email, name: user.name, role: user.role, tenantId: user.tenantId };
}

/** A user as the API shows it: its public fields, its status, and the identity provider it signs in with. */
export type UserView = PublicUser & { status: UserStatus; issuer?: string };

export function userView(user: User): UserView {
  return { ...publicUser(user), status: statusOf(user), ...(isOidcUser(user) ? { issuer: user.issuer } : {}) };
}

/** Users of an identity provider have no password in this API. */
function refusePassword(user: User): void {
  if (isOidcUser(user)) throw new ValidationError({ password: `is managed by the identity provider ${user.issuer}` });
}

/** A change of a user's role, status or existence: forgotten by this container's caches of the user. */
function forgetUser(userId: string): void {
  forgetSessionsOfUser(userId);
  forgetOidcUser(userId);
}

function requireAuth(auth: AuthContext | undefined): AuthContext {
  if (!auth) throw new UnauthorizedError();
  return auth;
}

/** Admins only: a session of an admin, or an admin's key holding `*`. */
export function requireAdmin(auth: AuthContext | undefined): AuthContext {
  const caller = requireAuth(auth);
  const admin = caller.user.role === 'admin' && (caller.type === 'session' || caller.scopes.includes('*'));
  if (!admin) throw new ForbiddenError('This operation is for administrators only');
  return caller;
}

async function currentUser(auth: AuthContext): Promise<User> {
  const user = await getUser(auth.user.id);
  if (!user || user.tenantId !== auth.tenantId) throw new UnauthorizedError('The user no longer exists');
  return user;
}

/** A user of the caller's tenant; another tenant's (or no) user is 404. */
async function tenantUser(auth: AuthContext, userId: string): Promise<User> {
  const user = await getUser(userId);
  if (!user || user.tenantId !== auth.tenantId) throw new NotFoundError('User not found');
  return user;
}

// ---------- login, logout, refresh ----------

export interface LoginResult {
  user: SessionUserView;
  token: string;
  expiresAt: number;
}

/**
 * Checks e-mail and password. A wrong e-mail and a wrong password fail alike: the same 401 body,
 * an scrypt run either way (against a dummy hash for an unknown e-mail), and at least
 * LOGIN_FAILURE_FLOOR_MS from the start of the attempt.
 */
export async function login(body: unknown, previousToken?: string): Promise<LoginResult> {
  const startedAt = performance.now();
  const input = validateLogin(body);
  try {
    const user = await getUserByEmail(normalizeEmail(input.email));
    const matches = await verifyPassword(input.password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    // A disabled user fails like a wrong password: the answer does not tell that the account exists.
    if (!user || !matches || isDisabled(user)) throw new UnauthorizedError('Invalid email or password', 'AUTHENTICATION_FAILED');
    const session = await createSession(user);
    // The session the browser had before (if any) ends: no session fixation, no stale sessions.
    if (previousToken) await revokeSession(hashToken(previousToken)).catch(() => undefined);
    signedIn(user);
    return { user: sessionUserView(user), token: session.token, expiresAt: session.expiresAt };
  } catch (error) {
    await padTo(startedAt, LOGIN_FAILURE_FLOOR_MS);
    throw error;
  }
}

/** Ends the caller's session; says which identity provider it was signed in with, if any (its logout is offered). */
export async function logout(auth: AuthContext | undefined): Promise<{ issuer?: string }> {
  const caller = requireAuth(auth);
  if (!caller.sessionId) return {};
  return revokeSession(caller.sessionId);
}

/** A new session for the caller; the old one ends. */
export async function refresh(auth: AuthContext | undefined): Promise<LoginResult> {
  const caller = requireAuth(auth);
  if (caller.type !== 'session' || !caller.sessionId) throw new ForbiddenError('Only a session can be refreshed');
  const user = await currentUser(caller);
  const session = await createSession(user);
  await revokeSession(caller.sessionId);
  return { user: sessionUserView(user), token: session.token, expiresAt: session.expiresAt };
}

// ---------- the caller ----------

export async function getMe(auth: AuthContext | undefined): Promise<UserView> {
  return userView(await currentUser(requireAuth(auth)));
}

export async function updateMe(auth: AuthContext | undefined, body: unknown): Promise<UserView> {
  const caller = requireAuth(auth);
  const input = validateUpdateMe(body);
  const user = await currentUser(caller);
  const changes: UserChanges = {};
  if (input.name !== undefined) changes.name = input.name.trim();
  if (input.preferences !== undefined) changes.preferences = mergeObject(user.preferences, input.preferences, 'preferences');
  if (input.password !== undefined) {
    if (caller.type !== 'session') throw new ForbiddenError('Changing the password needs a session; an API key cannot do it');
    refusePassword(user);
    if (!(await verifyPassword(input.currentPassword!, user.passwordHash))) {
      throw new ValidationError({ currentPassword: 'is incorrect' });
    }
    changes.passwordHash = await hashPassword(input.password);
  }
  const updated = await updateUser(user.id, changes);
  if (changes.passwordHash) await revokeUserSessions(user.id, caller.sessionId);
  else forgetSessionsOfUser(user.id);
  // Preferences are a source of merged metadata, cached per container.
  if (changes.preferences) invalidateMetadataSources({ userId: user.id });
  return userView(updated);
}

// ---------- a tenant's users (admins) ----------

export async function createTenantUserAsAdmin(auth: AuthContext | undefined, body: unknown): Promise<UserView> {
  const caller = requireAdmin(auth);
  const input = validateCreateUser(body);
  const user = await createUser({
    tenantId: caller.tenantId,
    email: normalizeEmail(input.email),
    name: input.name.trim(),
    role: input.role ?? 'user',
    passwordHash: await hashPassword(input.password),
  });
  return userView(user);
}

export async function listUsersAsAdmin(auth: AuthContext | undefined): Promise<UserView[]> {
  const caller = requireAdmin(auth);
  return (await listTenantUsers(caller.tenantId)).map(userView);
}

export async function getUserAsAdmin(auth: AuthContext | undefined, userId: string): Promise<UserView> {
  const caller = requireAdmin(auth);
  return userView(await tenantUser(caller, userId));
}

export async function updateUserAsAdmin(auth: AuthContext | undefined, userId: string, body: unknown): Promise<UserView> {
  const caller = requireAdmin(auth);
  const input = validateUpdateUser(body);
  const user = await tenantUser(caller, userId);
  const self = user.id === caller.user.id;
  if (input.role !== undefined && input.role !== user.role) {
    if (self) throw new ForbiddenError('An admin cannot change their own role');
    if (await isOperator(user, user.tenantId)) throw new ForbiddenError('The platform operator cannot be demoted');
  }
  if (input.status !== undefined && input.status !== statusOf(user)) {
    if (self) throw new ForbiddenError('An admin cannot disable themself');
    if (await isOperator(user, user.tenantId)) throw new ForbiddenError('The platform operator cannot be disabled');
  }
  if (input.password !== undefined) {
    if (self) throw new ValidationError({ password: 'change your own password with PATCH /api/v1/users/me and currentPassword' });
    refusePassword(user);
    if (caller.type !== 'session') throw new ForbiddenError('Resetting a password needs a session; an API key cannot do it');
    // Another admin of the default tenant would otherwise take over the operator's account.
    if (await isOperator(user, user.tenantId)) throw new ForbiddenError("The platform operator's password cannot be reset through the API");
  }
  const changes: UserChanges = {
    ...(input.name !== undefined ? { name: input.name.trim() } : {}),
    ...(input.role !== undefined ? { role: input.role } : {}),
    ...(input.password !== undefined ? { passwordHash: await hashPassword(input.password) } : {}),
  };
  const statusChanged = input.status !== undefined && input.status !== statusOf(user);
  if (statusChanged) await setUserStatus(user.id, input.status!);
  const updated = Object.keys(changes).length ? await updateUser(user.id, changes) : ((await getUser(user.id)) ?? user);
  if (changes.role !== undefined || statusChanged) evictApiKeysOfUser(user.id);
  forgetUser(user.id);
  if (changes.passwordHash || input.status === 'disabled') await revokeUserSessions(user.id);
  return userView(updated);
}

export async function deleteUserAsAdmin(auth: AuthContext | undefined, userId: string): Promise<{ id: string }> {
  const caller = requireAdmin(auth);
  const user = await tenantUser(caller, userId);
  if (user.id === caller.user.id) throw new ForbiddenError('An admin cannot delete themself');
  if (await isOperator(user, user.tenantId)) throw new ForbiddenError('The platform operator cannot be deleted');
  if (isOidcUser(user)) await deleteOidcUser(user);
  else await deleteUser(user);
  evictApiKeysOfUser(user.id);
  forgetOidcUser(user.id);
  await revokeUserSessions(user.id);
  return { id: user.id };
}

// ---------- tenants ----------

export async function getMyTenant(auth: AuthContext | undefined): Promise<Pick<PublicTenant, 'id' | 'name' | 'settings'>> {
  const caller = requireAuth(auth);
  const tenant = await getTenant(caller.tenantId);
  if (!tenant) throw new NotFoundError('Tenant not found');
  const { id, name: tenantName, settings } = publicTenant(tenant);
  return { id, name: tenantName, settings };
}

export async function updateMyTenant(auth: AuthContext | undefined, body: unknown): Promise<Pick<PublicTenant, 'id' | 'name' | 'settings'>> {
  const caller = requireAdmin(auth);
  const input = validateUpdateTenant(body);
  const tenant = await getTenant(caller.tenantId);
  if (!tenant) throw new NotFoundError('Tenant not found');
  const updated = await updateTenant(caller.tenantId, {
    ...(input.name !== undefined ? { name: input.name.trim() } : {}),
    ...(input.settings !== undefined ? { settings: mergeObject(tenant.settings, input.settings, 'settings') } : {}),
  });
  // Settings are a source of merged metadata, cached per container.
  if (input.settings !== undefined) invalidateMetadataSources({ tenantId: caller.tenantId });
  return { id: updated.id, name: updated.name, settings: updated.settings ?? {} };
}

export interface CreatedTenant {
  id: string;
  name: string;
  settings: Record<string, unknown>;
  admin: SessionUserView;
}

/** The operator only (the bootstrap admin's session): a new tenant and its first admin. */
export async function createTenantAsOperator(auth: AuthContext | undefined, body: unknown): Promise<CreatedTenant> {
  const caller = requireAuth(auth);
  if (caller.type !== 'session' || !(await isOperator(caller.user, caller.tenantId))) {
    throw new ForbiddenError('Only the platform operator can create tenants');
  }
  const input = validateCreateTenant(body);
  if (input.settings) mergeObject({}, input.settings, 'settings');
  const { tenant, admin } = await createTenantWithAdmin(
    { name: input.name.trim(), settings: input.settings },
    { email: normalizeEmail(input.admin.email), name: input.admin.name.trim(), passwordHash: await hashPassword(input.admin.password) },
  );
  return { id: tenant.id, name: tenant.name, settings: tenant.settings, admin: sessionUserView(admin) };
}
