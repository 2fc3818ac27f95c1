/**
 * SSE stream scenario, through HTTP on the local gateway and DynamoDB Local, with the default
 * stream settings (poll 500 ms, heartbeat 15 s):
 * - write → message: a task is created while a stream is open; the time from sending the POST to
 *   the task.created message arriving on the stream (targets p50 ≤ 600 ms, p99 ≤ 1.5 s);
 * - 100 open idle streams in this process: heap per stream, and the DynamoDB requests they make
 *   per stream per minute (counted by a middleware on the process's DynamoDB client, which also
 *   asks for the consumed capacity of their queries). Idle streams should cost nothing but their
 *   poll queries (and a lease renewal every 20 s).
 * The open-stream limit per user is raised for this run (one user holds the 100 streams).
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { db, tableName } from '../../shared/data/client.js';
import { readSseBlocks } from '../http.js';
import { round, summarize } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';

export const order = 60;

process.env.STREAM_MAX_PER_USER ??= '1000';

const STREAMS = 100;

async function credentials(runtime: LocalRuntime): Promise<Record<string, string>> {
  const login = await fetch(`${runtime.url}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(runtime.admin) });
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
  const response = await fetch(`${runtime.url}/api/v1/api-keys`, { method: 'POST', headers: { Cookie: cookie, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'bench stream', scopes: ['*'] }) });
  const body = (await response.json()) as { data: { key: string } };
  if (response.status !== 201) throw new Error(`key: ${response.status}`);
  return { Authorization: `Bearer ${body.data.key}` };
}

interface OpenStream {
  req: ClientRequest;
  res: IncomingMessage;
  /** Called with each complete message block. */
  onMessage?: (block: string) => void;
}

/** A raw http client (lighter than fetch): the measured memory is mostly the server side. */
function openStream(runtime: LocalRuntime, headers: Record<string, string>): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${runtime.url}/api/v1/stream/tasks`, { headers: { ...headers, Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
      const stream: OpenStream = { req, res };
      readSseBlocks(res, (block) => {
        if (block.includes('"connected"')) resolve(stream);
        stream.onMessage?.(block);
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end();
  });
}

function close(stream: OpenStream): void {
  stream.req.destroy();
}

function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  (runInNewContext('gc') as () => void)();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Counted {
  name: string;
  table: string;
  capacity: number;
}

/** Counts the SDK commands sent while `work` runs, with the consumed capacity of queries. */
async function counting(work: () => Promise<void>): Promise<Counted[]> {
  const sent: Counted[] = [];
  const stack = db().middlewareStack;
  stack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; ReturnConsumedCapacity?: string };
      const name = (context.commandName ?? 'unknown').replace(/Command$/, '');
      if (name === 'Query') input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const output = result.output as { ConsumedCapacity?: { CapacityUnits?: number } };
      sent.push({ name, table: input.TableName ?? '?', capacity: output.ConsumedCapacity?.CapacityUnits ?? 0 });
      return result;
    },
    { step: 'initialize', name: 'benchStreamCounter' },
  );
  try {
    await work();
  } finally {
    stack.remove('benchStreamCounter');
  }
  return sent;
}

async function latency(runtime: LocalRuntime, headers: Record<string, string>, samples: number): Promise<number[]> {
  const stream = await openStream(runtime, headers);
  const waiting = new Map<string, (at: number) => void>();
  stream.onMessage = (block) => {
    const match = /"task":\{[^}]*"title":"(bench-latency-[^"]+)"/.exec(block);
    if (match) waiting.get(match[1])?.(performance.now());
  };
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const title = `bench-latency-${i}`;
    const arrived = new Promise<number>((resolve) => waiting.set(title, resolve));
    // A random phase against the poll interval, as real writes have.
    await sleep(Math.random() * 500);
    const sent = performance.now();
    const response = await fetch(`${runtime.url}/api/v1/tasks`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ title }) });
    if (response.status !== 201) throw new Error(`create: ${response.status}`);
    await response.arrayBuffer();
    const at = await Promise.race([arrived, sleep(10_000).then(() => NaN)]);
    times.push(at - sent);
  }
  close(stream);
  return times;
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const headers = await credentials(runtime);
  const rows: BenchRow[] = [];

  // Warm-up: module loading, key cache.
  await latency(runtime, headers, 2);

  const scenario = 'stream: write → message on an open stream (POST /api/v1/tasks → task.created), over HTTP';
  const times = await latency(runtime, headers, Math.max(40, Math.round(40 * context.scale)));
  const lost = times.filter((t) => Number.isNaN(t)).length;
  const { p50, p99, n } = summarize(times.filter((t) => !Number.isNaN(t)));
  rows.push({ scenario, metric: 'p50', value: round(p50, 0), unit: 'ms', target: '≤ 600 ms', pass: p50 <= 600 && lost === 0, note: `${n} writes, ${lost} lost; poll 500 ms, settle 200 ms` });
  rows.push({ scenario, metric: 'p99', value: round(p99, 0), unit: 'ms', target: '≤ 1500 ms', pass: p99 <= 1500 && lost === 0 });

  const idle = `stream: ${STREAMS} open idle streams in one process`;
  collectGarbage();
  const before = process.memoryUsage();
  const streams: OpenStream[] = [];
  for (let i = 0; i < STREAMS; i += 10) streams.push(...(await Promise.all(Array.from({ length: 10 }, () => openStream(runtime, headers)))));
  await sleep(1000);
  collectGarbage();
  const after = process.memoryUsage();
  const windowMs = 10_000;
  const sent = await counting(async () => {
    await sleep(windowMs);
  });
  for (const stream of streams) close(stream);
  await sleep(1000);

  const perMinute = (count: number) => round((count / STREAMS) * (60_000 / windowMs), 1);
  const queries = sent.filter((s) => s.name === 'Query' && s.table === tableName('events'));
  const others = sent.filter((s) => !(s.name === 'Query' && s.table === tableName('events')));
  const rcu = queries.reduce((sum, q) => sum + q.capacity, 0);
  const byName = [...others.reduce((m, s) => m.set(`${s.name} ${s.table}`, (m.get(`${s.name} ${s.table}`) ?? 0) + 1), new Map<string, number>())].map(([k, c]) => `${k}: ${c}`).join(', ');
  rows.push({
    scenario: idle,
    metric: 'heap per stream',
    value: round((after.heapUsed - before.heapUsed) / STREAMS / 1024, 1),
    unit: 'KiB',
    note: `after GC; client sockets in the same process included; RSS per stream ${round((after.rss - before.rss) / STREAMS / 1024, 1)} KiB`,
  });
  rows.push({
    scenario: idle,
    metric: 'DynamoDB reads per stream per minute',
    value: perMinute(queries.length),
    unit: 'Query',
    target: 'only the poll queries (120/min at 500 ms)',
    pass: queries.length > 0 && perMinute(queries.length) <= 125,
    note: `each an empty strongly consistent Query (1 RCU on DynamoDB; DynamoDB Local reports ${rcu} consumed); other requests in ${windowMs / 1000} s: ${byName || 'none'} (lease renewals, one per stream per 20 s)`,
  });
  return rows;
}
