/**
 * The live stream under concurrent writers (docs/delivery-guarantees.md): concurrent imports with
 * notify, bulk updates and deletes, batch and single creates, sent to two servers on one
 * database, reach a stream held open throughout exactly once each; a replay from the stream's
 * first id afterwards carries exactly the same changes.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl } from '../../support/http.js';
import { newTenant, type TestTenant } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { keyOf } from '../entities/support.js';
import { changes, openSse, type SseConnection } from './sse-client.js';

let server: TestServer;
let acme: TestTenant;
let key: string;
const open: SseConnection[] = [];

beforeAll(async () => {
  [server, acme] = await Promise.all([
    startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { STREAM_POLL_MS: '100', STREAM_MAX_DURATION_MS: '120000' } }),
    newTenant(),
  ]);
  key = await keyOf(acme.admin.cookie);
}, 90_000);

afterAll(async () => {
  for (const connection of open) connection.close();
  await server?.stop();
});

async function stream(headers: Record<string, string> = {}): Promise<SseConnection> {
  const connection = await openSse(`${server.url}/api/v1/stream/tasks`, { Authorization: `Bearer ${key}`, ...headers });
  open.push(connection);
  await connection.waitFor((m) => m.data?.type === 'connected');
  return connection;
}

/** The two servers, taken in turn. */
const servers = () => [server.url, baseUrl()];

async function call(at: string, method: string, path: string, body?: unknown) {
  const response = await api(method, path, { apiKey: key, body, baseUrl: at });
  expect(response.status, `${method} ${path}: ${response.text}`).toBeLessThan(300);
  return response.body;
}

/** `<type> <record id>` of each change message. */
function changeKeys(connection: SseConnection): string[] {
  return changes(connection).map((m) => `${m.data.type} ${m.data.record.id}`);
}

async function untilCount(connection: SseConnection, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (changes(connection).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

describe('the live stream under concurrent writers on two servers', () => {
  it('carries every change exactly once, and exactly what a replay from its first id carries', async () => {
    // Arrange: tasks to update and delete, written before the stream opens.
    const [a, b] = servers();
    const existing = (await call(a, 'POST', '/api/v1/import/tasks', { notify: true, tasks: Array.from({ length: 40 }, (_, i) => ({ title: `old ${i}` })) })).data.tasks.map((t: { id: string }) => t.id);
    const live = await stream();
    const firstId = live.messages[0].id!;

    // Act: everything at once, spread over both servers.
    const writes = await Promise.all([
      ...[0, 1, 2, 3].map((n) => call(servers()[n % 2], 'POST', '/api/v1/import/tasks', { notify: true, tasks: Array.from({ length: 100 }, (_, i) => ({ title: `import ${n}.${i}` })) })),
      call(a, 'PATCH', '/api/v1/tasks', { updates: existing.slice(0, 20).map((id: string) => ({ id, status: 'in_progress' })) }),
      call(b, 'PATCH', '/api/v1/tasks', { updates: existing.slice(20, 30).map((id: string) => ({ id, priority: 'high' })) }),
      call(b, 'DELETE', '/api/v1/tasks', { ids: existing.slice(30, 40) }),
      call(a, 'POST', '/api/v1/batch', { requests: Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, method: 'POST', path: '/tasks', body: { title: `batch ${i}` } })) }),
      ...Array.from({ length: 20 }, (_, i) => call(servers()[i % 2], 'POST', '/api/v1/tasks', { title: `single ${i}` })),
    ]);
    const expected = [
      ...writes.slice(0, 4).flatMap((w) => w.data.tasks.map((t: { id: string }) => `task.created ${t.id}`)),
      ...existing.slice(0, 30).map((id: string) => `task.updated ${id}`),
      ...existing.slice(30, 40).map((id: string) => `task.deleted ${id}`),
      ...writes[7].responses.map((r: { status: number; body: { data: { id: string } } }) => `task.created ${r.body.data.id}`),
      ...writes.slice(8).map((w) => `task.created ${w.data.id}`),
    ].sort();
    await untilCount(live, expected.length, 60_000);
    // Anything extra (a repeat) would arrive within a look-back round.
    await new Promise((r) => setTimeout(r, 2500));
    live.close();

    const replay = await stream({ 'Last-Event-ID': firstId });
    await untilCount(replay, expected.length, 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    replay.close();

    // Assert
    expect(expected).toHaveLength(400 + 30 + 10 + 10 + 20);
    expect(new Set(expected).size).toBe(expected.length);
    expect(changeKeys(live).sort()).toEqual(expected);
    expect(changeKeys(replay).sort()).toEqual(expected);
  }, 150_000);
});
