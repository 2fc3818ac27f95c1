/**
 * No repeat of a delivery logged as succeeded, through HTTP to a real receiver on 127.0.0.1:
 * - a copy of a delivered message put back in the local queue (what a stream record fanned out
 *   again, or a queue's second copy, amounts to) is acknowledged without sending;
 * - a success whose log write the engine refuses (a proxy in front of DynamoDB Local) is logged
 *   from the queue afterwards, and not sent again.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { LocalQueue } from '../../../infra/local/queue.js';
import { DELIVERY_TIMEOUT_SECONDS } from '../../../infra/local/webhooks.js';
import { startDynamoProxy, type DynamoProxy } from '../../support/dynamo-proxy.js';
import { api, sessionCookieOf } from '../../support/http.js';
import { OPERATOR, startServer, type TestServer } from '../../support/server.js';
import { isolatedTables, newDataDir, startIsolatedServer } from './isolated-server.js';
import { startReceiver, type Receiver } from './receiver.js';

let server: TestServer | undefined;
let receiver: Receiver | undefined;
let proxy: DynamoProxy | undefined;
let dataDir: string | undefined;

afterEach(async () => {
  await receiver?.close();
  await server?.stop();
  await proxy?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  server = receiver = proxy = dataDir = undefined;
});

async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The operator's session on `server`, a webhook to the receiver for task.created, and a way to read its log. */
async function subscribe(on: TestServer, to: Receiver) {
  const cookie = sessionCookieOf(await api('POST', '/api/v1/auth/login', { baseUrl: on.url, body: OPERATOR }))!;
  const hook = await api('POST', '/api/v1/webhooks', { baseUrl: on.url, cookie, body: { url: `${to.url}/hook`, events: ['task.created'], secret: 'repeat-test-secret-1' } });
  expect(hook.status).toBe(201);
  const webhookId = hook.body.data.id as string;
  return {
    cookie,
    log: async (url = on.url) => (await api('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { baseUrl: url, cookie })).body.data as Array<{ id: string; eventId: string; status: string; attempts: number }>,
  };
}

const arrivalsOf = (to: Receiver, eventId: string) => to.received.filter((r) => r.headers['webhook-id'] === eventId).length;

describe('a delivery logged as succeeded', () => {
  it('is not sent again when a copy of its message is received', async () => {
    dataDir = newDataDir();
    const env = { ...isolatedTables(), DATA_DIR: dataDir };
    receiver = await startReceiver();
    server = await startIsolatedServer(env);
    const { cookie, log } = await subscribe(server, receiver);
    const task = await api('POST', '/api/v1/tasks', { baseUrl: server.url, cookie, body: { title: 'Delivered once' } });
    const [delivered] = await until(log, (d) => d.length === 1 && d[0].status === 'succeeded');
    await server.stop();

    // The message as the fan-out queued it, put back in the queue's journal: a second copy.
    const journal = join(dataDir, 'webhooks', 'deliveries.jsonl');
    const sent = readFileSync(journal, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { op: string; m?: { body: string } })
      .find((entry) => entry.op === 'send' && entry.m!.body.includes(delivered.id))!;
    const queue = new LocalQueue({ name: 'webhook-deliveries', file: journal, visibilityTimeoutSeconds: 6 * DELIVERY_TIMEOUT_SECONDS });
    queue.send(sent.m!.body);
    queue.close();
    server = await startIsolatedServer(env);
    // A later delivery arrives after the copy was received (the queue hands out the oldest first).
    const later = await api('POST', '/api/v1/tasks', { baseUrl: server.url, cookie, body: { title: 'Delivered after the copy' } });
    await receiver.waitFor((received) => received.some((r) => JSON.parse(r.body).data.id === later.body.data.id));
    const logged = await until(() => log(server!.url), (d) => d.length === 2 && d.every((x) => x.status === 'succeeded'));
    await server.stop();
    server = undefined;

    expect(task.status).toBe(201);
    expect(arrivalsOf(receiver, delivered.eventId)).toBe(1);
    expect(logged.find((d) => d.id === delivered.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    // The copy was handled (acknowledged), not left waiting in the queue.
    const left = new LocalQueue({ name: 'webhook-deliveries', file: journal, visibilityTimeoutSeconds: 6 * DELIVERY_TIMEOUT_SECONDS });
    expect(left.peek()).toEqual([]);
    left.close();
  }, 120_000);

  it('is logged from the queue, and not sent again, when the engine refuses to log its success', async () => {
    dataDir = newDataDir();
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    receiver = await startReceiver();
    server = await startServer({ dynamoEndpoint: proxy.url, env: { ...isolatedTables(), DATA_DIR: dataDir, ALLOW_INSECURE_WEBHOOKS: '1', WEBHOOK_RETRY_SCHEDULE: '1,1' } });
    const { cookie, log } = await subscribe(server, receiver);
    // Every write of a success to the delivery log is refused until three have been (the client's attempts).
    let refusals = 0;
    proxy.refuse = (operation, body) => operation === 'UpdateItem' && body.includes('DELIVERY#') && body.includes('"succeeded"') && refusals++ < 3;

    const task = await api('POST', '/api/v1/tasks', { baseUrl: server.url, cookie, body: { title: 'Logged late' } });
    const [logged] = await until(log, (d) => d.length === 1 && d[0].status === 'succeeded');
    // Time for a retry to come back (2–4 s after an error of ours) had the message been retried.
    await new Promise((r) => setTimeout(r, 5_000));

    expect(task.status).toBe(201);
    expect(arrivalsOf(receiver, logged.eventId)).toBe(1);
    expect(refusals).toBeGreaterThanOrEqual(3);
    expect(server.output()).toContain('its outcome is queued to be logged');
    expect(logged).toMatchObject({ status: 'succeeded', attempts: 1 });
  }, 120_000);
});
