/**
 * Authentication scenarios (issue 3):
 *
 * (a) a warm API-key request, in-process through the real middleware stack on DynamoDB Local,
 *     with every SDK command counted by a middleware on the process's DynamoDB client: the key
 *     must cost 0 reads and the request exactly 1 write (the rate-limit counter);
 * (b) the middleware stack's own cost (key from cache, scopes, rate limit, envelope) in-process,
 *     DynamoDB answered by aws-sdk-client-mock: p50 ≤ 0.3 ms;
 * (c) requests/s and p50/p99 of an authenticated GET /api/v1/users/me through HTTP on the local
 *     gateway and DynamoDB Local, with an API key and with a session.
 */
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { hashApiKey } from '../../shared/auth/api-keys.js';
import { createApiHandler } from '../../shared/http/stack.js';
import { matchPath } from '../../shared/routes.js';
import { round, summarize } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';
import { countCommands } from '../sdk-commands.js';

export const order = 10;

const ME = '/api/v1/users/me';
const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'TransactGetItemsCommand']);
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

function event(headers: Record<string, string>, path = ME): APIGatewayProxyEvent {
  const match = matchPath('GET', path);
  return {
    resource: match?.path ?? path,
    path,
    httpMethod: 'GET',
    headers,
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: match && Object.keys(match.params).length ? match.params : null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: 'bench', identity: { sourceIp: '127.0.0.1' } } as never,
  };
}

const lambdaContext = { getRemainingTimeInMillis: () => 29_000 } as unknown as Context;

type Invoke = (e: APIGatewayProxyEvent, c: Context) => Promise<{ statusCode: number }>;

/** The stack with a trivial operation: what the middleware costs, without a handler's own I/O. */
function stackWithTrivialOperation(): Invoke {
  return createApiHandler({ getMe: async (req) => ({ data: { id: req.auth!.user.id } }) }) as unknown as Invoke;
}

async function call(runtime: LocalRuntime, method: string, path: string, options: { cookie?: string; body?: unknown } = {}) {
  const response = await fetch(`${runtime.url}${path}`, {
    method,
    headers: { ...(options.body ? { 'Content-Type': 'application/json' } : {}), ...(options.cookie ? { Cookie: options.cookie } : {}) },
    body: options.body ? JSON.stringify(options.body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return { response, body: JSON.parse(text) as { data: Record<string, unknown> } };
}

async function credentials(runtime: LocalRuntime): Promise<{ cookie: string; key: string }> {
  const login = await call(runtime, 'POST', '/api/v1/auth/login', { body: runtime.admin });
  const cookie = login.response.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
  const created = await call(runtime, 'POST', '/api/v1/api-keys', { cookie, body: { name: 'bench', scopes: ['read'] } });
  return { cookie, key: String(created.body.data.key) };
}

// ---------- (a) ----------

function tally(counts: Map<string, number>, requests: number): { reads: number; writes: number; byType: string } {
  let reads = 0;
  let writes = 0;
  for (const [name, n] of counts) {
    if (READS.has(name)) reads += n;
    if (WRITES.has(name)) writes += n;
  }
  const byType = [...counts].map(([name, n]) => `${name.replace(/Command$/, '')} ${round(n / requests, 2)}`).join(', ') || 'none';
  return { reads: reads / requests, writes: writes / requests, byType };
}

async function warmKeyCommands(runtime: LocalRuntime, key: string, scale: number): Promise<BenchRow[]> {
  const scenario = '(a) warm API-key request, in-process, real stack on DynamoDB Local';
  const stack = stackWithTrivialOperation();
  const { handler: realHandler } = (await import('../../functions/auth/handler.js')) as unknown as { handler: Invoke };
  const withKey = event({ Authorization: `Bearer ${key}` });

  const cold = tally(await countCommands(() => stack(withKey, lambdaContext)), 1);
  const n = Math.max(50, Math.round(200 * scale));
  let statuses = new Set<number>();
  const warm = tally(
    await countCommands(async () => {
      for (let i = 0; i < n; i++) statuses.add((await stack(withKey, lambdaContext)).statusCode);
    }),
    n,
  );
  if (statuses.size !== 1 || !statuses.has(200)) throw new Error(`unexpected statuses ${[...statuses].join(',')}`);
  statuses = new Set();
  const real = tally(
    await countCommands(async () => {
      for (let i = 0; i < n; i++) statuses.add((await realHandler(withKey, lambdaContext)).statusCode);
    }),
    n,
  );
  if (statuses.size !== 1 || !statuses.has(200)) throw new Error(`unexpected statuses ${[...statuses].join(',')}`);

  return [
    { scenario, metric: 'DynamoDB reads per request (key verification)', value: warm.reads, unit: 'reads', target: '0', pass: warm.reads === 0, note: `${n} warm requests; ${warm.byType}` },
    { scenario, metric: 'DynamoDB writes per request', value: warm.writes, unit: 'writes', target: '1 (rate-limit counter)', pass: warm.writes === 1, note: 'lastUsedAt/totalRequests: ≤ 1 write per key per minute, off the response path' },
    { scenario, metric: 'first (cold) request', value: `${cold.reads} reads, ${cold.writes} writes`, note: cold.byType },
    { scenario, metric: 'warm GET /users/me with its real handler', value: `${real.reads} reads, ${real.writes} writes`, note: `${real.byType} (the read is the handler's own user lookup)` },
  ];
}

// ---------- (b) ----------

async function stackCost(scale: number): Promise<BenchRow[]> {
  const scenario = '(b) middleware stack in-process, DynamoDB mocked (aws-sdk-client-mock)';
  const key = `sk_live_${'b'.repeat(36)}ench`;
  const hash = hashApiKey(key);
  const mock = mockClient(DynamoDBDocumentClient);
  try {
    mock.on(GetCommand).callsFake((input: { Key: { pk: string } }) => {
      if (input.Key.pk === `APIKEY#${hash}`) {
        return { Item: { pk: input.Key.pk, sk: 'APIKEY', id: 'key_bench', scopes: ['read'], status: 'active', keyExpiresAt: null, userId: 'usr_bench', tenantId: 'ten_bench' } };
      }
      if (input.Key.pk === 'USER#usr_bench') return { Item: { id: 'usr_bench', tenantId: 'ten_bench', email: 'bench@bench.local', role: 'user' } };
      return {};
    });
    mock.on(UpdateCommand).resolves({ Attributes: { n: 1 } });
    mock.on(PutCommand).resolves({});
    const stack = stackWithTrivialOperation();
    const withKey = event({ Authorization: `Bearer ${key}`, 'User-Agent': 'bench' });
    const warmup = Math.round(2000 * scale);
    const iterations = Math.max(1000, Math.round(10_000 * scale));
    for (let i = 0; i < warmup; i++) await stack(withKey, lambdaContext);
    const samples = new Array<number>(iterations);
    for (let i = 0; i < iterations; i++) {
      const started = performance.now();
      const result = await stack(withKey, lambdaContext);
      samples[i] = performance.now() - started;
      if (result.statusCode !== 200) throw new Error(`status ${result.statusCode}`);
    }
    const { p50, p99, mean } = summarize(samples);
    return [
      { scenario, metric: 'p50', value: round(p50, 4), unit: 'ms', target: '≤ 0.3 ms', pass: p50 <= 0.3, note: `${iterations} requests after ${warmup} warm-up` },
      { scenario, metric: 'p99', value: round(p99, 4), unit: 'ms' },
      { scenario, metric: 'mean', value: round(mean, 4), unit: 'ms' },
    ];
  } finally {
    mock.restore();
  }
}

// ---------- (c) ----------

async function httpLoad(runtime: LocalRuntime, label: string, headers: Record<string, string>, scale: number): Promise<BenchRow[]> {
  const scenario = `(c) GET /api/v1/users/me over HTTP on DynamoDB Local, ${label}`;
  const concurrency = 8;
  const total = Math.max(500, Math.round(3000 * scale));
  const url = `${runtime.url}${ME}`;
  const once = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${label}: status ${response.status}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 200; i++) await once();
  const samples: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        samples.push(await once());
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const { p50, p99 } = summarize(samples);
  const note = `${total} requests, ${concurrency} concurrent; client, gateway and handlers share one Node process; DynamoDB Local (Java) on the same machine`;
  return [
    { scenario, metric: 'requests/s', value: round(total / elapsed, 0), unit: 'req/s', note },
    { scenario, metric: 'p50', value: round(p50, 2), unit: 'ms' },
    { scenario, metric: 'p99', value: round(p99, 2), unit: 'ms' },
  ];
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const { cookie, key } = await credentials(runtime);
  const rows: BenchRow[] = [];
  rows.push(...(await warmKeyCommands(runtime, key, context.scale)));
  rows.push(...(await stackCost(context.scale)));
  rows.push(...(await httpLoad(runtime, 'API key', { Authorization: `Bearer ${key}` }, context.scale)));
  rows.push(...(await httpLoad(runtime, 'session cookie', { Cookie: cookie }, context.scale)));
  return rows;
}
