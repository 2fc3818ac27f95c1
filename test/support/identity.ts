/**
 * Isolated identities for integration tests: each test file makes its own tenant (through the
 * operator) and its own users, so no state is shared between files.
 */
import { randomBytes } from 'node:crypto';
import { api, sessionCookieOf } from './http.js';
import { OPERATOR } from './server.js';

export { OPERATOR };

export interface TestUser {
  id: string;
  email: string;
  password: string;
  /** `session=<token>`, ready for api(..., {cookie}). */
  cookie: string;
}

export interface TestTenant {
  tenantId: string;
  admin: TestUser;
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(6).toString('hex')}@test.local`;
}

/** Logs in and returns the session cookie; throws with the response when the login fails. */
export async function login(email: string, password: string): Promise<string> {
  const response = await api('POST', '/api/v1/auth/login', { body: { email, password } });
  const cookie = sessionCookieOf(response);
  if (response.status !== 200 || !cookie) throw new Error(`login of ${email} failed: ${response.status} ${response.text}`);
  return cookie;
}

export async function loginAsOperator(): Promise<string> {
  return login(OPERATOR.email, OPERATOR.password);
}

/** A new tenant with its first admin, logged in. */
export async function newTenant(name = `Tenant ${randomBytes(4).toString('hex')}`): Promise<TestTenant> {
  const operator = await loginAsOperator();
  const admin = { email: uniqueEmail('admin'), name: 'Tenant Admin', password: `pw-${randomBytes(8).toString('hex')}` };
  const response = await api('POST', '/api/v1/tenants', { cookie: operator, body: { name, admin } });
  if (response.status !== 201) throw new Error(`tenant creation failed: ${response.status} ${response.text}`);
  const cookie = await login(admin.email, admin.password);
  return {
    tenantId: response.body.data.id,
    admin: { id: response.body.data.admin.id, email: admin.email, password: admin.password, cookie },
  };
}

/** A new user in the admin's tenant, logged in. */
export async function newUser(adminCookie: string, role: 'admin' | 'user' = 'user'): Promise<TestUser> {
  const email = uniqueEmail(role);
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const response = await api('POST', '/api/v1/users', { cookie: adminCookie, body: { email, name: `Test ${role}`, password, role } });
  if (response.status !== 201) throw new Error(`user creation failed: ${response.status} ${response.text}`);
  const cookie = await login(email, password);
  return { id: response.body.data.id, email, password, cookie };
}
