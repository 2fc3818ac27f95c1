/**
 * Uploads, on the local runtime (DynamoDB Local, s3rver):
 *
 * (a) a 1 MiB multipart upload through HTTP: p50 and p99;
 * (b) the upload function's memory for that request, measured in a process that holds only the
 *     function (the object store in another): the peak of V8 heap plus external memory
 *     (buffers, external strings) above what it held when the event arrived (sampled every
 *     millisecond and just before every GC, above the level after two full GCs), divided by
 *     the file size — target under 3 (the file is streamed to S3 from the request body, never
 *     copied whole);
 * (c) presign + POST to storage + complete of a 10 MiB PDF: the time of the whole flow and of
 *     each step.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { GCProfiler, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { config } from '../../shared/config.js';
import { matchPath } from '../../shared/routes.js';
import { round, summarize } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';

const MIB = 1024 * 1024;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** A valid 1×1 PNG; padding after its end keeps it a PNG to a reader and to file-type. */
const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

function png(size: number): Buffer {
  return Buffer.concat([PNG_1X1, randomBytes(size - PNG_1X1.length)]);
}

function pdf(size: number): Buffer {
  const head = Buffer.from('%PDF-1.4\n');
  return Buffer.concat([head, randomBytes(size - head.length)]);
}

function multipart(file: Buffer, filename: string, type: string): { body: Buffer; contentType: string } {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

async function session(runtime: LocalRuntime): Promise<string> {
  const response = await fetch(`${runtime.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(runtime.admin),
  });
  if (!response.ok) throw new Error(`login: ${response.status}`);
  return response.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
}

async function post(runtime: LocalRuntime, path: string, cookie: string, body: Uint8Array<ArrayBuffer> | string, contentType: string): Promise<{ status: number; json: any }> {
  const response = await fetch(`${runtime.url}${path}`, { method: 'POST', headers: { Cookie: cookie, 'Content-Type': contentType }, body });
  return { status: response.status, json: await response.json() };
}

// ---------- (a) ----------

async function multipartLatency(runtime: LocalRuntime, cookie: string, scale: number): Promise<BenchRow[]> {
  const scenario = '(a) POST /api/v1/upload, 1 MiB PNG, HTTP on the local runtime';
  const { body: buffer, contentType } = multipart(png(MIB), 'bench.png', 'image/png');
  const body = new Uint8Array(buffer);
  const n = Math.max(10, Math.round(40 * scale));
  for (let i = 0; i < 3; i++) await post(runtime, '/api/v1/upload', cookie, body, contentType);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const { status } = await post(runtime, '/api/v1/upload', cookie, body, contentType);
    samples.push(performance.now() - start);
    if (status !== 201) throw new Error(`upload answered ${status}`);
  }
  const { p50, p99 } = summarize(samples);
  return [
    { scenario, metric: 'p50', value: round(p50, 1), unit: 'ms', note: `${n} sequential uploads (multipart parse, type check, S3 PutObject to s3rver, one TransactWriteItems)` },
    { scenario, metric: 'p99', value: round(p99, 1), unit: 'ms' },
  ];
}

// ---------- (b) ----------

/** Set (to the session cookie and scale, as JSON) in the process that measures (b). */
const MEMORY_CHILD_ENV = 'UPLOAD_BENCH_MEMORY';
const ROWS_PREFIX = 'upload-memory-rows ';
/** Invocations before measuring: a warm container has served requests already. */
const WARM_UP = 3;

function gcFunction(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function heldBytes(): number {
  const m = process.memoryUsage();
  // external includes arrayBuffers (Buffers); heapUsed holds the event's base64 string.
  return m.heapUsed + m.external;
}

/**
 * An s3rver in a process of its own, so that the storage server's buffers are not counted as
 * the function's: the function talks to it exactly as to the runtime's own.
 */
async function separateObjectStore(): Promise<{ endpoint: string; stop: () => void }> {
  const directory = mkdtempSync(join(tmpdir(), 'bench-s3-'));
  const script = `const S3rver = require('s3rver');
new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: ${JSON.stringify(directory)}, configureBuckets: [{ name: ${JSON.stringify(config().uploads.bucket)} }] })
  .run().then((a) => console.log('port ' + a.port));`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The function is measured in a process that holds only it, as a Lambda container does: the
 * local runtime of this process (gateway, DynamoDB-stream and queue pollers) allocates on its
 * own timers, and its garbage would be counted as the function's. The child inherits this
 * process's environment (DynamoDB endpoint, deployment secret) and talks to a separate s3rver.
 */
async function handlerMemory(cookie: string, scale: number): Promise<BenchRow[]> {
  const store = await separateObjectStore();
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
      cwd: ROOT,
      env: { ...process.env, S3_ENDPOINT: store.endpoint, [MEMORY_CHILD_ENV]: JSON.stringify({ cookie, scale }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = out.split('\n').find((l) => l.startsWith(ROWS_PREFIX));
    if (code !== 0 || !line) throw new Error(`the memory measurement exited with ${code}`);
    return JSON.parse(line.slice(ROWS_PREFIX.length)) as BenchRow[];
  } finally {
    store.stop();
  }
}

async function measureHandlerMemory(cookie: string, scale: number, size: number): Promise<BenchRow[]> {
  const scenario = `(b) upload function memory, ${size / MIB} MiB PNG, in a process of its own (s3rver in another)`;
  const gc = gcFunction();
  const { handler } = (await import('../../functions/upload/handler.js')) as unknown as {
    handler: (e: APIGatewayProxyEvent, c: Context) => Promise<{ statusCode: number }>;
  };
  const file = png(size);
  const { body, contentType } = multipart(file, 'bench.png', 'image/png');
  const match = matchPath('POST', '/api/v1/upload')!;
  const n = Math.max(5, Math.round(10 * scale));
  const ratios: number[] = [];
  const bufferRatios: number[] = [];
  for (let i = 0; i < WARM_UP + n; i++) {
    // The event as API Gateway hands it over: the body base64-encoded.
    const event = {
      resource: match.path,
      path: '/api/v1/upload',
      httpMethod: 'POST',
      headers: { Cookie: cookie, 'Content-Type': contentType },
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: null,
      stageVariables: null,
      body: body.toString('base64'),
      isBase64Encoded: true,
      requestContext: { requestId: `bench-${i}`, identity: { sourceIp: '127.0.0.1' } } as never,
    } as APIGatewayProxyEvent;
    // A context of its own per invocation, as Lambda gives: one kept across invocations would
    // hold the previous request (its decoded body too) inside the baseline.
    const context = { awsRequestId: `bench-${i}`, getRemainingTimeInMillis: () => 29_000 } as unknown as Context;
    // Twice: V8 takes a freed ArrayBuffer off `external` only at the GC after the one that
    // freed it, and sweeps ArrayBuffers concurrently; after one GC the baseline would still
    // count the previous request's body, and its release during this request would offset
    // this one's.
    gc();
    gc();
    const base = heldBytes();
    const baseBuffers = process.memoryUsage().arrayBuffers;
    let peak = base;
    let peakBuffers = baseBuffers;
    const sample = () => {
      peak = Math.max(peak, heldBytes());
      peakBuffers = Math.max(peakBuffers, process.memoryUsage().arrayBuffers);
    };
    // The timer fires only when the event loop is free; the heap just before each GC (garbage
    // included) is the peak it would miss.
    const gcs = new GCProfiler();
    gcs.start();
    const timer = setInterval(sample, 1);
    const result = await handler(event, context);
    sample();
    clearInterval(timer);
    for (const { beforeGC } of gcs.stop().statistics) {
      peak = Math.max(peak, beforeGC.heapStatistics.usedHeapSize + beforeGC.heapStatistics.externalMemory);
    }
    if (result.statusCode !== 201) throw new Error(`in-process upload answered ${result.statusCode}`);
    if (i >= WARM_UP) {
      ratios.push((peak - base) / file.length);
      bufferRatios.push((peakBuffers - baseBuffers) / file.length);
    }
  }
  const worst = Math.max(...ratios);
  const eventShare = Math.ceil((body.length * 4) / 3) / file.length;
  return [
    {
      scenario,
      metric: 'peak memory above the event ÷ file size (worst)',
      value: round(worst, 2),
      unit: '×',
      target: '< 3',
      pass: worst < 3,
      note: `${n} invocations after ${WARM_UP} warm-up ones, median ${round(summarize(ratios).p50, 2)}×; heap + external (buffers, external strings) sampled every ms and before every GC, above the level after two full GCs`,
    },
    {
      scenario,
      metric: 'of which buffers (file bytes) ÷ file size (worst)',
      value: round(Math.max(...bufferRatios), 2),
      unit: '×',
      note: 'Buffers/ArrayBuffers only: where a copy of the file would show; the rest is JavaScript heap, mostly SDK garbage not yet collected',
    },
    {
      scenario,
      metric: 'the same with the event body counted',
      value: round(worst + eventShare, 2),
      unit: '×',
      note: `reported: the target counts from the event's arrival; the base64 event body alone is ${round(eventShare, 2)}× the file`,
    },
  ];
}

/** The child process of handlerMemory: measures, prints its rows, exits. */
async function measureInThisProcess(): Promise<void> {
  const { cookie, scale } = JSON.parse(process.env[MEMORY_CHILD_ENV]!) as { cookie: string; scale: number };
  // Two sizes tell a per-request constant (SDK and middleware garbage) from a per-byte copy.
  const rows = [...(await measureHandlerMemory(cookie, scale, MIB)), ...(await measureHandlerMemory(cookie, scale, 4 * MIB))];
  process.stdout.write(`${ROWS_PREFIX}${JSON.stringify(rows)}\n`, () => process.exit(0));
}

if (process.env[MEMORY_CHILD_ENV] && process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  measureInThisProcess().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

// ---------- (c) ----------

async function presignedFlow(runtime: LocalRuntime, cookie: string, scale: number): Promise<BenchRow[]> {
  const scenario = '(c) presign + POST to storage + complete, 10 MiB PDF, local runtime (s3rver)';
  const file = pdf(10 * MIB);
  const n = Math.max(3, Math.round(5 * scale));
  const totals: number[] = [];
  const steps = { presign: [] as number[], post: [] as number[], complete: [] as number[] };
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const presigned = await post(runtime, '/api/v1/upload/presign', cookie, JSON.stringify({ filename: 'bench.pdf', type: 'application/pdf', size: file.length }), 'application/json');
    if (presigned.status !== 201) throw new Error(`presign answered ${presigned.status}`);
    const t1 = performance.now();
    const form = new FormData();
    for (const [name, value] of Object.entries(presigned.json.data.fields as Record<string, string>)) form.append(name, value);
    form.append('file', new Blob([new Uint8Array(file)], { type: 'application/pdf' }), 'bench.pdf');
    const stored = await fetch(presigned.json.data.url, { method: 'POST', body: form });
    if (!stored.ok) throw new Error(`storage POST answered ${stored.status}`);
    await stored.arrayBuffer();
    const t2 = performance.now();
    const completed = await post(runtime, '/api/v1/upload/complete', cookie, JSON.stringify({ key: presigned.json.data.key }), 'application/json');
    if (completed.status !== 201) throw new Error(`complete answered ${completed.status}: ${JSON.stringify(completed.json)}`);
    const t3 = performance.now();
    steps.presign.push(t1 - t0);
    steps.post.push(t2 - t1);
    steps.complete.push(t3 - t2);
    totals.push(t3 - t0);
  }
  const p50 = (xs: number[]) => round(summarize(xs).p50, 1);
  return [
    { scenario, metric: 'whole flow p50', value: p50(totals), unit: 'ms', note: `${n} runs; max ${round(Math.max(...totals), 1)} ms` },
    { scenario, metric: 'steps p50', value: `presign ${p50(steps.presign)} · POST ${p50(steps.post)} · complete ${p50(steps.complete)}`, unit: 'ms', note: 'complete = HeadObject, ranged GET of 4100 bytes, CopyObject, one TransactWriteItems, DeleteObject' },
  ];
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const cookie = await session(runtime);
  return [
    ...(await multipartLatency(runtime, cookie, context.scale)),
    ...(await handlerMemory(cookie, context.scale)),
    ...(await presignedFlow(runtime, cookie, context.scale)),
  ];
}
