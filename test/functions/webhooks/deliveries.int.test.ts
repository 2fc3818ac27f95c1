/**
 * Deliveries end to end on a local server of its own (ALLOW_INSECURE_WEBHOOKS=1, a short retry
 * schedule, its own DynamoDB Local and DATA_DIR): a real HTTP receiver on 127.0.0.1, both
 * signatures checked with the secret, only subscribed events, retries, the dead-letter queue,
 * replay, test ping, a webhook deleted mid-retry, and the inbound provider receivers.
 */
import { createHmac } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api as call, sessionCookieOf, type CallOptions } from '../../support/http.js';
import { OPERATOR, type TestServer } from '../../support/server.js';
import { isolatedTables, newDataDir, startIsolatedServer } from './isolated-server.js';
import { startReceiver, type Receiver } from './receiver.js';

const SECRET = 'whsec_' + Buffer.from('delivery-test-secret-bytes-0123').toString('base64');
const GENERIC_SECRET = 'generic-inbound-secret-42';
const STRIPE_SECRET = 'whsec_stripe_inbound_secret';

let server: TestServer;
let dataDir: string;
let cookie: string;
let receiver: Receiver;

const api = (method: string, path: string, options: CallOptions = {}) => call(method, path, { ...options, baseUrl: server.url, cookie: options.cookie ?? cookie });

beforeAll(async () => {
  dataDir = newDataDir();
  server = await startIsolatedServer({
    ...isolatedTables(),
    DATA_DIR: dataDir,
    INBOUND_WEBHOOK_SECRETS: JSON.stringify({ generic: GENERIC_SECRET, stripe: STRIPE_SECRET }),
    LOG_LEVEL: 'DEBUG',
  });
  const login = await call('POST', '/api/v1/auth/login', { baseUrl: server.url, body: OPERATOR });
  cookie = sessionCookieOf(login)!;
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  if (process.env.WEBHOOK_TEST_LOG) writeFileSync(process.env.WEBHOOK_TEST_LOG, server?.output() ?? '');
  await receiver?.close();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function register(events: string[], path: string) {
  const response = await api('POST', '/api/v1/webhooks', { body: { url: `${receiver.url}${path}`, events, secret: SECRET } });
  expect(response.status).toBe(201);
  return response.body.data.id as string;
}

async function deliveries(webhookId: string) {
  const response = await api('GET', `/api/v1/webhooks/${webhookId}/deliveries`);
  expect(response.status).toBe(200);
  return response.body.data as Array<Record<string, any>>;
}

async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('outbound deliveries', () => {
  it('delivers only subscribed events, signed both ways with the secret', async () => {
    const created = await register(['task.created'], '/created');
    const updated = await register(['task.updated'], '/updated');
    const task = await api('POST', '/api/v1/tasks', { body: { title: 'Signed delivery' } });
    expect(task.status).toBe(201);
    expect((await api('PATCH', `/api/v1/tasks/${task.body.data.id}`, { body: { title: 'Signed delivery, renamed' } })).status).toBe(200);
    const first = await until(() => deliveries(created), (d) => d.length === 1 && d[0].status === 'succeeded');
    await until(() => deliveries(updated), (d) => d.length === 1 && d[0].status === 'succeeded');
    expect(first[0]).toMatchObject({ eventType: 'task.created', attempts: 1, responseCode: 200 });
    expect(typeof first[0].responseTimeMs).toBe('number');

    const hits = receiver.received.filter((r) => JSON.parse(r.body).data?.id === task.body.data.id && ['/created', '/updated'].includes(r.path));
    expect(hits.map((r) => `${r.path} ${JSON.parse(r.body).type}`).sort()).toEqual(['/created task.created', '/updated task.updated']);
    for (const hit of hits) {
      const payload = JSON.parse(hit.body);
      expect(Object.keys(payload).sort()).toEqual(['createdAt', 'data', 'id', 'type']);
      expect(hit.headers['content-type']).toBe('application/json');
      expect(hit.headers['x-webhook-signature']).toBe(createHmac('sha256', SECRET).update(hit.body).digest('hex'));
      expect(hit.headers['webhook-id']).toBe(payload.id);
      const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
      const expected = createHmac('sha256', key).update(`${hit.headers['webhook-id']}.${hit.headers['webhook-timestamp']}.${hit.body}`).digest('base64');
      expect(hit.headers['webhook-signature']).toBe(`v1,${expected}`);
      expect(Math.abs(Number(hit.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    }
    expect(hits.find((r) => JSON.parse(r.body).type === 'task.created')!.headers.host).toBe(`127.0.0.1:${receiver.port}`);
  });

  it('retries a failing receiver with the same event id, then succeeds', async () => {
    const id = await register(['task.created'], '/flaky');
    let calls = 0;
    receiver.respond = (r) => (r.path !== '/flaky' ? 200 : ++calls <= 2 ? 500 : 200);
    const task = await api('POST', '/api/v1/tasks', { body: { title: 'Flaky receiver' } });
    const log = await until(() => deliveries(id), (d) => d[0]?.status === 'succeeded');
    receiver.respond = () => 200;
    expect(log[0]).toMatchObject({ status: 'succeeded', attempts: 3, responseCode: 200 });
    const hits = receiver.received.filter((r) => r.path === '/flaky' && JSON.parse(r.body).data?.id === task.body.data.id);
    expect(hits).toHaveLength(3);
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
    expect(hits[1].at - hits[0].at).toBeGreaterThanOrEqual(700);
  });

  it('after the last retry: failed, in the dead-letter queue; a replay then delivers it', async () => {
    const id = await register(['task.created'], '/down');
    receiver.respond = (r) => (r.path === '/down' ? 503 : 200);
    const task = await api('POST', '/api/v1/tasks', { body: { title: 'Receiver down' } });
    const log = await until(() => deliveries(id), (d) => d[0]?.status === 'failed');
    expect(log[0]).toMatchObject({ attempts: 3, responseCode: 503, nextAttemptAt: null });
    expect(log[0].error).toContain('503');
    const deliveryId = log[0].id as string;
    // The message reaches the dead-letter queue on its next receive.
    await until(
      async () => readFileSync(join(dataDir, 'webhooks', 'deliveries-dlq.jsonl'), 'utf8'),
      (text) => text.includes(deliveryId),
    );

    receiver.respond = () => 200;
    const replay = await api('POST', `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`);
    expect(replay.status).toBe(200);
    expect(replay.body.data).toMatchObject({ id: deliveryId, status: 'succeeded', attempts: 4, responseCode: 200 });
    const hits = receiver.received.filter((r) => r.path === '/down' && JSON.parse(r.body).data?.id === task.body.data.id);
    expect(hits).toHaveLength(4);
    expect(new Set(hits.map((h) => JSON.parse(h.body).id)).size).toBe(1);
    expect((await api('POST', `/api/v1/webhooks/${id}/deliveries/dlv_${'0'.repeat(32)}/retry`)).status).toBe(404);
  });

  it('a webhook deleted mid-retry gets no further attempts', async () => {
    const id = await register(['task.created'], '/deleted');
    receiver.respond = (r) => (r.path === '/deleted' ? 500 : 200);
    const task = await api('POST', '/api/v1/tasks', { body: { title: 'Deleted mid-retry' } });
    const mine = () => receiver.received.filter((r) => r.path === '/deleted' && JSON.parse(r.body).data?.id === task.body.data.id);
    await receiver.waitFor(() => mine().length >= 1);
    expect((await api('DELETE', `/api/v1/webhooks/${id}`)).status).toBe(200);
    const seen = mine().length;
    await new Promise((r) => setTimeout(r, 3_000));
    receiver.respond = () => 200;
    expect(mine().length).toBe(seen);
  });

  it('POST /test sends a webhook.test event now', async () => {
    const id = await register(['task.deleted'], '/ping');
    const response = await api('POST', `/api/v1/webhooks/${id}/test`);
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ eventType: 'webhook.test', status: 'succeeded', attempts: 1, responseCode: 200 });
    const ping = receiver.received.find((r) => JSON.parse(r.body).id === response.body.data.eventId);
    expect(JSON.parse(ping!.body)).toMatchObject({ type: 'webhook.test', data: { webhookId: id } });
    const log = await deliveries(id);
    expect(log[0].id).toBe(response.body.data.id);
  });

  it('never writes a secret to the log', () => {
    expect(server.output().length).toBeGreaterThan(0);
    expect(server.output()).not.toContain(SECRET);
    expect(server.output()).not.toContain(SECRET.slice('whsec_'.length));
  });
});

describe('inbound provider receivers', () => {
  const body = JSON.stringify({ id: 'evt_inbound_1', type: 'invoice.paid', data: { amount: 100 } });
  const post = (provider: string, headers: Record<string, string>, raw = body) =>
    call('POST', `/api/v1/webhooks/${provider}`, { baseUrl: server.url, rawBody: raw, headers: { 'Content-Type': 'application/json', ...headers } });
  const stripeHeader = (secret: string, t: number, raw = body) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
  const now = () => Math.floor(Date.now() / 1000);

  it('generic: a valid signature is accepted, once per event id', async () => {
    const signature = createHmac('sha256', GENERIC_SECRET).update(body).digest('hex');
    const first = await post('generic', { 'x-webhook-signature': signature });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ received: true });
    expect((await post('generic', { 'x-webhook-signature': signature })).body).toEqual({ received: true });
  });

  it.each([
    ['wrong secret', () => ({ 'x-webhook-signature': createHmac('sha256', 'another-secret').update(body).digest('hex') }), body],
    ['altered body', () => ({ 'x-webhook-signature': createHmac('sha256', GENERIC_SECRET).update(body).digest('hex') }), body.replace('100', '1000')],
    ['missing header', () => ({}), body],
  ])('generic: %s is 400', async (_name, headers, raw) => {
    const response = await post('generic', headers(), raw);
    expect(response.status).toBe(400);
    expect(response.body.success).toBe(false);
    expect(typeof response.body.error).toBe('string');
  });

  it('stripe: a valid signature within 5 minutes is accepted', async () => {
    const response = await post('stripe', { 'Stripe-Signature': stripeHeader(STRIPE_SECRET, now()) });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ received: true });
  });

  it.each([
    ['wrong secret', () => ({ 'Stripe-Signature': stripeHeader('whsec_other', now()) }), body],
    ['altered body', () => ({ 'Stripe-Signature': stripeHeader(STRIPE_SECRET, now()) }), body.replace('paid', 'void')],
    ['stale timestamp', () => ({ 'Stripe-Signature': stripeHeader(STRIPE_SECRET, now() - 600) }), body],
    ['missing header', () => ({}), body],
  ])('stripe: %s is 400', async (_name, headers, raw) => {
    const response = await post('stripe', headers(), raw);
    expect(response.status).toBe(400);
    expect(response.body.success).toBe(false);
  });

  it('an unconfigured provider is 404', async () => {
    expect((await post('github', {})).status).toBe(404);
  });
});
