/** One JSON request to the local runtime, as the HTTP scenarios send it: status, parsed body, headers. */
import type { LocalRuntime } from './types.js';

export interface BenchReply {
  status: number;
  body: any;
  headers: Headers;
}

export async function send(runtime: LocalRuntime, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<BenchReply> {
  const response = await fetch(`${runtime.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}
