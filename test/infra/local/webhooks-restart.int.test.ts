/**
 * kill -9 of the local server with deliveries pending: the queue's journal and the stream
 * checkpoint in DATA_DIR carry them over, and the restarted server delivers every one.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { api, sessionCookieOf } from '../../support/http.js';
import { OPERATOR, type TestServer } from '../../support/server.js';
import { isolatedTables, newDataDir, startIsolatedServer } from '../../functions/webhooks/isolated-server.js';
import { startReceiver, type Receiver } from '../../functions/webhooks/receiver.js';

const env = { ...isolatedTables(), DATA_DIR: newDataDir(), WEBHOOK_RETRY_SCHEDULE: Array(30).fill('1').join(',') };
let server: TestServer | undefined;
let receiver: Receiver | undefined;

afterAll(async () => {
  await receiver?.close();
  await server?.stop();
  rmSync(env.DATA_DIR, { recursive: true, force: true });
});

async function operatorCookie(baseUrl: string): Promise<string> {
  return sessionCookieOf(await api('POST', '/api/v1/auth/login', { baseUrl, body: OPERATOR }))!;
}

describe('webhook deliveries across kill -9', () => {
  it('delivers every pending delivery after a restart', async () => {
    // A port with nobody listening: the receiver is down.
    const probe = await startReceiver();
    const port = probe.port;
    await probe.close();

    server = await startIsolatedServer(env);
    let cookie = await operatorCookie(server.url);
    const hook = await api('POST', '/api/v1/webhooks', { baseUrl: server.url, cookie, body: { url: `http://127.0.0.1:${port}/hook`, events: ['task.created'], secret: 'restart-secret-123' } });
    expect(hook.status).toBe(201);
    const taskIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const task = await api('POST', '/api/v1/tasks', { baseUrl: server.url, cookie, body: { title: `Pending ${i}` } });
      taskIds.push(task.body.data.id);
    }
    const deliveriesPath = `/api/v1/webhooks/${hook.body.data.id}/deliveries`;
    const end = Date.now() + 30_000;
    for (;;) {
      const log = await api('GET', deliveriesPath, { baseUrl: server.url, cookie });
      if (log.body.data.length === 3 && log.body.data.every((d: { attempts: number; status: string }) => d.attempts >= 1 && d.status === 'pending')) break;
      if (Date.now() > end) throw new Error(`deliveries not pending: ${log.text}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    await server.kill();
    server = await startIsolatedServer(env);
    receiver = await startReceiver(port);
    await receiver.waitFor((received) => taskIds.every((id) => received.some((r) => JSON.parse(r.body).data.id === id)), 30_000);

    cookie = await operatorCookie(server.url);
    const log = await api('GET', deliveriesPath, { baseUrl: server.url, cookie });
    const until = Date.now() + 10_000;
    let deliveries = log.body.data as Array<{ status: string }>;
    while (deliveries.some((d) => d.status !== 'succeeded') && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      deliveries = (await api('GET', deliveriesPath, { baseUrl: server.url, cookie })).body.data;
    }
    expect(deliveries.map((d) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  }, 120_000);
});
