/** Helpers of the entities integration tests: API keys per caller, and short calls. */
import { expect } from 'vitest';
import { api, type CallOptions, type CallResult } from '../../support/http.js';

/**
 * A caller's API key with the given scopes: keys have 1000 requests an hour, sessions 100, so the
 * bulk of these tests run on keys (the row-level rules are the same: a key acts as its user).
 */
export async function keyOf(cookie: string, scopes: string[] = ['read', 'write', 'delete']): Promise<string> {
  const response = await api('POST', '/api/v1/api-keys', { cookie, body: { name: `entities-${scopes.join('-')}`, scopes } });
  expect(response.status, response.text).toBe(201);
  return response.body.data.key as string;
}

export interface Caller {
  get(path: string, options?: CallOptions): Promise<CallResult>;
  post(path: string, body?: unknown, options?: CallOptions): Promise<CallResult>;
  patch(path: string, body?: unknown, options?: CallOptions): Promise<CallResult>;
  del(path: string, options?: CallOptions): Promise<CallResult>;
  options(path: string, options?: CallOptions): Promise<CallResult>;
}

/** Calls as a key holder (or anonymously when `apiKey` is undefined). */
export function as(apiKey: string | undefined): Caller {
  const auth = apiKey ? { apiKey } : {};
  return {
    get: (path, options = {}) => api('GET', path, { ...auth, ...options }),
    post: (path, body, options = {}) => api('POST', path, { ...auth, ...options, body }),
    patch: (path, body, options = {}) => api('PATCH', path, { ...auth, ...options, body }),
    del: (path, options = {}) => api('DELETE', path, { ...auth, ...options }),
    options: (path, options = {}) => api('OPTIONS', path, { ...auth, ...options }),
  };
}

/** Creates a record and returns it (fails the test with the response otherwise). */
export async function created(caller: Caller, slug: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await caller.post(`/api/v1/${slug}`, body);
  expect(response.status, response.text).toBe(201);
  return response.body.data;
}

export const PROTECTED = /password|passwordHash|apiKeyHash|secretKey/;
