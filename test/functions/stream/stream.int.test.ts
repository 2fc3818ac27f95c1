/**
 * The SSE stream through HTTP on the local runtime (SPEC.md Event stream, CONTRACT.md): headers
 * and the first message, change messages in order with ids, row-level security, Last-Event-ID
 * resume, heartbeats, the end before the maximum duration, no polling after a disconnect, scopes,
 * the open-stream limit, and import's notify.
 *
 * A server of its own runs with short intervals (poll 100 ms, heartbeat 400 ms, 6 s per stream)
 * and reaches DynamoDB Local through a recording proxy, which counts its event queries.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDynamoProxy, type DynamoProxy } from '../../support/dynamo-proxy.js';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { keyOf } from '../entities/support.js';
import { changes, openSse, type SseConnection } from './sse-client.js';

const MAX_DURATION_MS = 6000;

let proxy: DynamoProxy;
let server: TestServer;
let acme: TestTenant;
let globex: TestTenant;
let alice: TestUser;
let bob: TestUser;
let outsider: TestUser;
let aliceKey: string;
let bobKey: string;
let outsiderKey: string;
let adminKey: string;
const open: SseConnection[] = [];

beforeAll(async () => {
  proxy = await startDynamoProxy(inject('dynamoEndpoint'));
  [server, acme, globex] = await Promise.all([
    startServer({
      dynamoEndpoint: proxy.url,
      env: { STREAM_POLL_MS: '100', STREAM_HEARTBEAT_MS: '400', STREAM_MAX_DURATION_MS: String(MAX_DURATION_MS), STREAM_RETRY_MS: '1500' },
    }),
    newTenant(),
    newTenant(),
  ]);
  [alice, bob, outsider] = await Promise.all([newUser(acme.admin.cookie), newUser(acme.admin.cookie), newUser(globex.admin.cookie)]);
  [aliceKey, bobKey, outsiderKey, adminKey] = await Promise.all([keyOf(alice.cookie), keyOf(bob.cookie), keyOf(outsider.cookie), keyOf(acme.admin.cookie)]);
}, 90_000);

afterAll(async () => {
  for (const connection of open) connection.close();
  await server?.stop();
  await proxy?.stop();
});

async function stream(key: string | undefined, path = '/api/v1/stream/tasks', headers: Record<string, string> = {}): Promise<SseConnection> {
  const connection = await openSse(`${server.url}${path}`, { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...headers });
  open.push(connection);
  return connection;
}

function call(key: string, method: string, path: string, body?: unknown) {
  return api(method, path, { apiKey: key, body, baseUrl: server.url });
}

async function createTask(key: string, title: string): Promise<Record<string, any>> {
  const response = await call(key, 'POST', '/api/v1/tasks', { title });
  expect(response.status, response.text).toBe(201);
  return response.body.data;
}

const connected = (c: SseConnection) => c.waitFor((m) => m.data?.type === 'connected');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('GET /api/v1/stream/tasks', () => {
  it('answers text/event-stream headers, a retry hint and {"type":"connected"} with an id first', async () => {
    const connection = await stream(aliceKey);
    const first = await connected(connection);

    expect(connection.status).toBe(200);
    expect(connection.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(connection.headers.get('cache-control')).toBe('no-cache');
    expect(connection.headers.get('x-accel-buffering')).toBe('no');
    expect(connection.messages[0]).toBe(first);
    expect(first).toMatchObject({ retry: 1500, data: { type: 'connected' }, id: expect.stringMatching(/^\d{4}-/) });
    connection.close();
  });

  it('sends created, updated and deleted in order, each with an increasing id, the task as READ shows it', async () => {
    const connection = await stream(aliceKey);
    await connected(connection);

    const task = await createTask(aliceKey, 'stream me');
    await call(aliceKey, 'PATCH', `/api/v1/tasks/${task.id}`, { status: 'completed' });
    await call(aliceKey, 'DELETE', `/api/v1/tasks/${task.id}`);
    await connection.waitFor((m) => m.data?.type === 'task.deleted');

    const received = changes(connection);
    expect(received.map((m) => m.data.type)).toEqual(['task.created', 'task.updated', 'task.deleted']);
    expect(received[0].data.task).toEqual(task);
    expect(received[0].data.record).toEqual(task);
    expect(received[1].data.task).toMatchObject({ id: task.id, status: 'completed' });
    expect(received[2].data).toMatchObject({ taskId: task.id, record: { id: task.id } });
    const ids = received.map((m) => m.id!);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(3);
    connection.close();
  });

  it("never shows another user's tasks to a user, nor another tenant's to anyone; an admin sees the tenant's", async () => {
    const asAlice = await stream(aliceKey);
    const asAdmin = await stream(adminKey);
    await Promise.all([connected(asAlice), connected(asAdmin)]);

    const bobs = await createTask(bobKey, 'bob private');
    await createTask(outsiderKey, 'other tenant');
    const marker = await createTask(aliceKey, 'marker');
    await asAlice.waitFor((m) => m.data?.task?.id === marker.id);
    await asAdmin.waitFor((m) => m.data?.task?.id === marker.id);

    expect(changes(asAlice).map((m) => m.data.task.id)).toEqual([marker.id]);
    expect(changes(asAdmin).map((m) => m.data.task.id)).toEqual([bobs.id, marker.id]);
    asAlice.close();
    asAdmin.close();
  });

  it('replays exactly the missed messages after Last-Event-ID (header or lastEventId query parameter)', async () => {
    const first = await stream(aliceKey);
    await connected(first);
    const seen = await createTask(aliceKey, 'seen');
    const lastSeen = await first.waitFor((m) => m.data?.task?.id === seen.id);
    first.close();

    const missed = [await createTask(aliceKey, 'missed 1'), await createTask(aliceKey, 'missed 2')];
    const byHeader = await stream(aliceKey, '/api/v1/stream/tasks', { 'Last-Event-ID': lastSeen.id! });
    const byQuery = await stream(aliceKey, `/api/v1/stream/tasks?lastEventId=${encodeURIComponent(lastSeen.id!)}`);
    await byHeader.waitFor((m) => m.data?.task?.id === missed[1].id);
    await byQuery.waitFor((m) => m.data?.task?.id === missed[1].id);
    await sleep(300);

    expect(changes(byHeader).map((m) => m.data.task.id)).toEqual(missed.map((t) => t.id));
    expect(changes(byQuery).map((m) => m.data.task.id)).toEqual(missed.map((t) => t.id));
    byHeader.close();
    byQuery.close();
  });

  it('answers an id older than the retention with event: reset, and a malformed id with 400', async () => {
    const old = await stream(aliceKey, '/api/v1/stream/tasks', { 'Last-Event-ID': '2020-01-01T00:00:00.000Z#abc' });
    const reset = await old.waitFor((m) => m.event === 'reset');
    const bad = await stream(aliceKey, '/api/v1/stream/tasks', { 'Last-Event-ID': 'not-an-id' });

    expect(reset.data).toMatchObject({ type: 'reset' });
    expect(reset.id).toMatch(/^\d{4}-/);
    expect(bad.status).toBe(400);
    expect(bad.errorBody).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
    old.close();
  });

  it('sends a ": ping" comment at the configured interval', async () => {
    const connection = await stream(aliceKey);

    const ping = await connection.waitFor((m) => m.comments.includes('ping'), 2000);

    expect(ping.data).toBeUndefined();
    connection.close();
  });

  it('ends cleanly before its maximum duration, and a reconnect with the last id resumes without loss', async () => {
    const started = Date.now();
    const connection = await stream(aliceKey);
    const hello = await connected(connection);
    await connection.ended;
    const lasted = Date.now() - started;

    const during = await createTask(aliceKey, 'between connections');
    const resumed = await stream(aliceKey, '/api/v1/stream/tasks', { 'Last-Event-ID': changes(connection).at(-1)?.id ?? hello.id! });
    await resumed.waitFor((m) => m.data?.task?.id === during.id);

    expect(lasted).toBeGreaterThanOrEqual(MAX_DURATION_MS - 200);
    expect(lasted).toBeLessThan(MAX_DURATION_MS + 4000);
    resumed.close();
  });

  it('stops querying the events table once the client disconnects', async () => {
    const quiet = await newTenant();
    const key = await keyOf(quiet.admin.cookie);
    const partition = `${quiet.tenantId}#tasks`;
    const connection = await stream(key);
    await connected(connection);
    await sleep(500);
    const whileOpen = proxy.count('Query', partition);

    connection.close();
    await sleep(300);
    const atClose = proxy.count('Query', partition);
    await sleep(800);

    expect(whileOpen).toBeGreaterThanOrEqual(3);
    expect(proxy.count('Query', partition)).toBe(atClose);
  });

  it('answers 401 without credentials and 403 without tasks:read', async () => {
    const anonymous = await stream(undefined);
    const readsCustomersOnly = await stream(await keyOf(alice.cookie, ['customers:read']));

    expect(anonymous.status).toBe(401);
    expect(readsCustomersOnly.status).toBe(403);
    expect(readsCustomersOnly.errorBody).toMatchObject({ success: false, code: 'INSUFFICIENT_PERMISSIONS' });
  });

  it('refuses a sixth open stream of one user with 429, and accepts one again after a stream closes', async () => {
    const carol = await newUser(acme.admin.cookie);
    const key = await keyOf(carol.cookie);
    const five = await Promise.all([1, 2, 3, 4, 5].map(() => stream(key)));
    await Promise.all(five.map(connected));

    const sixth = await stream(key);
    five[0].close();
    // The server frees the slot when it sees the connection close: retry briefly.
    let afterClose = await stream(key);
    for (let attempt = 0; afterClose.status === 429 && attempt < 10; attempt++) {
      await sleep(300);
      afterClose = await stream(key);
    }

    expect(sixth.status).toBe(429);
    expect(sixth.errorBody).toMatchObject({ success: false, code: 'TOO_MANY_STREAMS' });
    expect(afterClose.status).toBe(200);
    for (const c of [...five, afterClose]) c.close();
  });

  it('import with notify true sends task.created per imported task; notify false sends none', async () => {
    const connection = await stream(aliceKey);
    await connected(connection);

    const silent = await call(aliceKey, 'POST', '/api/v1/import/tasks', { notify: false, tasks: [{ title: 's1' }, { title: 's2' }] });
    const notified = await call(aliceKey, 'POST', '/api/v1/import/tasks', { notify: true, tasks: [{ title: 'n1' }, { title: 'n2' }] });
    const notifiedIds = notified.body.data.tasks.map((t: any) => t.id);
    // Messages come in position order: the silent import's events, had it written any, would come first.
    await Promise.all(notifiedIds.map((id: string) => connection.waitFor((m) => m.data?.task?.id === id)));

    expect(silent.status).toBe(201);
    expect(silent.body.data.imported).toBe(2);
    expect(changes(connection).map((m) => m.data.task.id).sort()).toEqual([...notifiedIds].sort());
    connection.close();
  });
});

describe('GET /api/v1/stream/{entity}', () => {
  it('streams another entity as <name>.created with the record in `record`', async () => {
    const connection = await stream(aliceKey, '/api/v1/stream/customers');
    await connected(connection);

    const response = await call(aliceKey, 'POST', '/api/v1/customers', { name: 'Streamed Ltd' });
    const message = await connection.waitFor((m) => m.data?.type === 'customer.created');

    expect(message.data.record).toEqual(response.body.data);
    expect(message.data.task).toBeUndefined();
    connection.close();
  });

  it('answers 404 ENTITY_NOT_FOUND for an unregistered entity', async () => {
    const connection = await stream(aliceKey, '/api/v1/stream/nothing-here');

    expect(connection.status).toBe(404);
    expect(connection.errorBody).toMatchObject({ code: 'ENTITY_NOT_FOUND' });
  });
});
