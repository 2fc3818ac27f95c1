/**
 * Webhooks on `npm start` (a child process running infra/local/main.ts, on the run's DynamoDB
 * Local with tables of its own and a DATA_DIR of its own), delivering to a real HTTP receiver on
 * 127.0.0.1 (ALLOW_INSECURE_WEBHOOKS=1):
 * - write → delivery received, p50 / p99 (sequential task creates, one subscriber);
 * - 1,000 task writes × 10 subscribers: every (subscriber, event) delivered, duplicates counted,
 *   deliveries per second;
 * - the receiver down for 60 s, then up: every delivery arrives (WEBHOOK_RETRY_SCHEDULE shortened).
 * BENCH_SCALE scales the counts and the outage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pool, round, summarize } from '../stats.js';
import type { BenchContext, BenchRow } from '../types.js';

export const order = 200;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RETRY_SCHEDULE = '1,2,4,8,15,15,15,15,15,15,15,15';

interface Hit {
  path: string;
  eventId: string;
  recordId: string;
  at: number;
}

async function receiverOn(port: number, hits: Hit[]): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; data: { id: string } };
      hits.push({ path: req.url ?? '', eventId: body.id, recordId: body.data?.id, at: performance.now() });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"received":true}');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  return server;
}

function close(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

async function startApi(dynamoEndpoint: string, dataDir: string, admin: { email: string; password: string }): Promise<{ url: string; child: ChildProcess }> {
  const suffix = randomBytes(4).toString('hex');
  const tables = Object.fromEntries(['RECORDS', 'EVENTS', 'HISTORY', 'IDENTITY', 'LIMITS', 'WEBHOOKS'].map((t) => [`TABLE_${t}`, `bench-wh-${suffix}-${t.toLowerCase()}`]));
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...tables,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DYNAMODB_ENDPOINT: dynamoEndpoint,
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
      ALLOW_INSECURE_WEBHOOKS: '1',
      WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
      LOG_LEVEL: 'ERROR',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      output += c;
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) resolve(m[1]);
    });
    child.stderr!.on('data', (c: Buffer) => (output += c));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return { url, child };
}

async function call(base: string, cookie: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', cookie }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as { data?: any };
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const admin = { email: 'bench-webhooks@bench.local', password: `bench-${randomBytes(12).toString('hex')}` };
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const { url, child } = await startApi(runtime.dynamoEndpoint, dataDir, admin);
  const rows: BenchRow[] = [];
  const hits: Hit[] = [];
  const receiver = await receiverOn(0, hits);
  const port = (receiver.address() as AddressInfo).port;
  try {
    const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(admin) });
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    const hook = (path: string) => call(url, cookie, 'POST', '/api/v1/webhooks', { url: `http://127.0.0.1:${port}${path}`, events: ['task.created'], secret: 'bench-secret-0123456789' });

    // 1. Write → delivery latency.
    const latencyHook = await hook('/latency');
    const latencies: number[] = [];
    const writes = Math.max(20, Math.round(200 * context.scale));
    for (let i = 0; i < writes; i++) {
      const started = performance.now();
      const task = await call(url, cookie, 'POST', '/api/v1/tasks', { title: `latency ${i}` });
      await waitFor(() => hits.some((h) => h.recordId === task.id), 30_000);
      latencies.push(hits.find((h) => h.recordId === task.id)!.at - started);
    }
    const lat = summarize(latencies);
    rows.push(
      { scenario: 'webhooks: write → delivery received (1 subscriber, sequential)', metric: 'p50', value: round(lat.p50, 1), unit: 'ms', target: '≤ 500 ms', pass: lat.p50 <= 500, note: `${lat.n} writes` },
      { scenario: 'webhooks: write → delivery received (1 subscriber, sequential)', metric: 'p99', value: round(lat.p99, 1), unit: 'ms', target: '≤ 2000 ms', pass: lat.p99 <= 2000 },
    );
    await call(url, cookie, 'DELETE', `/api/v1/webhooks/${latencyHook.id}`);

    // 2. 1,000 writes × 10 subscribers.
    const fanHooks = [];
    for (let i = 0; i < 10; i++) fanHooks.push(await hook(`/fan/${i}`));
    hits.length = 0;
    const count = Math.max(50, Math.round(1000 * context.scale));
    const expected = count * fanHooks.length;
    const started = performance.now();
    const ids: string[] = [];
    await pool(Array.from({ length: count }, (_, i) => i), 16, async (i) => {
      ids.push((await call(url, cookie, 'POST', '/api/v1/tasks', { title: `fan ${i}` })).id);
    });
    const writeSeconds = (performance.now() - started) / 1000;
    const unique = () => new Set(hits.map((h) => `${h.path} ${h.eventId}`)).size;
    const complete = await waitFor(() => unique() >= expected, 600_000);
    const lastAt = Math.max(...hits.map((h) => h.at));
    const seconds = (lastAt - started) / 1000;
    const distinct = unique();
    rows.push(
      { scenario: `webhooks: ${count} task writes × 10 subscribers`, metric: 'deliveries received (distinct)', value: distinct, target: `= ${expected}`, pass: complete && distinct === expected, note: `writes took ${round(writeSeconds, 1)} s` },
      { scenario: `webhooks: ${count} task writes × 10 subscribers`, metric: 'duplicates', value: hits.length - distinct, note: 'at-least-once; receivers de-duplicate by webhook-id' },
      { scenario: `webhooks: ${count} task writes × 10 subscribers`, metric: 'throughput', value: round(distinct / seconds, 1), unit: 'deliveries/s', note: `first write to last delivery ${round(seconds, 1)} s` },
    );
    for (const h of fanHooks) await call(url, cookie, 'DELETE', `/api/v1/webhooks/${h.id}`);

    // 3. Receiver down for 60 s, then up.
    const downHits: Hit[] = [];
    const probe = await receiverOn(0, downHits);
    const downPort = (probe.address() as AddressInfo).port;
    await close(probe);
    await call(url, cookie, 'POST', '/api/v1/webhooks', { url: `http://127.0.0.1:${downPort}/down`, events: ['task.created'], secret: 'bench-secret-0123456789' });
    const downCount = Math.max(20, Math.round(100 * context.scale));
    const downIds: string[] = [];
    for (let i = 0; i < downCount; i++) downIds.push((await call(url, cookie, 'POST', '/api/v1/tasks', { title: `down ${i}` })).id);
    const outageMs = Math.round(60_000 * Math.min(1, context.scale));
    await new Promise((r) => setTimeout(r, outageMs));
    const up = await receiverOn(downPort, downHits);
    const upAt = performance.now();
    const all = await waitFor(() => downIds.every((id) => downHits.some((h) => h.recordId === id)), 120_000);
    const received = new Set(downHits.map((h) => h.recordId)).size;
    rows.push(
      { scenario: `webhooks: receiver down ${outageMs / 1000} s, then up (${downCount} deliveries)`, metric: 'delivered', value: received, target: `= ${downCount} (none lost)`, pass: all && received === downCount, note: `retry schedule ${RETRY_SCHEDULE} s` },
      { scenario: `webhooks: receiver down ${outageMs / 1000} s, then up (${downCount} deliveries)`, metric: 'time to drain after up', value: round((Math.max(...downHits.map((h) => h.at)) - upAt) / 1000, 1), unit: 's' },
    );
    await close(up);
  } finally {
    await close(receiver);
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}
