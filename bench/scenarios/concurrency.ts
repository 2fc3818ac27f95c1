/**
 * Concurrent creates into the same listing partitions, over HTTP on the local runtime
 * (DynamoDB Local): 500 creates at once into one tenant's private entity (tasks, one API key),
 * then 500 at once into the public entity (products) from many tenants. No response may be a 409
 * or a 503 for a write conflict (conflicts on shared counter items are retried inside the data
 * layer); the local runtime runs all 500 in one process, so on a loaded machine some may pass the
 * gateway's 29 s (504, or 503 at the function's deadline): those are counted apart, and their
 * writes may still land. Once the writes have settled, the totals LIST reports must be exact: equal
 * to the records a walk through every page finds (and to 500 when every create answered 201).
 *
 * DynamoDB's cancellations are counted by a middleware on the process's client (the gateway runs
 * the handlers in this process): how many TransactWriteItems were cancelled, and for what.
 *
 * First, the steady load of the soak on an `npm start` of its own: 16 clients each sending its mix
 * of requests one after another, a webhook and an event stream, with the CREATE latency the
 * clients see and whether the process's DynamoDB clients ran out of sockets (the SDK warns on the
 * console when twice its pool of requests wait for a socket); run with the SDK's pool of 50
 * sockets (what the local runtime had), then with the runtime's own.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../shared/data/client.js';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_DYNAMODB_SOCKETS } from '../../infra/local/server.js';
import { apiKeyOf, ok, send, sessionOf, tenantKey, type BenchTarget } from '../http.js';
import { startNpmStart } from '../npm-start.js';
import { percentile, round, summarize } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';

export const order = 95;

/** The sockets of the SDK's own pool (NodeHttpHandler), which the local runtime had before it set its own. */
const SDK_DEFAULT_SOCKETS = 50;

const V1 = '/api/v1';

interface Cancellations {
  transactions: number;
  conflicts: number;
  other: number;
}

/** Counts the TransactWriteItems DynamoDB cancels while `work` runs. */
async function watchCancellations<T>(work: () => Promise<T>): Promise<{ result: T; cancelled: Cancellations }> {
  const cancelled: Cancellations = { transactions: 0, conflicts: 0, other: 0 };
  const name = `benchConcurrency${randomBytes(4).toString('hex')}`;
  const stack = db().middlewareStack;
  stack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const e = error as { name?: string; CancellationReasons?: { Code?: string }[] };
        if ((context.commandName ?? '').startsWith('TransactWrite') && e.name === 'TransactionCanceledException') {
          cancelled.transactions += 1;
          if ((e.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict')) cancelled.conflicts += 1;
          else cancelled.other += 1;
        }
        throw error;
      }
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await work(), cancelled };
  } finally {
    stack.remove(name);
  }
}

interface Burst {
  statuses: Map<number, number>;
  /** 409, or 503 answered for busy records (a write conflict that outlasted the retries). */
  conflicts: number;
  /** 504 from the gateway, or 503 at the function's deadline: the machine was too slow for 500 at once. */
  timeouts: number;
  seconds: number;
  latencies: number[];
  cancelled: Cancellations;
}

/** Sends every request at once; statuses counted, never thrown. */
async function burst(requests: (() => Promise<{ status: number; body: any }>)[]): Promise<Burst> {
  const statuses = new Map<number, number>();
  const latencies: number[] = [];
  let conflicts = 0;
  let timeouts = 0;
  const started = performance.now();
  const { cancelled } = await watchCancellations(() =>
    Promise.all(
      requests.map(async (send) => {
        const t = performance.now();
        let status: number;
        let message = '';
        try {
          const response = await send();
          status = response.status;
          message = String(response.body?.error ?? '');
        } catch {
          status = 0;
        }
        latencies.push(performance.now() - t);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 409 || (status === 503 && /busy/i.test(message))) conflicts += 1;
        else if (status === 504 || status === 503) timeouts += 1;
      }),
    ),
  );
  return { statuses, conflicts, timeouts, seconds: (performance.now() - started) / 1000, latencies, cancelled };
}

async function totalOf(runtime: LocalRuntime, headers: Record<string, string>, path: string): Promise<number> {
  return (await ok(runtime, 'GET', path, headers)).body.pagination.total;
}

/** Waits until writes still running after their request timed out have landed (the total stops moving). */
async function settled(runtime: LocalRuntime, headers: Record<string, string>, path: string): Promise<void> {
  let last = -1;
  for (let i = 0; i < 60; i++) {
    const now = await totalOf(runtime, headers, path);
    if (now === last) return;
    last = now;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** The records a walk through every page of `path` finds (cursor pages of 100). */
async function walkCount(runtime: LocalRuntime, headers: Record<string, string>, path: string): Promise<number> {
  const ids = new Set<string>();
  let next: string | null = path;
  while (next) {
    const page: { body: any } = await ok(runtime, 'GET', next, headers);
    for (const r of page.body.data) ids.add(r.id);
    const cursor = page.body.pagination.nextCursor as string | null;
    next = cursor ? `${path}&cursor=${encodeURIComponent(cursor)}` : null;
  }
  return ids.size;
}

function rows(scenario: string, b: Burst, n: number, totals: { what: string; got: number; want: number }[]): BenchRow[] {
  const created = b.statuses.get(201) ?? 0;
  const lat = summarize(b.latencies);
  const others = [...b.statuses].filter(([s]) => s !== 201).map(([s, c]) => `${c} × ${s}`).join(', ') || 'none';
  return [
    { scenario, metric: '201 Created', value: created, target: `${n}`, pass: created === n, note: `other statuses: ${others}` },
    { scenario, metric: '409 / 503 for a write conflict', value: b.conflicts, target: '0', pass: b.conflicts === 0 },
    { scenario, metric: 'timed out in the local gateway (504, or 503 at the deadline)', value: b.timeouts, note: 'one process serves all; the writes may still land' },
    {
      scenario,
      metric: 'TransactWriteItems cancelled by DynamoDB Local (then retried)',
      value: b.cancelled.transactions,
      note: `${b.cancelled.conflicts} with a TransactionConflict reason, ${b.cancelled.other} other`,
    },
    { scenario, metric: 'burst duration', value: round(b.seconds, 2), unit: 's', note: `${round(created / b.seconds, 1)} creates/s (201s only); latency p50 ${round(lat.p50, 0)} ms, p99 ${round(lat.p99, 0)} ms` },
    ...totals.map((t) => ({ scenario, metric: `total: ${t.what}`, value: t.got, target: String(t.want), pass: t.got === t.want })),
  ];
}

/**
 * What DynamoDB Local does with n transactions sent at once (n sockets) that all ADD to ONE item
 * (each also puts an item of its own): how many it cancels, and for what.
 */
async function probe(runtime: LocalRuntime, n: number): Promise<BenchRow[]> {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: runtime.dynamoEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      requestHandler: { httpAgent: { maxSockets: n, keepAlive: true } } as never,
      maxAttempts: 1,
    }),
  );
  const table = tableName('records');
  const pk = `bench-probe#${randomBytes(6).toString('hex')}`;
  const reasons = new Map<string, number>();
  let attempts = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      for (;;) {
        attempts += 1;
        try {
          await client.send(
            new TransactWriteCommand({
              TransactItems: [
                { Update: { TableName: table, Key: { pk, sk: '#count#0' }, UpdateExpression: 'ADD #c :one', ExpressionAttributeNames: { '#c': 'count' }, ExpressionAttributeValues: { ':one': 1 } } },
                { Put: { TableName: table, Item: { pk, sk: `item#${i}` } } },
              ],
            }),
          );
          return;
        } catch (error) {
          const e = error as { name?: string; CancellationReasons?: { Code?: string }[] };
          const why = e.name === 'TransactionCanceledException' ? (e.CancellationReasons ?? []).map((r) => r.Code ?? 'None').filter((c) => c !== 'None').join('+') || 'none' : (e.name ?? 'error');
          reasons.set(why, (reasons.get(why) ?? 0) + 1);
          await new Promise((r) => setTimeout(r, Math.random() * 50));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const count = (await client.send(new GetCommand({ TableName: table, Key: { pk, sk: '#count#0' }, ConsistentRead: true }))).Item?.count;
  client.destroy();
  const scenario = `concurrency: DynamoDB Local, ${n} TransactWriteItems at once on one item (${n} sockets)`;
  return [
    { scenario, metric: 'attempts until all succeeded', value: attempts, note: `cancellations: ${[...reasons].map(([r, c]) => `${c} × ${r}`).join(', ') || 'none'}; ${round(seconds, 2)} s` },
    { scenario, metric: 'counter afterwards', value: Number(count), target: String(n), pass: Number(count) === n },
  ];
}

/** The latency of every create and of every request, and the statuses, of a steady mix. */
interface Mix {
  creates: number[];
  all: number[];
  statuses: Map<number, number>;
  seconds: number;
}

/**
 * `clients` clients, each sending `each` requests one after another in the soak's mix (bench/soak.ts,
 * uploads aside) on tasks of its own: creates, reads, filtered LISTs, If-Match updates, deletes,
 * imports of 100.
 */
async function steadyMix(target: BenchTarget, key: Record<string, string>, clients: number, each: number): Promise<Mix> {
  const mix: Mix = { creates: [], all: [], statuses: new Map(), seconds: 0 };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const t = performance.now();
    const reply = await send(target, method, path, { ...key, ...headers }, body);
    const ms = performance.now() - t;
    mix.all.push(ms);
    if (method === 'POST' && path === `${V1}/tasks`) mix.creates.push(ms);
    mix.statuses.set(reply.status, (mix.statuses.get(reply.status) ?? 0) + 1);
    return reply;
  };
  const client = async (c: number) => {
    const mine: string[] = [];
    const pick = () => mine[Math.floor(Math.random() * mine.length)];
    for (let i = 0; i < each; i++) {
      const roll = Math.random();
      if (roll < 0.3 || mine.length < 3) {
        const reply = await call('POST', `${V1}/tasks`, { title: `Steady ${c}-${i}`, status: 'todo', priority: 'medium' });
        if (reply.status === 201) mine.push(reply.body.data.id as string);
      } else if (roll < 0.5) {
        await call('GET', `${V1}/tasks/${pick()}`);
      } else if (roll < 0.65) {
        await call('GET', `${V1}/tasks?status=todo&priority=medium&limit=20`);
      } else if (roll < 0.8) {
        const id = pick();
        const etag = (await call('GET', `${V1}/tasks/${id}`)).headers.get('etag');
        if (etag) await call('PATCH', `${V1}/tasks/${id}`, { title: `Steady ${c}-${i} updated` }, { 'If-Match': etag });
      } else if (roll < 0.92) {
        const id = pick();
        mine.splice(mine.indexOf(id), 1);
        await call('DELETE', `${V1}/tasks/${id}`);
      } else {
        const tasks = Array.from({ length: 100 }, (_, k) => ({ title: `Steady import ${c}-${i}-${k}`, status: 'todo', priority: 'low' }));
        await call('POST', `${V1}/import/tasks`, { tasks }, { 'Idempotency-Key': `steady-${c}-${i}-${randomBytes(4).toString('hex')}` });
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  mix.seconds = (performance.now() - started) / 1000;
  return mix;
}

const POOL_WARNING = 'socket usage at capacity';

/**
 * The steady mix on an `npm start` of its own (its engine, DATA_DIR, webhook workers), as the
 * soak runs it: with a webhook on task.created to a receiver answering 204 and an event stream
 * open throughout, so that the fan-out, the deliveries and the stream's polls share the process's
 * DynamoDB clients with the requests. `sockets` sets DYNAMODB_MAX_SOCKETS (undefined: the local
 * runtime's own pool). The SDK's warnings of an exhausted pool are counted in its output.
 */
async function steadyOnNpmStart(clients: number, each: number, sockets: number | undefined): Promise<BenchRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-steady-'));
  const admin = { email: 'steady@bench.local', password: `steady-${randomBytes(12).toString('hex')}` };
  const server = startNpmStart(dataDir, admin, {
    LOG_LEVEL: 'WARN',
    S3_ENDPOINT: '',
    ALLOW_INSECURE_WEBHOOKS: '1',
    DYNAMODB_MAX_SOCKETS: sockets ? String(sockets) : '',
  });
  let warnings = 0;
  let tail = '';
  const count = (chunk: Buffer) => {
    const text = tail + chunk;
    warnings += text.split(POOL_WARNING).length - 1;
    // Too short to hold a whole warning, long enough to complete one cut across two chunks.
    tail = text.slice(-(POOL_WARNING.length - 1));
  };
  server.child.stdout!.on('data', count);
  server.child.stderr!.on('data', count);
  const receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  let stream: http.ClientRequest | undefined;
  try {
    const target = { url: await server.listening };
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { key } = await apiKeyOf(target, admin, 'steady');
    const port = (receiver.address() as AddressInfo).port;
    await ok(target, 'POST', `${V1}/webhooks`, key, { url: `http://127.0.0.1:${port}/hook`, events: ['task.created'], secret: 'bench-secret-0123456789' });
    stream = http.get(`${target.url}${V1}/stream/tasks`, { headers: { ...key, Accept: 'text/event-stream' } }, (res) => res.resume());
    stream.on('error', () => undefined);
    const mix = await steadyMix(target, key, clients, each);
    const creates = [...mix.creates].sort((a, b) => a - b);
    const all = [...mix.all].sort((a, b) => a - b);
    const failed = [...mix.statuses].filter(([status]) => status >= 500).reduce((n, [, c]) => n + c, 0);
    const scenario = `concurrency: ${clients} clients on npm start, ${each} requests each in the soak's mix, DynamoDB socket pool ${sockets ?? `${LOCAL_DYNAMODB_SOCKETS} (the local runtime's)`}`;
    return [
      { scenario, metric: 'CREATE latency p50', value: round(percentile(creates, 50), 0), unit: 'ms', note: `${creates.length} creates; p99 ${round(percentile(creates, 99), 0)} ms` },
      { scenario, metric: 'CREATE latency p95', value: round(percentile(creates, 95), 0), unit: 'ms' },
      { scenario, metric: 'every request: latency p50 / p95', value: `${round(percentile(all, 50), 0)} / ${round(percentile(all, 95), 0)}`, unit: 'ms', note: `${all.length} requests in ${round(mix.seconds, 1)} s (${round(all.length / mix.seconds, 1)}/s)` },
      { scenario, metric: '5xx answers', value: failed, target: '0', pass: failed === 0, note: [...mix.statuses].map(([status, n]) => `${n} × ${status}`).join(', ') },
      { scenario, metric: 'SDK warnings of an exhausted socket pool', value: warnings, target: sockets ? undefined : '0', pass: sockets ? undefined : warnings === 0 },
    ];
  } finally {
    stream?.destroy();
    receiver.close();
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const n = Math.max(10, Math.round(500 * context.scale));
  const operator = await sessionOf(runtime, runtime.admin);
  const out: BenchRow[] = [...(await probe(runtime, n))];

  // 0. The soak's steady load, 16 clients, on npm start: with the SDK's pool, then the runtime's.
  const each = Math.max(10, Math.round(50 * context.scale));
  out.push(...(await steadyOnNpmStart(16, each, SDK_DEFAULT_SOCKETS)), ...(await steadyOnNpmStart(16, each, undefined)));

  // 1. One tenant's private entity: n creates at once with one key.
  const { key } = await tenantKey(runtime, operator, 'Concurrency', 'private');
  const tasks = await burst(Array.from({ length: n }, (_, i) => () => send(runtime, 'POST', `${V1}/tasks`, key, { title: `Concurrent ${i}` })));
  await settled(runtime, key, `${V1}/tasks?limit=1`);
  const stored = await walkCount(runtime, key, `${V1}/tasks?limit=100`);
  out.push(
    ...rows(`concurrency: ${n} creates at once into one tenant's tasks`, tasks, n, [
      { what: 'records stored (every page walked)', got: stored, want: tasks.timeouts ? stored : n },
      { what: 'tasks (tenant view)', got: await totalOf(runtime, key, `${V1}/tasks?limit=1`), want: stored },
      { what: 'tasks?status=todo', got: await totalOf(runtime, key, `${V1}/tasks?status=todo&limit=1`), want: stored },
      { what: 'tasks?priority=medium, page 2', got: await totalOf(runtime, key, `${V1}/tasks?priority=medium&limit=5&page=2`), want: stored },
      { what: 'tasks, a cursor page (total from the counters alone)', got: await cursorTotal(runtime, key), want: stored },
    ]),
  );

  // 2. The public entity: n creates at once from many tenants.
  const tenants = Math.max(2, Math.round(20 * Math.min(1, context.scale)));
  const keys: Record<string, string>[] = [];
  for (let t = 0; t < tenants; t++) keys.push((await tenantKey(runtime, operator, 'Concurrency', `public-${t}`)).key);
  const category = `bench-${randomBytes(4).toString('hex')}`;
  const before = {
    all: await totalOf(runtime, keys[0], `${V1}/products?limit=1`),
    active: await totalOf(runtime, keys[0], `${V1}/products?status=active&limit=1`),
  };
  const products = await burst(
    Array.from({ length: n }, (_, i) => () => send(runtime, 'POST', `${V1}/products`, keys[i % tenants], { name: `Concurrent ${i}`, price: i, category })),
  );
  await settled(runtime, keys[1], `${V1}/products?category=${category}&limit=1`);
  const listed = await walkCount(runtime, keys[1], `${V1}/products?category=${category}&limit=100`);
  out.push(
    ...rows(`concurrency: ${n} creates at once into products (public) from ${tenants} tenants`, products, n, [
      { what: `records stored (every page of this run's category walked)`, got: listed, want: products.timeouts ? listed : n },
      { what: 'products (all tenants)', got: (await totalOf(runtime, keys[1], `${V1}/products?limit=1`)) - before.all, want: listed },
      { what: 'products?status=active', got: (await totalOf(runtime, keys[1], `${V1}/products?status=active&limit=1`)) - before.active, want: listed },
      { what: `products?category=<this run's>`, got: await totalOf(runtime, keys[1], `${V1}/products?category=${category}&limit=1`), want: listed },
    ]),
  );
  return out;
}

/** The total a cursor page reports (read from the counters alone, not the first page's Query). */
async function cursorTotal(runtime: LocalRuntime, key: Record<string, string>): Promise<number> {
  const first = await ok(runtime, 'GET', `${V1}/tasks?limit=3`, key);
  const next = first.body.pagination.nextCursor as string;
  return totalOf(runtime, key, `${V1}/tasks?limit=3&cursor=${encodeURIComponent(next)}`);
}
