/**
 * A bounded soak of `npm start` (a child process running infra/local/main.ts with its own
 * DynamoDB Local on a DATA_DIR of its own), with faults, checked against a ledger:
 * - 16 workers, each on its own tasks: creates, reads, filtered LISTs, If-Match updates,
 *   deletes, imports of 100, multipart uploads of 1–5 MiB;
 * - one SSE client on /api/v1/stream/tasks throughout, reconnecting with Last-Event-ID;
 * - one webhook receiver (task.created) that checks every delivery's HMAC signature;
 * - faults: 50 slowloris connections at 10 % of the run (a header line every 2 s, never ending
 *   the headers: each must get 408 and be closed); DynamoDB Local killed with kill -9 (its pid
 *   from DATA_DIR/dynamodb-local.pid) at 30 %; the receiver down for 60 s (at most a sixth of the
 *   run) from 55 % (skipped with `receiverOutage: false`); a burst of malformed, too deep and
 *   oversized bodies at 85 % (each must get 400 or 413). All of it on 127.0.0.1.
 * The receiver counts repeats (a `webhook-id` received more than once) and, before answering a
 * repeat, reads the delivery's log entry (consistently, from the engine): whether the delivery had
 * been logged as succeeded before the repeat came.
 * Then the deliveries are given time to arrive and the ledger is checked over HTTP (LIST with
 * ids=): lost = an acknowledged create missing (and not deleted since), resurrected = an
 * acknowledged delete present again. Then a replay from the live client's first id is read to
 * its end: the live stream must carry every create the replay carries (for any it missed, the
 * report gives its position and how long its commit trailed that position). Reported: the
 * figures above, live-stream vs replayed events, delivery lag percentiles (acknowledged create →
 * delivery received) of all creates and of those made outside the fault windows, 5xx outside the
 * fault windows, and the resident memory of the node process and of the engine (first, max, last).
 */
import type { ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../shared/config.js';
import { deliveryIdFor } from '../shared/webhooks/store.js';
import { apiKeyOf, readSseBlocks, send, type BenchReply } from './http.js';
import { startNpmStart } from './npm-start.js';
import { percentile } from './stats.js';

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
  stream: {
    live: number;
    replayed: number;
    /** Creates the live client never received. */
    missing: number;
    /** Of those, the ones a replay carries (what the live stream skipped). */
    skipped: number;
    reconnects: number;
    late: number;
    replay: { carried: number; missingFromReplay: number };
    missingExamples: string[];
  };
  webhooks: {
    expected: number;
    delivered: number;
    missing: number;
    /** The delivery log at the end, by status; deliveries received but not in it; the messages left in the dead-letter queue. */
    log: Record<string, number>;
    unlogged: number;
    deadLettered: number;
    duplicates: number;
    /**
     * Deliveries (by `webhook-id`) received more than once; of them, those whose log said
     * `succeeded` when the repeat arrived (read before answering it), and those whose log could
     * not be read within 4 s.
     */
    repeats: { deliveries: number; afterLoggedSuccess: number; unknown: number; examples: string[] };
    badSignatures: number;
    lagMs: Lag;
    /** Creates acknowledged outside the fault windows (from 10 s before a fault to 5 s after it). */
    steadyLagMs: Lag & { n: number };
    /** Per 20 s of the run (by acknowledgement): creates, median and maximum lag. */
    timeline: string[];
    /** The lag split at the delivery's attempt (its webhook-timestamp, whole seconds): p50 / p95 of each part, ms. */
    split: { beforeAttempt: Percentiles; toFanout: Percentiles; fanoutToAttempt: Percentiles; post: Percentiles };
  };
  /** npm start's warnings and errors, by message, most frequent first. */
  logs: string[];
  slowloris: { connections: number; answered408: number; otherAnswers: number; closedWithinMs: number; stillOpen: number; servedMeanwhile: number };
  badBodies: { sent: number; expected: number; unexpected: string[]; servedMeanwhile: number };
  receiverOutage: boolean;
  errors: { fiveXxOutsideFaults: number; fiveXxDuringFaults: number; transportErrors: number; examples: string[] };
  engine: { killedAt: number; recoveredAfterMs: number | undefined; lines: string[] };
  rssMiB: { node: { first: number; max: number; last: number }; engine: { first: number; max: number; last: number } };
}

interface Percentiles {
  p50: number;
  p95: number;
}

interface Lag {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

function lagOf(sorted: number[]): Lag {
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
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

/** Warnings and errors of npm start counted by message (its JSON log lines' `message`). */
type LogCounts = Map<string, number>;

async function startServer(dataDir: string, admin: { email: string; password: string }): Promise<{ url: string; child: ChildProcess; output: () => string; logCounts: LogCounts }> {
  const { child, listening, output } = startNpmStart(dataDir, admin, {
    S3_ENDPOINT: '',
    LOG_LEVEL: 'WARN',
    ALLOW_INSECURE_WEBHOOKS: '1',
    // Retries come back within the outage's reach: 60 s down must not exhaust them.
    WEBHOOK_RETRY_SCHEDULE: '2,4,8,15,15,15,15,15,15,15,15,15',
  });
  const logCounts: LogCounts = new Map();
  for (const out of [child.stdout!, child.stderr!]) {
    let partial = '';
    out.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const message = /"message":"([^"]{1,120})"/.exec(line)?.[1];
        // The error's first words (ids and numbers blurred), so that alike errors count together.
        const error = /"error":"([^"]{1,80})/.exec(line)?.[1]?.replace(/[0-9a-f-]{8,}|\d+/gi, '#');
        const key = message && (error ? `${message} (${error})` : message);
        if (key) logCounts.set(key, (logCounts.get(key) ?? 0) + 1);
      }
    });
  }
  return { url: await listening, child, output, logCounts };
}

/** A delivery's status in its log, read consistently (undefined when it is not logged), and the client's end. */
interface DeliveryLog {
  status(eventId: string, eventTime: string): Promise<string | undefined>;
  close(): void;
}

/**
 * The webhook receiver: checks each delivery's x-webhook-signature, notes the first arrival per
 * event, and counts repeats of a `webhook-id`, reading the delivery's log before answering one.
 */
class Receiver {
  readonly firstAt = new Map<string, number>();
  /** The first delivery's attempt time (its webhook-timestamp, whole seconds). */
  readonly attemptAt = new Map<string, number>();
  /** The event id of each record's first delivery. */
  readonly eventOf = new Map<string, string>();
  duplicates = 0;
  badSignatures = 0;
  /** Arrivals per webhook-id. */
  readonly arrivals = new Map<string, number>();
  readonly repeats = { deliveries: 0, afterLoggedSuccess: 0, unknown: 0, examples: [] as string[] };
  /** How the repeat's log is read (set once the webhook exists). */
  log?: DeliveryLog;
  private server?: http.Server;
  port = 0;

  /** Arrival `n` (2 or more) of the delivery of `eventId`: its log as it stands before the repeat is answered (read for 4 s at most). */
  private async noteRepeat(eventId: string, eventTime: string | undefined, n: number): Promise<void> {
    if (n === 2) this.repeats.deliveries++;
    const read = this.log && eventTime ? this.log.status(eventId, eventTime).catch(() => 'unreadable') : Promise.resolve('unreadable');
    const status = await Promise.race([read, sleep(4_000).then(() => 'unreadable')]);
    if (status === 'unreadable') this.repeats.unknown++;
    else if (status === 'succeeded' && n === 2) this.repeats.afterLoggedSuccess++;
    if (this.repeats.examples.length < 10) this.repeats.examples.push(`${eventId} arrival ${n} at ${new Date().toISOString().slice(11, 23)}, log ${status ?? 'missing'}`);
  }

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
        const body = JSON.parse(raw.toString('utf8')) as { id?: string; createdAt?: string; data?: { id?: string } };
        const id = body.data?.id;
        const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
        const eventId = String(req.headers['webhook-id'] ?? '');
        const arrival = (this.arrivals.get(eventId) ?? 0) + 1;
        this.arrivals.set(eventId, arrival);
        if (id) {
          if (this.firstAt.has(id)) this.duplicates++;
          else {
            this.firstAt.set(id, Date.now());
            this.attemptAt.set(id, Number(req.headers['webhook-timestamp']) * 1000);
            if (body.id) this.eventOf.set(id, body.id);
          }
        }
        if (arrival > 1) void this.noteRepeat(eventId, body.createdAt, arrival).finally(answer);
        else answer();
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
  /** Creates that came without an id line (late commits, sent by the look-back). */
  late = 0;
  reconnects = 0;
  /** The first id received (the connected message's): a replay from it carries the whole run. */
  firstId?: string;
  /** Connections: when each opened and ended, and the id it resumed from (for the report). */
  readonly connections: { openedAt: number; endedAt?: number; status?: number; from?: string }[] = [];
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
    const connection: (typeof this.connections)[number] = { openedAt: Date.now(), from: this.lastId };
    this.connections.push(connection);
    return new Promise<void>((resolve) => {
      const openedAt = connection.openedAt;
      const headers: Record<string, string> = { ...this.auth, Accept: 'text/event-stream', ...(this.lastId ? { 'Last-Event-ID': this.lastId } : {}) };
      const req = http.request(`${this.url}/api/v1/stream/tasks`, { headers }, (res) => {
        connection.status = res.statusCode;
        if (res.statusCode !== 200) {
          res.resume();
          return resolve();
        }
        readEvents(res, (id, message) => {
          if (id) {
            this.lastId = id;
            this.firstId ??= id;
          }
          if (message.type !== 'task.created' || !message.record?.id) return;
          const recordId = message.record.id;
          if (this.seen.has(recordId)) return;
          this.seen.add(recordId);
          if (!id) this.late++;
          const acked = this.ackedAt.get(recordId);
          if (acked !== undefined && acked < openedAt) this.replayed++;
          else this.live++;
        });
        res.on('end', () => resolve());
        res.on('error', () => resolve());
      });
      req.on('error', () => resolve());
      req.end();
      this.req = req;
    }).finally(() => (connection.endedAt = Date.now()));
  }
}

interface StreamMessage {
  type?: string;
  record?: { id?: string };
}

/** Calls `onMessage` with each message's id (undefined without an id line) and parsed data. */
function readEvents(res: http.IncomingMessage, onMessage: (id: string | undefined, message: StreamMessage) => void): void {
  readSseBlocks(res, (block) => {
    const id = /^id: (.+)$/m.exec(block)?.[1];
    const data = /^data: (.+)$/m.exec(block)?.[1];
    if (data) onMessage(id, JSON.parse(data) as StreamMessage);
  });
}

/**
 * A replay: a stream opened with Last-Event-ID `from`, read until it has carried every id of
 * `wanted` or has been quiet for 10 s (at most 180 s). Gives each created record's position.
 */
function replay(url: string, auth: Record<string, string>, from: string, wanted: ReadonlySet<string>): Promise<Map<string, string>> {
  const positions = new Map<string, string>();
  return new Promise((resolve) => {
    let quiet: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(quiet);
      clearTimeout(limit);
      req.destroy();
      resolve(positions);
    };
    const limit = setTimeout(done, 180_000);
    const req = http.request(`${url}/api/v1/stream/tasks`, { headers: { ...auth, Accept: 'text/event-stream', 'Last-Event-ID': from } }, (res) => {
      if (res.statusCode !== 200) return done();
      quiet = setTimeout(done, 10_000);
      readEvents(res, (id, message) => {
        if (message.type !== 'task.created' || !message.record?.id) return;
        clearTimeout(quiet);
        quiet = setTimeout(done, 10_000);
        positions.set(message.record.id, id ?? '(late)');
        if ([...wanted].every((w) => positions.has(w))) done();
      });
      res.on('end', done);
    });
    req.on('error', done);
    req.end();
  });
}

/**
 * 50 slowloris connections: each sends a request line and then one header line every 2 s,
 * never ending its headers. Each must be answered 408 and closed (the gateway's 10 s header
 * timeout); any still open after 20 s is closed by us and counted.
 */
async function slowloris(port: number, connections = 50): Promise<{ answered408: number; otherAnswers: number; closedWithinMs: number; stillOpen: number }> {
  const results = await Promise.all(
    Array.from(
      { length: connections },
      (_, n) =>
        new Promise<{ status?: number; closedAfterMs?: number }>((resolve) => {
          const opened = Date.now();
          let answer = '';
          const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-${n}: 0\r\n`));
          const drip = setInterval(() => socket.writable && socket.write(`X-Slow: ${Date.now()}\r\n`), 2_000);
          const giveUp = setTimeout(() => finish(false), 20_000);
          const finish = (closed: boolean) => {
            clearInterval(drip);
            clearTimeout(giveUp);
            socket.destroy();
            const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]) || undefined;
            resolve({ status, closedAfterMs: closed ? Date.now() - opened : undefined });
          };
          socket.setEncoding('utf8');
          socket.on('data', (chunk: string) => (answer += chunk));
          socket.on('close', () => finish(true));
          socket.on('error', () => undefined);
        }),
    ),
  );
  return {
    answered408: results.filter((r) => r.status === 408).length,
    otherAnswers: results.filter((r) => r.status !== undefined && r.status !== 408).length,
    closedWithinMs: Math.max(0, ...results.map((r) => r.closedAfterMs ?? 0)),
    stillOpen: results.filter((r) => r.closedAfterMs === undefined).length,
  };
}

/** A body declared `length` bytes with Expect: 100-continue; the status answered, without sending any of it. */
function declaredOnly(url: string, path: string, auth: Record<string, string>, length: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request(`${url}${path}`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json', 'Content-Length': String(length), Expect: '100-continue' } });
    const timer = setTimeout(() => {
      req.destroy();
      resolve('no answer in 15 s');
    }, 15_000);
    req.on('continue', () => {
      clearTimeout(timer);
      req.destroy();
      resolve('100 Continue');
    });
    req.on('response', (res) => {
      clearTimeout(timer);
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      req.destroy();
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      resolve(error.message);
    });
    req.flushHeaders();
  });
}

/**
 * The burst of bad bodies, 60 at once: 20 malformed JSON (400), 20 nested 100 levels (400, the
 * limit is 64), 10 of 6.5 MB sent whole (413: the JSON limit is 6,225,920 bytes) and 10 declaring
 * 12 MB with Expect: 100-continue (413 before any of it is sent).
 */
async function badBodies(url: string, auth: Record<string, string>): Promise<{ sent: number; expected: number; unexpected: string[] }> {
  const path = '/api/v1/tasks';
  const post = async (body: string): Promise<number | string> => {
    try {
      const response = await fetch(`${url}${path}`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body });
      await response.arrayBuffer();
      return response.status;
    } catch (error) {
      return (error as Error).message;
    }
  };
  const big = JSON.stringify({ title: 'x'.repeat(6_500_000) });
  const deep = `{"title":"deep","x":${'['.repeat(100)}${']'.repeat(100)}}`;
  const cases: { want: number; run: () => Promise<number | string>; what: string }[] = [
    ...Array.from({ length: 20 }, (_, k) => ({ want: 400, what: 'malformed JSON', run: () => post(`{"title": "broken ${k}", `) })),
    ...Array.from({ length: 20 }, () => ({ want: 400, what: 'JSON nested 100 levels', run: () => post(deep) })),
    ...Array.from({ length: 10 }, () => ({ want: 413, what: '6.5 MB body', run: () => post(big) })),
    ...Array.from({ length: 10 }, () => ({ want: 413, what: '12 MB declared, Expect: 100-continue', run: () => declaredOnly(url, path, auth, 12_000_000) })),
  ];
  const answers = await Promise.all(cases.map((c) => c.run()));
  const unexpected = cases.flatMap((c, k) => (answers[k] === c.want ? [] : [`${c.what}: ${answers[k]}`]));
  return { sent: cases.length, expected: cases.length - unexpected.length, unexpected: unexpected.slice(0, 10) };
}

/**
 * Reads a delivery's log entry from the engine of `dataDir` (its endpoint file is read at each
 * call: the engine may have been restarted), consistently, by the delivery's deterministic id.
 */
function deliveryLog(dataDir: string, webhookId: string): DeliveryLog {
  let client: { endpoint: string; doc: DynamoDBDocumentClient } | undefined;
  const status = async (eventId: string, eventTime: string) => {
    const endpoint = readFileSync(join(dataDir, 'dynamodb-local.endpoint'), 'utf8').trim();
    if (client?.endpoint !== endpoint) {
      client?.doc.destroy();
      const base = new DynamoDBClient({ endpoint, region: config().region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
      client = { endpoint, doc: DynamoDBDocumentClient.from(base) };
    }
    const key = { pk: `WEBHOOK#${webhookId}`, sk: `DELIVERY#${deliveryIdFor(webhookId, eventId, eventTime)}` };
    const { Item } = await client.doc.send(new GetCommand({ TableName: config().tables.webhooks, Key: key, ConsistentRead: true, ProjectionExpression: '#s', ExpressionAttributeNames: { '#s': 'status' } }));
    return Item?.status as string | undefined;
  };
  return { status, close: () => client?.doc.destroy() };
}

/** Messages a local queue's journal holds (sent and not deleted), read without opening the queue its server has open. */
function liveMessages(journal: string): number {
  if (!existsSync(journal)) return 0;
  const live = new Set<string>();
  for (const line of readFileSync(journal, 'utf8').split('\n')) {
    try {
      const entry = JSON.parse(line) as { op: string; id?: string; m?: { id: string } };
      if (entry.op === 'send') live.add(entry.m!.id);
      else if (entry.op === 'del') live.delete(entry.id!);
    } catch {
      // an empty or cut line
    }
  }
  return live.size;
}

interface Owned {
  deleted: boolean;
  /** A delete whose answer never came: the record may or may not be there. */
  uncertain: boolean;
}

export async function soak(options: { minutes: number; receiverOutage?: boolean; engineKill?: boolean; log?: (line: string) => void }): Promise<SoakResult> {
  const receiverOutage = options.receiverOutage ?? true;
  const engineKill = options.engineKill ?? true;
  const log = options.log ?? (() => undefined);
  const durationMs = options.minutes * 60_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-soak-'));
  const admin = { email: 'soak-admin@bench.local', password: `soak-${randomBytes(12).toString('hex')}` };
  const server = await startServer(dataDir, admin);
  const api = { url: server.url };
  const receiver = new Receiver();
  const faults: { from: number; to: number }[] = [];
  /** The windows whose creates the steady delivery lag leaves out: the engine's outage and the receiver's. */
  const lagFaults: { from: number; to: number }[] = [];
  let served = 0;
  const slow: SoakResult['slowloris'] = { connections: 0, answered408: 0, otherAnswers: 0, closedWithinMs: 0, stillOpen: 0, servedMeanwhile: 0 };
  const bad: SoakResult['badBodies'] = { sent: 0, expected: 0, unexpected: [], servedMeanwhile: 0 };
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
  let webhookId: string | undefined;
  let stream: StreamClient | undefined;
  let sampler: NodeJS.Timeout | undefined;
  const engine: SoakResult['engine'] = { killedAt: 0, recoveredAfterMs: undefined, lines: [] };
  try {
    await receiver.start();
    const { key: auth } = await apiKeyOf(api, admin, 'soak');
    const hook = await send(api, 'POST', '/api/v1/webhooks', auth, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['task.created'], secret: SECRET });
    webhookId = hook.body?.data?.id as string | undefined;
    if (webhookId) receiver.log = deliveryLog(dataDir, webhookId);
    stream = new StreamClient(server.url, auth, ackedAt);
    stream.start();
    // The load starts once the stream is open: a change made before would be neither live nor in
    // a replay from the stream's first id.
    for (const until = Date.now() + 60_000; !stream.firstId && Date.now() < until; ) await sleep(100);
    if (!stream.firstId) throw new Error('soak: the stream did not open within 60 s');
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
        if (reply.status < 500) served++;
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
      // 50 slowloris connections at 10 % of the run.
      await sleep(Math.max(0, started + durationMs * 0.1 - Date.now()));
      log('soak: 50 slowloris connections');
      const servedBefore = served;
      const port = Number(new URL(server.url).port);
      Object.assign(slow, await slowloris(port, 50), { connections: 50 });
      slow.servedMeanwhile = served - servedBefore;
      log(`soak: slowloris: ${slow.answered408} answered 408, all closed within ${slow.closedWithinMs} ms, ${slow.stillOpen} still open; ${slow.servedMeanwhile} requests served meanwhile`);
      // The engine killed at 30 % of the run.
      await sleep(Math.max(0, started + durationMs * 0.3 - Date.now()));
      const pid = engineKill ? enginePid() : undefined;
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
        lagFaults.push(fault);
        engine.recoveredAfterMs = fault.to - fault.from;
        // What npm start said about it (its supervisor's lines), for the report.
        engine.lines = server.output().split('\n').filter((l) => /^(DynamoDB Local|the local S3 server|the webhook workers) /.test(l));
        log(`soak: serving again after ${engine.recoveredAfterMs} ms`);
      }
      // The receiver down from 55 % of the run, for 60 s (a sixth of a short run at most).
      await sleep(Math.max(0, started + durationMs * 0.55 - Date.now()));
      if (receiverOutage) {
        const outage = Math.min(60_000, durationMs / 6);
        log(`soak: webhook receiver down for ${Math.round(outage / 1000)} s`);
        const window = { from: Date.now(), to: Date.now() + outage };
        lagFaults.push(window);
        await receiver.stop();
        await sleep(outage);
        await receiver.start();
        window.to = Date.now();
      }
      // The burst of malformed, too deep and oversized bodies at 85 %.
      await sleep(Math.max(0, started + durationMs * 0.85 - Date.now()));
      log('soak: a burst of malformed and oversized bodies');
      const servedBeforeBurst = served;
      Object.assign(bad, await badBodies(server.url, auth));
      bad.servedMeanwhile = served - servedBeforeBurst;
      log(`soak: bad bodies: ${bad.expected} of ${bad.sent} answered as expected; ${bad.servedMeanwhile} requests served meanwhile`);
    })();

    await Promise.all([...Array.from({ length: WORKERS }, (_, n) => worker(n)), faultsDone]);
    log(`soak: load done (${requests} requests); waiting for deliveries and the stream`);

    // Deliveries and the stream catch up (at most 240 s; retries after the outage come back within 15 s).
    const created = [...ledger.keys()];
    const drainEnd = Date.now() + 240_000;
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
    const delivered = created.filter((id) => receiver.firstAt.has(id));
    const lags = delivered.map((id) => receiver.firstAt.get(id)! - ackedAt.get(id)!).sort((a, b) => a - b);
    const steady = delivered.filter((id) => !lagFaults.some((f) => ackedAt.get(id)! >= f.from - 10_000 && ackedAt.get(id)! <= f.to + 5_000));
    const steadyLags = steady.map((id) => receiver.firstAt.get(id)! - ackedAt.get(id)!).sort((a, b) => a - b);
    const sorted = (values: number[]) => values.sort((a, b) => a - b);
    const beforeAttempt = sorted(delivered.map((id) => receiver.attemptAt.get(id)! - ackedAt.get(id)!));
    const post = sorted(delivered.map((id) => receiver.firstAt.get(id)! - receiver.attemptAt.get(id)!));
    const split: SoakResult['webhooks']['split'] = {
      beforeAttempt: { p50: percentile(beforeAttempt, 50), p95: percentile(beforeAttempt, 95) },
      toFanout: { p50: NaN, p95: NaN },
      fanoutToAttempt: { p50: NaN, p95: NaN },
      post: { p50: percentile(post, 50), p95: percentile(post, 95) },
    };
    log(`soak: lag before the attempt p50 ${split.beforeAttempt.p50} ms, p95 ${split.beforeAttempt.p95} ms; attempt → received p50 ${split.post.p50} ms, p95 ${split.post.p95} ms (webhook-timestamp: whole seconds)`);
    // When the fan-out logged each delivery (its createdAt), read back through the API.
    const fannedOutAt = new Map<string, number>();
    const logStatuses: Record<string, number> = {};
    for (let cursor: string | undefined, pages = 0; webhookId && pages < 1000; pages++) {
      const reply = await send(api, 'GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, auth);
      if (reply.status !== 200) break;
      for (const d of reply.body.data as { eventId: string; createdAt: string; status: string }[]) {
        fannedOutAt.set(d.eventId, Date.parse(d.createdAt));
        logStatuses[d.status] = (logStatuses[d.status] ?? 0) + 1;
      }
      cursor = reply.body.pagination?.nextCursor ?? undefined;
      if (!cursor) break;
    }
    const withFanout = delivered.filter((id) => fannedOutAt.has(receiver.eventOf.get(id) ?? ''));
    const toFanout = sorted(withFanout.map((id) => fannedOutAt.get(receiver.eventOf.get(id)!)! - ackedAt.get(id)!));
    const fanoutToAttempt = sorted(withFanout.map((id) => receiver.attemptAt.get(id)! - fannedOutAt.get(receiver.eventOf.get(id)!)!));
    split.toFanout = { p50: percentile(toFanout, 50), p95: percentile(toFanout, 95) };
    split.fanoutToAttempt = { p50: percentile(fanoutToAttempt, 50), p95: percentile(fanoutToAttempt, 95) };
    log(`soak: ${withFanout.length} deliveries: create → fan-out p50 ${percentile(toFanout, 50)} ms, p95 ${percentile(toFanout, 95)} ms; fan-out → attempt p50 ${percentile(fanoutToAttempt, 50)} ms, p95 ${percentile(fanoutToAttempt, 95)} ms`);
    const buckets = new Map<number, number[]>();
    for (const id of delivered) {
      const bucket = Math.floor((ackedAt.get(id)! - started) / 20_000);
      buckets.set(bucket, [...(buckets.get(bucket) ?? []), receiver.firstAt.get(id)! - ackedAt.get(id)!]);
    }
    const timeline = [...buckets.entries()]
      .sort(([a], [b]) => a - b)
      .map(([bucket, values]) => {
        values.sort((a, b) => a - b);
        return `${bucket * 20}–${bucket * 20 + 20} s: ${values.length} creates, lag p50 ${(percentile(values, 50) / 1000).toFixed(1)} s, max ${(values.at(-1)! / 1000).toFixed(1)} s`;
      });
    log(`soak: delivery lag by time of the create: ${timeline.join('; ')}`);

    // The live stream against a replay from its first id: the replay carries every create.
    const missingLive = created.filter((id) => !stream!.seen.has(id));
    const replayed = stream.firstId ? await replay(server.url, auth, stream.firstId, new Set(created)) : new Map<string, string>();
    const missingExamples = missingLive.slice(0, 10).map((id) => {
      const position = replayed.get(id);
      const at = (ms: number) => `${((ms - started) / 1000).toFixed(1)} s`;
      if (!position || position === '(late)') return `${id}: not in the replay either`;
      const stamped = Date.parse(position.slice(0, 24));
      return `${id}: stamped at ${at(stamped)}, acknowledged ${ackedAt.get(id)! - stamped} ms after its stamp`;
    });
    const connections = stream.connections.map((c) => `${((c.openedAt - started) / 1000).toFixed(1)}–${c.endedAt ? ((c.endedAt - started) / 1000).toFixed(1) : '…'} s (${c.status ?? 'no answer'})`);
    if (missingLive.length) log(`soak: stream connections: ${connections.join(', ')}; engine killed at ${engine.killedAt} s`);
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
      stream: {
        live: stream.live,
        replayed: stream.replayed,
        missing: missingLive.length,
        skipped: missingLive.filter((id) => replayed.has(id)).length,
        reconnects: stream.reconnects,
        late: stream.late,
        replay: { carried: created.filter((id) => replayed.has(id)).length, missingFromReplay: created.filter((id) => !replayed.has(id)).length },
        missingExamples,
      },
      webhooks: {
        expected: created.length,
        delivered: created.filter((id) => receiver.firstAt.has(id)).length,
        missing: created.filter((id) => !receiver.firstAt.has(id)).length,
        log: logStatuses,
        unlogged: delivered.length - withFanout.length,
        deadLettered: liveMessages(join(dataDir, 'webhooks', 'deliveries-dlq.jsonl')),
        duplicates: receiver.duplicates,
        repeats: receiver.repeats,
        badSignatures: receiver.badSignatures,
        lagMs: lagOf(lags),
        steadyLagMs: { ...lagOf(steadyLags), n: steadyLags.length },
        timeline,
        split,
      },
      slowloris: slow,
      badBodies: bad,
      receiverOutage,
      logs: [...server.logCounts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([message, n]) => `${n}× ${message}`),
      errors,
      engine,
      rssMiB: { node: summary(rss.node), engine: summary(rss.engine) },
    };
  } finally {
    if (sampler) clearInterval(sampler);
    stream?.stop();
    await receiver.stop();
    receiver.log?.close();
    await new Promise<void>((resolve) => {
      if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
      server.child.once('exit', () => resolve());
      server.child.kill('SIGTERM');
    });
    rmSync(dataDir, { recursive: true, force: true });
  }
}
