/**
 * Nothing lost, nothing repeated, on `npm start`:
 * - a change whose fan-out fails past its retries (the webhook table refused by a proxy in front of
 *   DynamoDB Local) lands in the fan-out failure queue while later changes go on; `npm run
 *   events:redrive` feeds it in again and every subscriber gets it exactly once, and a second
 *   redrive of the same failure repeats nothing;
 * - a delivery whose function is killed on every attempt ends in the dead-letter queue still
 *   pending; the redrive marks it failed in the deliveries log, then replays it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LocalQueue } from '../../infra/local/queue.js';
import { startDynamoProxy, type DynamoProxy } from '../support/dynamo-proxy.js';
import { api, sessionCookieOf } from '../support/http.js';
import { OPERATOR, startServer, type TestServer } from '../support/server.js';
import { isolatedTables, newDataDir } from '../functions/webhooks/isolated-server.js';
import { startReceiver, type Receiver } from '../functions/webhooks/receiver.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Runs `npm run events:redrive` on the DATA_DIR (the server stopped); its exit code and JSON report. */
function redrive(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; report: any; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/events-redrive.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env, DYNAMODB_ENDPOINT: inject('dynamoEndpoint'), LOG_LEVEL: 'WARN' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.once('error', reject);
    child.once('exit', (code) => {
      const start = output.indexOf('{\n  "fanoutFailures"');
      resolve({ code, output, report: start >= 0 ? JSON.parse(output.slice(start)) : undefined });
    });
  });
}

function journal(dataDir: string, file: string): string {
  const path = join(dataDir, 'webhooks', file);
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

async function operatorCookie(baseUrl: string): Promise<string> {
  return sessionCookieOf(await api('POST', '/api/v1/auth/login', { baseUrl, body: OPERATOR }))!;
}

describe('fan-out failure queue and redrive', () => {
  const env: Record<string, string> = { ...isolatedTables(), DATA_DIR: newDataDir(), ALLOW_INSECURE_WEBHOOKS: '1', WEBHOOK_RETRY_SCHEDULE: '1,1', WEBHOOK_FANOUT_RETRY_ATTEMPTS: '2' };
  let proxy: DynamoProxy;
  let receiver: Receiver;
  let server: TestServer | undefined;

  beforeAll(async () => {
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    await proxy?.stop();
    rmSync(env.DATA_DIR, { recursive: true, force: true });
  });

  it('keeps a change whose fan-out failed past its retries, and redrives it to every subscriber exactly once', async () => {
    // Arrange: two webhooks on task.created.
    server = await startServer({ dynamoEndpoint: proxy.url, env });
    let cookie = await operatorCookie(server.url);
    for (const path of ['/a', '/b']) {
      const hook = await api('POST', '/api/v1/webhooks', { baseUrl: server.url, cookie, body: { url: `${receiver.url}${path}`, events: ['task.created'], secret: 'redrive-secret-123' } });
      expect(hook.status).toBe(201);
    }
    // The fan-out cannot read the tenant's webhooks: every attempt fails.
    proxy.refuse = (operation, body) => operation === 'Query' && body.includes(env.TABLE_WEBHOOKS) && body.includes('"TENANT#');

    // Act: a change whose fan-out fails 1 + 2 times.
    const lost = await api('POST', '/api/v1/tasks', { baseUrl: server.url, cookie, body: { title: 'Fanned out late' } });
    expect(lost.status).toBe(201);
    await until('the failure queue', () => journal(env.DATA_DIR, 'events-fanout-failures.jsonl').includes('DDBStreamBatchInfo'));
    proxy.refuse = undefined;
    // The stream went on past it: a later change is delivered at once.
    const later = await api('POST', '/api/v1/tasks', { baseUrl: server.url, cookie, body: { title: 'Fanned out in time' } });
    const ids = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body).data.id as string);
    await receiver.waitFor(() => ids('/a').includes(later.body.data.id) && ids('/b').includes(later.body.data.id), 30_000);
    expect(ids('/a')).not.toContain(lost.body.data.id);
    const failure = JSON.parse(journal(env.DATA_DIR, 'events-fanout-failures.jsonl').split('\n')[0]).m.body as string;
    expect(JSON.parse(failure)).toMatchObject({ requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 }, DDBStreamBatchInfo: { batchSize: 1 } });
    await server.stop();
    server = undefined;

    // Act: the redrive, then the server delivers what it queued.
    const first = await redrive(env);
    expect(first.code, first.output).toBe(0);
    expect(first.report.fanoutFailures).toMatchObject({ messages: 1, events: 1, queued: 2, alreadyDelivered: 0, expired: [] });
    server = await startServer({ dynamoEndpoint: proxy.url, env });
    await receiver.waitFor(() => ids('/a').includes(lost.body.data.id) && ids('/b').includes(lost.body.data.id), 30_000);
    await sleep(2_000);

    // Assert: each subscriber got each change once.
    for (const path of ['/a', '/b']) {
      expect(ids(path).filter((id) => id === lost.body.data.id), path).toHaveLength(1);
      expect(ids(path).filter((id) => id === later.body.data.id), path).toHaveLength(1);
    }
    expect(journal(env.DATA_DIR, 'events-fanout-failures.jsonl')).not.toContain('DDBStreamBatchInfo');

    // The same failure fed in again repeats nothing: both deliveries are made already.
    await server.stop();
    server = undefined;
    const failures = new LocalQueue({ name: 'failures', file: join(env.DATA_DIR, 'webhooks', 'events-fanout-failures.jsonl'), visibilityTimeoutSeconds: 30 });
    failures.send(failure);
    failures.close();
    const second = await redrive(env);
    expect(second.code, second.output).toBe(0);
    expect(second.report.fanoutFailures).toMatchObject({ messages: 1, events: 1, queued: 0, alreadyDelivered: 2 });
    server = await startServer({ dynamoEndpoint: proxy.url, env });
    cookie = await operatorCookie(server.url);
    await sleep(2_000);
    for (const path of ['/a', '/b']) expect(ids(path).filter((id) => id === lost.body.data.id), path).toHaveLength(1);
  }, 240_000);
});

describe('dead-lettered deliveries after a function crash', () => {
  // An attempt waits on the hanging receiver until the server is killed: on a slow machine a
  // restart outlasts the default 10 s answer timeout, which would end the attempt by itself.
  const env = { ...isolatedTables(), DATA_DIR: newDataDir(), ALLOW_INSECURE_WEBHOOKS: '1', WEBHOOK_RETRY_SCHEDULE: '1', WEBHOOK_TIMEOUT_MS: '120000' };
  let server: TestServer | undefined;
  let hanging = true;
  const requests: string[] = [];
  const target = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push(Buffer.concat(chunks).toString('utf8'));
      // While hanging, the attempt never ends: the server is killed in the middle of it.
      if (!hanging) res.writeHead(200).end('{}');
    });
  });

  beforeAll(() => new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve)));
  afterAll(async () => {
    await server?.stop();
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
    rmSync(env.DATA_DIR, { recursive: true, force: true });
  });

  it('marks the delivery failed in the log, then replays it once', async () => {
    const dynamoEndpoint = inject('dynamoEndpoint');
    server = await startServer({ dynamoEndpoint, env });
    let cookie = await operatorCookie(server.url);
    const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/hook`;
    const hook = await api('POST', '/api/v1/webhooks', { baseUrl: server.url, cookie, body: { url, events: ['task.created'], secret: 'crash-secret-123' } });
    await api('POST', '/api/v1/tasks', { baseUrl: server.url, cookie, body: { title: 'Crashed on' } });
    const deliveries = `/api/v1/webhooks/${hook.body.data.id}/deliveries`;

    // Arrange: the delivery function dies during both attempts (the first and one retry).
    for (let attempt = 1; attempt <= 2; attempt++) {
      await until(`attempt ${attempt}`, () => requests.length >= attempt);
      await server.kill();
      server = await startServer({ dynamoEndpoint, env });
    }
    // The next receive moves the message to the dead-letter queue. No attempt was recorded, so the
    // delivery (carried in its message, logged with its first attempt) is not in the log yet.
    await until('the dead-letter queue', () => journal(env.DATA_DIR, 'deliveries-dlq.jsonl').includes('"op":"send"'));
    cookie = await operatorCookie(server.url);
    expect((await api('GET', deliveries, { baseUrl: server.url, cookie })).body.data).toEqual([]);
    await server.stop();

    // Act: mark only (the redrive logs the delivery from its message, then marks it failed).
    const marked = await redrive(env, ['--no-replay']);
    expect(marked.code, marked.output).toBe(0);
    // A kill before the stream saved its position fans the change out again: the same delivery
    // (the same id) may be dead-lettered twice, and is handled once.
    expect(marked.report.deadLetters).toMatchObject({ messages: 1 + marked.report.deadLetters.duplicates, markedFailed: 1, replayed: 0 });
    server = await startServer({ dynamoEndpoint, env });
    cookie = await operatorCookie(server.url);
    expect((await api('GET', deliveries, { baseUrl: server.url, cookie })).body.data).toMatchObject([{ status: 'failed', error: expect.stringMatching(/crash or timeout/) }]);
    await server.stop();

    // Act: replay, with the receiver answering now.
    hanging = false;
    const before = requests.length;
    const replayed = await redrive(env);
    expect(replayed.code, replayed.output).toBe(0);
    // Replayed once. (Its second message, if any, may have reached a server in between, which
    // started an attempt: the redrive then marks the delivery failed again before replaying it.)
    expect(replayed.report.deadLetters).toMatchObject({ messages: 1 + replayed.report.deadLetters.duplicates, replayed: 1 });
    server = await startServer({ dynamoEndpoint, env });
    cookie = await operatorCookie(server.url);
    const log = await until('the replayed delivery', async () => {
      const data = (await api('GET', deliveries, { baseUrl: server!.url, cookie })).body.data;
      return data[0]?.status === 'succeeded' ? data : undefined;
    });

    // Assert: delivered once more, and the dead-letter queue is empty.
    expect(log).toMatchObject([{ status: 'succeeded', responseCode: 200 }]);
    expect(requests.length - before).toBe(1);
    expect(journal(env.DATA_DIR, 'deliveries-dlq.jsonl')).not.toContain('"op":"send"');
  }, 240_000);
});
