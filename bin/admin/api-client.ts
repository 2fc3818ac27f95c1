/**
 * The admin CLI's HTTP side: imports and exports go through the API itself (its validation, its
 * row-level security, its import with Idempotency-Keys), as the user they are run for.
 *
 * Credentials: `--key` (or API_KEY), else the CLI's own API key for that user (scopes read and
 * write), created through the domain code the first time and kept in DATA_DIR/admin-cli-keys.json
 * (owner-only). Keeping it matters: an import's Idempotency-Keys, and the record ids derived
 * from them, belong to the key that sent them, so a re-run after a crash must be the same key.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_ADMIN_EMAIL } from '../../shared/auth/bootstrap.js';
import { ChoreError, createApiKey } from './chores.js';
import { dataDir, openDatabase } from './database.js';

export interface ApiTarget {
  url: string;
  key: string;
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
}

export function apiUrl(given?: string): string {
  const url = given || process.env.API_URL || `http://127.0.0.1:${process.env.PORT || 3000}`;
  return url.replace(/\/+$/, '');
}

function keyFile(): string {
  return join(resolve(dataDir()), 'admin-cli-keys.json');
}

function storedKeys(): Record<string, string> {
  try {
    return existsSync(keyFile()) ? (JSON.parse(readFileSync(keyFile(), 'utf8')) as Record<string, string>) : {};
  } catch {
    return {};
  }
}

function storeKey(slot: string, key: string): void {
  const file = keyFile();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...storedKeys(), [slot]: key }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** One HTTP call; waits and retries what the API says to retry (429, 503, a key in progress), and a refused connection a few times. */
export async function call(target: ApiTarget, method: string, path: string, init: { body?: string; contentType?: string; headers?: Record<string, string> } = {}): Promise<ApiAnswer> {
  let refused = 0;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(`${target.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${target.key}`, ...(init.contentType ? { 'Content-Type': init.contentType } : {}), ...init.headers },
        body: init.body,
      });
    } catch (error) {
      if (++refused > 5) throw new ChoreError(`Cannot reach the API at ${target.url} (${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}): is npm start running? Set API_URL or --url otherwise.`);
      await sleep(500 * refused);
      continue;
    }
    const text = await response.text();
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const retryable = response.status === 429 || response.status === 503 || (response.status === 409 && body?.code === 'IDEMPOTENCY_KEY_IN_PROGRESS');
    if (retryable && attempt < 60) {
      const seconds = Number(response.headers.get('retry-after') ?? 1);
      await sleep(Math.min(Number.isFinite(seconds) ? seconds : 1, 60) * 1000);
      continue;
    }
    return { status: response.status, headers: response.headers, body };
  }
}

/** The URL and API key to run as: a given key, or the CLI's own key for `email`. */
export async function apiTarget(options: { url?: string; key?: string; as?: string }): Promise<ApiTarget> {
  const url = apiUrl(options.url);
  const given = options.key || process.env.API_KEY;
  if (given) return { url, key: given };
  const email = (options.as || process.env.ADMIN_EMAIL || DEFAULT_ADMIN_EMAIL).toLowerCase();
  const slot = `${url} ${email}`;
  const stored = storedKeys()[slot];
  if (stored) {
    const me = await call({ url, key: stored }, 'GET', '/api/v1/users/me');
    if (me.status === 200) return { url, key: stored };
  }
  const database = await openDatabase();
  try {
    const { key } = await createApiKey(email, { name: 'admin CLI (import and export)', scopes: ['read', 'write'] });
    storeKey(slot, key);
    return { url, key };
  } finally {
    await database.close();
  }
}
