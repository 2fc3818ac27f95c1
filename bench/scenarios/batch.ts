/**
 * Batch scenarios (issue 6): "a batch of 20 reads costs no more than 20 single reads plus one
 * authentication".
 *
 * (a) DynamoDB commands, in-process through the real handlers on DynamoDB Local, every SDK command
 *     counted by a middleware on the process's DynamoDB client: one authentication (resolveAuth
 *     alone), one single GET /api/v1/tasks/{id} (its own family's handler), and one POST
 *     /api/v1/batch of 20 such reads; with a session (authentication reads the session and the
 *     user) and with an API key (verification cached: no reads). Target: batch ≤ 20 × single + 1
 *     authentication.
 * (b) Wall time over HTTP on the local gateway: one batch of 20 reads against 20 sequential
 *     single reads.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { resolveAuth } from '../../shared/http/authenticate.js';
import type { ApiRequest } from '../../shared/http/types.js';
import { matchPath, findRoute } from '../../shared/routes.js';
import { round, summarize } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';
import { countCommands } from '../sdk-commands.js';

export const order = 20;

const V1 = '/api/v1';
const BATCH_SIZE = 20;

type Invoke = (e: APIGatewayProxyEvent, c: Context) => Promise<{ statusCode: number; body: string }>;

const lambdaContext = () => ({ getRemainingTimeInMillis: () => 29_000 }) as unknown as Context;

function event(method: string, path: string, headers: Record<string, string>, body?: unknown): APIGatewayProxyEvent {
  const match = matchPath(method, path);
  return {
    resource: match?.path ?? path,
    path,
    httpMethod: method,
    headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: match && Object.keys(match.params).length ? match.params : null,
    stageVariables: null,
    body: body === undefined ? null : JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: { requestId: 'bench-batch', identity: { sourceIp: '127.0.0.1' } } as never,
  };
}

async function call(runtime: LocalRuntime, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${runtime.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return { response, body: JSON.parse(text) as { data: any } };
}

/** A user of its own (fresh rate-limit counters), a key of theirs and 20 of their tasks. */
async function fixture(runtime: LocalRuntime): Promise<{ cookie: string; key: string; taskIds: string[] }> {
  const login = await call(runtime, 'POST', `${V1}/auth/login`, {}, runtime.admin);
  const cookie = login.response.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
  const created = await call(runtime, 'POST', `${V1}/api-keys`, { Cookie: cookie }, { name: 'bench-batch', scopes: ['tasks:read'] });
  const taskIds: string[] = [];
  for (let i = 0; i < BATCH_SIZE; i++) {
    const task = await call(runtime, 'POST', `${V1}/tasks`, { Cookie: cookie }, { title: `bench batch task ${i}`, description: 'x'.repeat(200) });
    taskIds.push(String(task.body.data.id));
  }
  return { cookie, key: String(created.body.data.key), taskIds };
}


function total(counts: Map<string, number>, per = 1): number {
  return round([...counts.values()].reduce((s, n) => s + n, 0) / per, 2);
}

function describeCounts(counts: Map<string, number>, per = 1): string {
  return [...counts].map(([name, n]) => `${name.replace(/Command$/, '')} ${round(n / per, 2)}`).join(', ') || 'none';
}

/** What authenticating a request costs by itself: resolveAuth on a request carrying the credentials. */
async function authentication(headers: Record<string, string>): Promise<Map<string, number>> {
  const cookie = headers.Cookie?.replace(/^session=/, '');
  const req = {
    method: 'GET',
    path: `${V1}/tasks`,
    route: findRoute('GET', `${V1}/{entity}`)!,
    params: {},
    query: {},
    multiQuery: {},
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    cookies: cookie ? { session: cookie } : {},
    body: undefined,
    requestId: 'bench-auth',
    ip: '127.0.0.1',
    userAgent: 'bench',
    responseHeaders: {},
    responseCookies: [],
  } as ApiRequest;
  return countCommands(async () => {
    if (!(await resolveAuth(req))) throw new Error('authentication failed');
  });
}

async function commandCounts(label: string, headers: Record<string, string>, taskIds: string[], scale: number): Promise<BenchRow[]> {
  const scenario = `(a) ${BATCH_SIZE} reads as one batch vs single reads, in-process on DynamoDB Local, ${label}`;
  const { handler: entities } = (await import('../../functions/entities/handler.js')) as unknown as { handler: Invoke };
  const { handler: batch } = (await import('../../functions/batch/handler.js')) as unknown as { handler: Invoke };
  const single = (id: string) => event('GET', `${V1}/tasks/${id}`, headers);
  const batchEvent = event('POST', `${V1}/batch`, headers, { requests: taskIds.map((id, i) => ({ id: `r${i}`, method: 'GET', path: `/tasks/${id}` })) });

  // Warm-up: modules loaded, key cached, so that only steady-state costs are counted.
  await entities(single(taskIds[0]), lambdaContext());
  await batch(batchEvent, lambdaContext());

  const n = Math.max(5, Math.round(20 * scale));
  const auth = await authentication(headers);
  const singles = await countCommands(async () => {
    for (let i = 0; i < n; i++) {
      for (const id of taskIds) {
        const result = await entities(single(id), lambdaContext());
        if (result.statusCode !== 200) throw new Error(`single read: ${result.statusCode} ${result.body}`);
      }
    }
  });
  const batches = await countCommands(async () => {
    for (let i = 0; i < n; i++) {
      const result = await batch(batchEvent, lambdaContext());
      const statuses = (JSON.parse(result.body) as { responses: { status: number }[] }).responses.map((r) => r.status);
      if (result.statusCode !== 200 || statuses.some((s) => s !== 200)) throw new Error(`batch: ${result.statusCode} ${statuses.join(',')}`);
    }
  });

  const authCost = total(auth);
  const singleCost = total(singles, n * taskIds.length);
  const batchCost = total(batches, n);
  const budget = round(BATCH_SIZE * singleCost + authCost, 2);
  return [
    { scenario, metric: 'one authentication', value: authCost, unit: 'commands', note: describeCounts(auth) },
    { scenario, metric: 'one single read GET /tasks/{id}', value: singleCost, unit: 'commands', note: describeCounts(singles, n * taskIds.length) },
    {
      scenario,
      metric: `one batch of ${BATCH_SIZE} reads`,
      value: batchCost,
      unit: 'commands',
      target: `≤ ${BATCH_SIZE} singles + 1 authentication = ${budget}`,
      pass: batchCost <= budget,
      note: `${describeCounts(batches, n)}; mean of ${n} batches`,
    },
  ];
}

async function wallTime(runtime: LocalRuntime, label: string, headers: Record<string, string>, taskIds: string[], scale: number): Promise<BenchRow[]> {
  const scenario = `(b) ${BATCH_SIZE} reads over HTTP on DynamoDB Local, ${label}`;
  const rounds = Math.max(10, Math.round(30 * scale));
  const body = { requests: taskIds.map((id, i) => ({ id: `r${i}`, method: 'GET', path: `/tasks/${id}` })) };
  const batchTimes: number[] = [];
  const singleTimes: number[] = [];
  for (let i = 0; i < rounds + 3; i++) {
    let started = performance.now();
    await call(runtime, 'POST', `${V1}/batch`, headers, body);
    if (i >= 3) batchTimes.push(performance.now() - started);
    started = performance.now();
    for (const id of taskIds) await call(runtime, 'GET', `${V1}/tasks/${id}`, headers);
    if (i >= 3) singleTimes.push(performance.now() - started);
  }
  const b = summarize(batchTimes);
  const s = summarize(singleTimes);
  return [
    { scenario, metric: `one batch of ${BATCH_SIZE}, p50`, value: round(b.p50, 1), unit: 'ms', note: `${rounds} rounds after 3 warm-up; p99 ${round(b.p99, 1)} ms` },
    { scenario, metric: `${BATCH_SIZE} sequential single requests, p50`, value: round(s.p50, 1), unit: 'ms', note: `p99 ${round(s.p99, 1)} ms` },
  ];
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const { cookie, key, taskIds } = await fixture(runtime);
  const session = { Cookie: cookie };
  const apiKey = { Authorization: `Bearer ${key}` };
  return [
    ...(await commandCounts('session cookie', session, taskIds, context.scale)),
    ...(await commandCounts('API key', apiKey, taskIds, context.scale)),
    ...(await wallTime(runtime, 'session cookie', session, taskIds, context.scale)),
  ];
}
