/**
 * A bounded soak of `npm start` (a child process running infra/local/main.ts with its own
 * DynamoDB Local on a DATA_DIR of its own), with faults, checked against a ledger:
 * - 16 workers, each on its own tasks: creates, reads, filtered LISTs, If-Match updates,
 *   deletes, imports of 100, multipart uploads of 1–5 MiB;
 * - one SSE client on /api/v1/stream/tasks throughout, reconnecting with Last-Event-ID;
 * - one webhook receiver (task.created) that checks every delivery's HMAC signature;
 * - faults: DynamoDB Local killed with kill -9 (its pid from DATA_DIR/dynamodb-local.pid) at 30 %
 *   of the run, the receiver down for 60 s (at most a sixth of the run) from 55 %.
 * Then the deliveries are given time to arrive and the ledger is checked over HTTP (LIST with
 * ids=): lost = an acknowledged create missing (and not deleted since), resurrected = an
 * acknowledged delete present again. Reported: the figures above, live-stream vs replayed
 * events, delivery lag percentiles (acknowledged create → delivery received), 5xx outside the
 * fault windows, and the resident memory of the node process and of the engine (first, max, last).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiKeyOf, send, type BenchReply } from './http.js';
import { percentile } from './stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKERS = 16;
const SECRET = 'soak-secret-0123456789abcdef';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SoakResult {
  minutes: number;
  requests: number;
  byOperation: Record<string, number>;
  acknowledged: { creates: number; deletes: number; updates: number; imports: number; uploads: number };
  lost: number;
  resurrected: number;
  examples: string[];
  stream: { live: number; replayed: number; missing: number; reconnects: number };
  webhooks: { expected: number; delivered: number; missing: number; duplicates: number; badSignatures: number; lagMs: { p50: number; p95: number; p99: number; max: number } };
  errors: { fiveXxOutsideFaults: number; fiveXxDuringFaults: number; transportErrors: number; examples: string[] };
  engine: { killedAt: number; recoveredAfterMs: number | undefined; lines: string[] };
  rssMiB: { node: { first: number; max: number; last: number }; engine: { first: number; max: number; last: number } };
}

function rssMiB(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return line ? Math.round(Number(line.replace(/\D+/g, '')) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

function startServer(dataDir: string, admin: { email: string; password: string }): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      DYNAMODB_ENDPOINT: '',
      AWS_ENDPOINT_URL_DYNAMODB: '',
      S3_ENDPOINT: '',
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
      LOG_LEVEL: 'ERROR',
      ALLOW_INSECURE_WEBHOOKS: '1',
      // Retries come back within the outage's reach: 60 s down must not exhaust them.
      WEBHOOK_RETRY_SCHEDULE: '2,4,8,15,15,15,15,15,15,15,15,15',
      RATE_LIMIT_API_KEY_PER_HOUR: '1000000000',
      RATE_LIMIT_SESSION_PER_HOUR: '1000000000',
      RATE_LIMIT_ANONYMOUS_PER_HOUR: '1000000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen within 180 s:\n${output}`)), 180_000);
    const collect = (chunk: Buffer) => {
      output = (output + chunk).slice(-20_000);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], child, output: () => output });
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code}:\n${output}`));
    });
  });
}

/** The webhook receiver: checks each delivery's x-webhook-signature, notes the first arrival per event. */
class Receiver {
  readonly firstAt = new Map<string, number>();
  duplicates = 0;
  badSignatures = 0;
  private server?: http.Server;
  port = 0;

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const expected = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(raw).digest('hex');
        if (req.headers['x-webhook-signature'] !== expected) {
          this.badSignatures++;
          res.writeHead(401).end();
          return;
        }
        const body = JSON.parse(raw.toString('utf8')) as { data?: { id?: string } };
        const id = body.data?.id;
        if (id) {
          if (this.firstAt.has(id)) this.duplicates++;
          else this.firstAt.set(id, Date.now());
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

/** The SSE client: reconnects with its last id; an event of a record acknowledged before the connection opened is a replay. */
class StreamClient {
  readonly seen = new Set<string>();
  live = 0;
  replayed = 0;
  reconnects = 0;
  private lastId?: string;
  private req?: http.ClientRequest;
  private running = true;

  constructor(
    private readonly url: string,
    private readonly auth: Record<string, string>,
    private readonly ackedAt: Map<string, number>,
  ) {}

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.running = false;
    this.req?.destroy();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await this.once().catch(() => undefined);
      if (!this.running) return;
      this.reconnects++;
      await sleep(1000);
    }
  }

  private once(): Promise<void> {
    return new Promise((resolve) => {
      const openedAt = Date.now();
      const headers: Record<string, string> = { ...this.auth, Accept: 'text/event-stream', ...(this.lastId ? { 'Last-Event-ID': this.lastId } : {}) };
      const req = http.request(`${this.url}/api/v1/stream/tasks`, { headers }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return resolve();
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const id = /^id: (.+)$/m.exec(block)?.[1];
            const data = /^data: (.+)$/m.exec(block)?.[1];
            if (id) this.lastId = id;
            if (!data) continue;
            const message = JSON.parse(data) as { type?: string; record?: { id?: string } };
            if (message.type !== 'task.created' || !message.record?.id) continue;
            const recordId = message.record.id;
            if (this.seen.has(recordId)) continue;
            this.seen.add(recordId);
            const acked = this.ackedAt.get(recordId);
            if (acked !== undefined && acked < openedAt) this.replayed++;
            else this.live++;
          }
        });
        res.on('end', () => resolve());
        res.on('error', () => resolve());
      });
      req.on('error', () => resolve());
      req.end();
      this.req = req;
    });
  }
}

interface Owned {
  deleted: boolean;
  /** A delete whose answer never came: the record may or may not be there. */
  uncertain: boolean;
}

export async function soak(options: { minutes: number; log?: (line: string) => void }): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const durationMs = options.minutes * 60_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-soak-'));
  const admin = { email: 'soak-admin@bench.local', password: `soak-${randomBytes(12).toString('hex')}` };
  const server = await startServer(dataDir, admin);
  const api = { url: server.url };
  const receiver = new Receiver();
  const faults: { from: number; to: number }[] = [];
  const byOperation: Record<string, number> = {};
  const acknowledged = { creates: 0, deletes: 0, updates: 0, imports: 0, uploads: 0 };
  const errors = { fiveXxOutsideFaults: 0, fiveXxDuringFaults: 0, transportErrors: 0, examples: [] as string[] };
  const ledger = new Map<string, Owned>();
  const ackedAt = new Map<string, number>();
  const rss = { node: [] as number[], engine: [] as number[] };
  const enginePid = () => {
    const file = join(dataDir, 'dynamodb-local.pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : undefined;
  };
  const sample = () => {
    const node = rssMiB(server.child.pid);
    const engine = rssMiB(enginePid());
    if (node) rss.node.push(node);
    if (engine) rss.engine.push(engine);
  };
  let requests = 0;
  let stream: StreamClient | undefined;
  let sampler: NodeJS.Timeout | undefined;
  const engine: SoakResult['engine'] = { killedAt: 0, recoveredAfterMs: undefined, lines: [] };
  try {
    await receiver.start();
    const { key: auth } = await apiKeyOf(api, admin, 'soak');
    await send(api, 'POST', '/api/v1/webhooks', auth, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['task.created'], secret: SECRET });
    stream = new StreamClient(server.url, auth, ackedAt);
    stream.start();
    sample();
    sampler = setInterval(sample, 5_000);

    const started = Date.now();
    const end = started + durationMs;
    const inFault = (at: number) => faults.some((f) => at >= f.from && at <= f.to + 5_000);

    /** One request, counted; a 5xx is counted inside or outside a fault window; no answer gives undefined. */
    const call = async (operation: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<BenchReply | undefined> => {
      requests++;
      byOperation[operation] = (byOperation[operation] ?? 0) + 1;
      const at = Date.now();
      try {
        const reply = await send(api, method, path, { ...auth, ...headers }, body);
        if (reply.status >= 500) {
          if (inFault(at) || inFault(Date.now())) errors.fiveXxDuringFaults++;
          else {
            errors.fiveXxOutsideFaults++;
            if (errors.examples.length < 10) errors.examples.push(`${method} ${path.split('?')[0]}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
          }
          if (reply.status === 503) await sleep(Number(reply.headers.get('retry-after') ?? 1) * 1000);
        }
        return reply;
      } catch (error) {
        errors.transportErrors++;
        if (!inFault(at) && errors.examples.length < 10) errors.examples.push(`${method} ${path.split('?')[0]}: ${(error as Error).message}`);
        return undefined;
      }
    };

    const upload = async (worker: number) => {
      const size = (1 + Math.floor(Math.random() * 4)) * 1024 * 1024 + Math.floor(Math.random() * 1024 * 1024);
      const png = Buffer.concat([Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64'), randomBytes(size)]);
      const boundary = `----soak${randomBytes(8).toString('hex')}`;
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="soak-${worker}.png"\r\nContent-Type: image/png\r\n\r\n`),
        png.subarray(0, Math.min(png.length, 4_600_000)),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      requests++;
      byOperation.upload = (byOperation.upload ?? 0) + 1;
      const at = Date.now();
      try {
        const response = await fetch(`${server.url}/api/v1/upload`, { method: 'POST', headers: { ...auth, 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body: new Uint8Array(body) });
        await response.arrayBuffer();
        if (response.status === 201) acknowledged.uploads++;
        else if (response.status >= 500) {
          if (inFault(at) || inFault(Date.now())) errors.fiveXxDuringFaults++;
          else errors.fiveXxOutsideFaults++;
        }
      } catch {
        errors.transportErrors++;
      }
    };

    const worker = async (n: number) => {
      const mine: string[] = [];
      let i = 0;
      while (Date.now() < end) {
        i++;
        const roll = Math.random();
        const live = mine.filter((id) => !ledger.get(id)!.deleted);
        const pick = () => live[Math.floor(Math.random() * live.length)];
        if (roll < 0.3 || live.length < 3) {
          const reply = await call('create', 'POST', '/api/v1/tasks', { title: `soak ${n}-${i}`, status: 'todo', priority: 'medium' });
          if (reply?.status === 201) {
            const id = reply.body.data.id as string;
            ackedAt.set(id, Date.now());
            ledger.set(id, { deleted: false, uncertain: false });
            mine.push(id);
            acknowledged.creates++;
          }
        } else if (roll < 0.5) {
          await call('read', 'GET', `/api/v1/tasks/${pick()}`);
        } else if (roll < 0.65) {
          await call('list', 'GET', `/api/v1/tasks?status=todo&priority=medium&limit=20`);
        } else if (roll < 0.8) {
          const id = pick();
          const read = await call('read', 'GET', `/api/v1/tasks/${id}`);
          const etag = read?.status === 200 ? read.headers.get('etag') : undefined;
          if (etag) {
            const reply = await call('update', 'PATCH', `/api/v1/tasks/${id}`, { title: `soak ${n}-${i} updated` }, { 'If-Match': etag });
            if (reply?.status === 200) acknowledged.updates++;
          }
        } else if (roll < 0.92) {
          const id = pick();
          const owned = ledger.get(id)!;
          const reply = await call('delete', 'DELETE', `/api/v1/tasks/${id}`);
          if (reply && (reply.status === 200 || reply.status === 204)) {
            owned.deleted = true;
            owned.uncertain = false;
            acknowledged.deletes++;
          } else if (!reply || reply.status >= 500) owned.uncertain = true;
        } else if (roll < 0.96) {
          const tasks = Array.from({ length: 100 }, (_, k) => ({ title: `soak import ${n}-${i}-${k}`, status: 'todo', priority: 'low' }));
          const reply = await call('import', 'POST', '/api/v1/import/tasks', { tasks }, { 'Idempotency-Key': `soak-${n}-${i}-${randomBytes(4).toString('hex')}` });
          if (reply?.status === 201) acknowledged.imports++;
        } else {
          await upload(n);
        }
      }
    };

    const faultsDone = (async () => {
      // The engine killed at 30 % of the run.
      await sleep(Math.max(0, started + durationMs * 0.3 - Date.now()));
      const pid = enginePid();
      if (pid) {
        log(`soak: kill -9 of DynamoDB Local (pid ${pid})`);
        const fault = { from: Date.now(), to: Number.MAX_SAFE_INTEGER };
        faults.push(fault);
        engine.killedAt = Math.round((fault.from - started) / 1000);
        process.kill(pid, 'SIGKILL');
        while (Date.now() - fault.from < 120_000) {
          await sleep(250);
          const health = await fetch(`${server.url}/api/health`).then((r) => r.status, () => 0);
          if (health === 200) break;
        }
        fault.to = Date.now();
        engine.recoveredAfterMs = fault.to - fault.from;
        // What npm start said about it (its supervisor's lines), for the report.
        engine.lines = server.output().split('\n').filter((l) => /^(DynamoDB Local|the local S3 server|the webhook workers) /.test(l));
        log(`soak: serving again after ${engine.recoveredAfterMs} ms`);
      }
      // The receiver down from 55 % of the run, for 60 s (a sixth of a short run at most).
      await sleep(Math.max(0, started + durationMs * 0.55 - Date.now()));
      const outage = Math.min(60_000, durationMs / 6);
      log(`soak: webhook receiver down for ${Math.round(outage / 1000)} s`);
      await receiver.stop();
      await sleep(outage);
      await receiver.start();
    })();

    await Promise.all([...Array.from({ length: WORKERS }, (_, n) => worker(n)), faultsDone]);
    log(`soak: load done (${requests} requests); waiting for deliveries and the stream`);

    // Deliveries and the stream catch up (retries after the outage come back within 15 s).
    const created = [...ledger.keys()];
    const drainEnd = Date.now() + 120_000;
    while (Date.now() < drainEnd && created.some((id) => !receiver.firstAt.has(id) || !stream!.seen.has(id))) await sleep(1000);

    // The ledger checked over HTTP, 100 ids a request.
    const present = new Set<string>();
    for (let k = 0; k < created.length; k += 100) {
      const chunk = created.slice(k, k + 100);
      const reply = await send(api, 'GET', `/api/v1/tasks?ids=${chunk.join(',')}&limit=100&fields=title`, auth);
      if (reply.status !== 200) throw new Error(`ledger check: ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
      for (const record of reply.body.data as { id: string }[]) present.add(record.id);
    }
    let lost = 0;
    let resurrected = 0;
    const examples: string[] = [];
    for (const [id, owned] of ledger) {
      if (owned.uncertain) continue;
      if (!owned.deleted && !present.has(id)) {
        lost++;
        if (examples.length < 10) examples.push(`acknowledged create ${id} missing`);
      }
      if (owned.deleted && present.has(id)) {
        resurrected++;
        if (examples.length < 10) examples.push(`acknowledged delete of ${id} undone`);
      }
    }
    const lags = created.filter((id) => receiver.firstAt.has(id)).map((id) => receiver.firstAt.get(id)! - ackedAt.get(id)!).sort((a, b) => a - b);
    sample();
    const summary = (values: number[]) => ({ first: values[0] ?? 0, max: Math.max(0, ...values), last: values.at(-1) ?? 0 });
    return {
      minutes: options.minutes,
      requests,
      byOperation,
      acknowledged,
      lost,
      resurrected,
      examples,
      stream: { live: stream.live, replayed: stream.replayed, missing: created.filter((id) => !stream!.seen.has(id)).length, reconnects: stream.reconnects },
      webhooks: {
        expected: created.length,
        delivered: created.filter((id) => receiver.firstAt.has(id)).length,
        missing: created.filter((id) => !receiver.firstAt.has(id)).length,
        duplicates: receiver.duplicates,
        badSignatures: receiver.badSignatures,
        lagMs: { p50: percentile(lags, 50), p95: percentile(lags, 95), p99: percentile(lags, 99), max: lags.at(-1) ?? NaN },
      },
      errors,
      engine,
      rssMiB: { node: summary(rss.node), engine: summary(rss.engine) },
    };
  } finally {
    if (sampler) clearInterval(sampler);
    stream?.stop();
    await receiver.stop();
    await new Promise<void>((resolve) => {
      if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
      server.child.once('exit', () => resolve());
      server.child.kill('SIGTERM');
    });
    rmSync(dataDir, { recursive: true, force: true });
  }
}
