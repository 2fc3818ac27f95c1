/** HTTP calls to the local API under test. */
import { inject } from 'vitest';

export interface CallOptions {
  body?: unknown;
  /** Sent as is (for malformed JSON, multipart, ...). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** A session cookie value (`session=...`) or a bare token. */
  cookie?: string;
  /** An API key, sent as Authorization: Bearer. */
  apiKey?: string;
  baseUrl?: string;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export function baseUrl(): string {
  return inject('baseUrl');
}

export async function api<T = any>(method: string, path: string, options: CallOptions = {}): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  if (options.cookie) headers.Cookie = options.cookie.includes('=') ? options.cookie : `session=${options.cookie}`;
  if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
  const response = await fetch(`${options.baseUrl ?? baseUrl()}${path}`, { method, headers, body: body as BodyInit | undefined });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** The `session=<token>` pair from a response's Set-Cookie, ready to send back. */
export function sessionCookieOf(response: CallResult): string | undefined {
  const cookies = response.headers.getSetCookie();
  const session = cookies.find((c) => c.startsWith('session='));
  return session?.split(';')[0];
}
