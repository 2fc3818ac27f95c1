/**
 * JSON requests to a local runtime (the run's, or an `npm start` child of a scenario), as the HTTP
 * scenarios send them: status, parsed body, headers; and the sign-in steps several of them repeat.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface BenchReply {
  status: number;
  body: any;
  headers: Headers;
}

/** Where requests go: a LocalRuntime fits, or `{ url }` of any server. */
export interface BenchTarget {
  url: string;
}

export async function send(target: BenchTarget, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<BenchReply> {
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** `send`, throwing on a status of 400 or more (with the body). */
export async function ok(target: BenchTarget, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<BenchReply> {
  const reply = await send(target, method, path, headers, body);
  if (reply.status >= 400) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
  return reply;
}

/** The `session=…` cookie a login set. */
export function cookieOf(headers: Headers): string {
  return headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
}

/** Logs in: the session's Cookie header. */
export async function sessionOf(target: BenchTarget, credentials: { email: string; password: string }): Promise<Record<string, string>> {
  const login = await ok(target, 'POST', '/api/v1/auth/login', {}, { email: credentials.email, password: credentials.password });
  return { Cookie: cookieOf(login.headers) };
}

export interface BenchKey {
  /** The user's session (Cookie header). */
  session: Record<string, string>;
  /** The key's Authorization header. */
  key: Record<string, string>;
  /** The key itself. */
  secret: string;
}

/** Logs in as `credentials` and creates an API key of theirs. */
export async function apiKeyOf(target: BenchTarget, credentials: { email: string; password: string }, name: string, scopes: string[] = ['*']): Promise<BenchKey> {
  const session = await sessionOf(target, credentials);
  const secret = (await ok(target, 'POST', '/api/v1/api-keys', session, { name, scopes })).body.data.key as string;
  return { session, key: { Authorization: `Bearer ${secret}` }, secret };
}

/**
 * A fresh tenant created by the platform operator (`operator`: its Cookie header), its admin's
 * session and an API key of theirs with every scope. `name` names the tenant, its admin and the
 * key (`name` `label`), its lower case starts the admin's email.
 */
export async function tenantKey(target: BenchTarget, operator: Record<string, string>, name: string, label: string): Promise<BenchKey & { adminId: string }> {
  const slug = name.toLowerCase();
  const admin = { email: `${slug}-${label}-${randomBytes(4).toString('hex')}@bench.local`, name, password: `pw-${randomBytes(8).toString('hex')}` };
  const tenant = await ok(target, 'POST', '/api/v1/tenants', operator, { name: `${name} ${label}`, admin });
  return { ...(await apiKeyOf(target, admin, `${slug}-${label}`)), adminId: tenant.body.data.admin.id };
}

/** Calls `onBlock` with each message block of a server-sent-events response (the text between blank lines). */
export function readSseBlocks(res: IncomingMessage, onBlock: (block: string) => void): void {
  let buffer = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      onBlock(block);
    }
  });
}
