/**
 * The bootstrap admin (CONTRACT.md "Running it"): at start, make sure the default tenant
 * `ten_default` and the admin user (ADMIN_EMAIL, default admin@localhost) exist. Idempotent.
 *
 * - The user does not exist: it is created as an admin of `ten_default`, with ADMIN_PASSWORD or,
 *   when none is given, a generated password that is returned (the caller prints it once).
 * - The user exists: it stays; when ADMIN_PASSWORD is given and no longer matches, the stored
 *   hash is replaced, so ADMIN_PASSWORD always works; its role is made admin again if needed.
 * - That user is the platform operator (the only one who may create tenants): its id is stored on
 *   the default tenant item as `operatorUserId`. Exactly one operator exists; changing
 *   ADMIN_EMAIL moves the role to the new user at the next start.
 */
import { ConflictError } from '../errors.js';
import { logger } from '../logger.js';
import {
  DEFAULT_TENANT_ID,
  DuplicateEmailError,
  createTenant,
  createUser,
  getTenant,
  getUserByEmail,
  normalizeEmail,
  updateTenant,
  updateUser,
  type Tenant,
  type User,
} from '../data/identity.js';
import { generatePassword, hashPassword, verifyPassword } from './passwords.js';

export const DEFAULT_ADMIN_EMAIL = 'admin@localhost';
export const DEFAULT_TENANT_NAME = 'Default';

async function ensureDefaultTenant(): Promise<Tenant> {
  const existing = await getTenant(DEFAULT_TENANT_ID);
  if (existing) return existing;
  try {
    return await createTenant({ id: DEFAULT_TENANT_ID, name: DEFAULT_TENANT_NAME });
  } catch (error) {
    // Another process created it first.
    if (error instanceof ConflictError) return (await getTenant(DEFAULT_TENANT_ID))!;
    throw error;
  }
}

/**
 * Ensures the default tenant and the admin exist. Returns `{email, password}` only when the admin
 * was created just now with a generated password.
 */
export async function ensureBootstrapAdmin(input: { email?: string; password?: string } = {}): Promise<{ email: string; password: string } | undefined> {
  const email = normalizeEmail(input.email || DEFAULT_ADMIN_EMAIL);
  const tenant = await ensureDefaultTenant();
  let generated: { email: string; password: string } | undefined;
  let user: User | undefined = await getUserByEmail(email);
  if (!user) {
    const password = input.password || generatePassword();
    try {
      user = await createUser({
        tenantId: DEFAULT_TENANT_ID,
        email,
        name: 'Administrator',
        role: 'admin',
        passwordHash: await hashPassword(password),
      });
      if (!input.password) generated = { email, password };
      logger.info('bootstrap admin created', { userId: user.id, tenantId: DEFAULT_TENANT_ID });
    } catch (error) {
      if (!(error instanceof DuplicateEmailError)) throw error;
      user = await getUserByEmail(email);
      if (!user) throw error;
    }
  } else {
    if (user.tenantId !== DEFAULT_TENANT_ID) {
      throw new Error(`ADMIN_EMAIL ${email} belongs to tenant ${user.tenantId}, not to the default tenant ${DEFAULT_TENANT_ID}`);
    }
    const passwordChanged = input.password !== undefined && input.password !== '' && !(await verifyPassword(input.password, user.passwordHash));
    if (passwordChanged || user.role !== 'admin') {
      user = await updateUser(user.id, {
        role: 'admin',
        ...(passwordChanged ? { passwordHash: await hashPassword(input.password!) } : {}),
      });
      logger.info('bootstrap admin updated', { userId: user.id, passwordChanged });
    }
  }
  if (tenant.operatorUserId !== user.id) await updateTenant(DEFAULT_TENANT_ID, { operatorUserId: user.id });
  return generated;
}

/** Whether the user is the platform operator (the bootstrap admin of the default tenant). */
export async function isOperator(user: { id: string }, tenantId: string): Promise<boolean> {
  if (tenantId !== DEFAULT_TENANT_ID) return false;
  const tenant = await getTenant(DEFAULT_TENANT_ID);
  return tenant?.operatorUserId === user.id;
}
