/**
 * Entity record scenarios (issue 4), through HTTP on the local gateway and DynamoDB Local:
 *
 * (a) DynamoDB requests per operation on tasks (the entity with the most listing partitions:
 *     tenant and owner views × base, status, priority, assignee), every SDK command counted by a
 *     middleware on the process's DynamoDB client (the gateway runs the handlers in this process).
 *     Targets: READ = 1 read of the record; CREATE, UPDATE, DELETE = 1 TransactWriteItems each.
 *     The stack's own requests (rate-limit counter; the key is cached) go to other tables and are
 *     reported apart.
 * (b) requests/s and p50/p99 of each operation, 8 requests in flight.
 */
import { tableName } from '../../shared/data/client.js';
import { round, summarize } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';
import { recordCommands } from '../sdk-commands.js';

export const order = 30;

const TASKS = '/api/v1/tasks';
const CONCURRENCY = 8;

interface Sent {
  name: string;
  table: string;
}

async function call(runtime: LocalRuntime, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${runtime.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

async function expectStatus<T extends { status: number; body: unknown }>(promise: Promise<T>, status: number, what: string): Promise<T> {
  const result = await promise;
  if (result.status !== status) throw new Error(`${what}: status ${result.status} ${JSON.stringify(result.body)}`);
  return result;
}

async function credentials(runtime: LocalRuntime): Promise<Record<string, string>> {
  const login = await fetch(`${runtime.url}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(runtime.admin) });
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
  const key = await expectStatus(call(runtime, 'POST', '/api/v1/api-keys', { Cookie: cookie }, { name: 'bench entities', scopes: ['*'] }), 201, 'key');
  return { Authorization: `Bearer ${key.body.data.key}` };
}

/** Every SDK command sent while `work` runs, with the table it went to. */
async function record(work: () => Promise<void>): Promise<Sent[]> {
  return (await recordCommands(work)).map(({ name, table }) => ({ name: name.replace(/Command$/, ''), table }));
}

function describeSent(sent: Sent[], requests: number): { data: Map<string, number>; other: string } {
  const records = tableName('records');
  const data = new Map<string, number>();
  const other = new Map<string, number>();
  for (const s of sent) {
    const target = s.table === records || s.table === 'transaction' ? data : other;
    target.set(s.name, (target.get(s.name) ?? 0) + 1 / requests);
  }
  const text = [...other].map(([n, c]) => `${n} ${round(c, 2)}`).join(', ') || 'none';
  return { data, other: text };
}

function text(counts: Map<string, number>): string {
  return [...counts].map(([n, c]) => `${n} ${round(c, 2)}`).join(', ') || 'none';
}

async function commandCounts(runtime: LocalRuntime, headers: Record<string, string>, scale: number): Promise<BenchRow[]> {
  const scenario = '(a) entities: DynamoDB requests per operation on tasks (HTTP, counted in-process)';
  const n = Math.max(10, Math.round(20 * scale));
  const me = (await expectStatus(call(runtime, 'GET', '/api/v1/users/me', headers), 200, 'me')).body.data.id as string;
  const ids: string[] = [];
  const create = describeSent(
    await record(async () => {
      for (let i = 0; i < n; i++) ids.push((await expectStatus(call(runtime, 'POST', TASKS, headers, { title: `Bench ${i}`, assigneeId: me }), 201, 'create')).body.data.id);
    }),
    n,
  );
  const read = describeSent(
    await record(async () => {
      for (const id of ids) await expectStatus(call(runtime, 'GET', `${TASKS}/${id}`, headers), 200, 'read');
    }),
    n,
  );
  const update = describeSent(
    await record(async () => {
      for (const id of ids) await expectStatus(call(runtime, 'PATCH', `${TASKS}/${id}`, headers, { status: 'completed' }), 200, 'update');
    }),
    n,
  );
  const list = describeSent(
    await record(async () => {
      for (let i = 0; i < n; i++) await expectStatus(call(runtime, 'GET', `${TASKS}?limit=20`, headers), 200, 'list');
    }),
    n,
  );
  const remove = describeSent(
    await record(async () => {
      for (const id of ids) await expectStatus(call(runtime, 'DELETE', `${TASKS}/${id}`, headers), 200, 'delete');
    }),
    n,
  );
  const one = (counts: Map<string, number>, name: string) => round(counts.get(name) ?? 0, 6) === 1;
  const only = (counts: Map<string, number>, names: string[]) => [...counts.keys()].every((k) => names.includes(k));
  const note = (what: string, other: string) => `${n} requests; ${what}; outside the records table: ${other}`;
  return [
    {
      scenario,
      metric: 'READ by id',
      value: text(read.data),
      target: '1 read',
      pass: one(read.data, 'GetItem') && only(read.data, ['GetItem']),
      note: note('strongly consistent GetItem of the record, tenant/owner checked on it', read.other),
    },
    {
      scenario,
      metric: 'CREATE',
      value: text(create.data),
      target: '1 TransactWriteItems',
      pass: one(create.data, 'TransactWriteItems') && only(create.data, ['TransactWriteItems']),
      note: note('18 items in the transaction: record + 8 listing copies + 8 counters + event; the assigneeId check is 1 BatchGetItem on identity', create.other),
    },
    {
      scenario,
      metric: 'UPDATE',
      value: text(update.data),
      target: '1 TransactWriteItems',
      pass: one(update.data, 'TransactWriteItems') && only(update.data, ['TransactWriteItems', 'GetItem']),
      note: note('plus the GetItem of the current version; status todo→completed moves 2 copies and 4 counters', update.other),
    },
    {
      scenario,
      metric: 'DELETE',
      value: text(remove.data),
      target: '1 TransactWriteItems',
      pass: one(remove.data, 'TransactWriteItems') && only(remove.data, ['TransactWriteItems', 'GetItem']),
      note: note('plus the GetItem of the current version', remove.other),
    },
    {
      scenario,
      metric: 'LIST page 1 (limit 20)',
      value: text(list.data),
      target: '1 Query',
      pass: one(list.data, 'Query') && only(list.data, ['Query']),
      note: note('one Query from the counter: total + 20 copies', list.other),
    },
  ];
}

async function load(
  label: string,
  count: number,
  requestAt: (i: number) => Promise<void>,
): Promise<BenchRow[]> {
  const scenario = `(b) entities over HTTP on DynamoDB Local: ${label}`;
  const samples: number[] = [];
  let next = 0;
  let elapsed = 0;
  const sent = await record(async () => {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          const i = next++;
          const t = performance.now();
          await requestAt(i);
          samples.push(performance.now() - t);
        }
      }),
    );
    elapsed = (performance.now() - started) / 1000;
  });
  const { p50, p99 } = summarize(samples);
  const transactions = sent.filter((s) => s.name === 'TransactWriteItems').length;
  const retries = transactions ? `; ${round(transactions / count, 2)} TransactWriteItems sent per request (> 1: retried after a TransactionConflict on a shared counter)` : '';
  const note = `${count} requests, ${CONCURRENCY} in flight${retries}; client, gateway and handlers share one Node process; DynamoDB Local (Java) on the same machine`;
  return [
    { scenario, metric: 'requests/s', value: round(count / elapsed, 0), unit: 'req/s', note },
    { scenario, metric: 'p50', value: round(p50, 2), unit: 'ms' },
    { scenario, metric: 'p99', value: round(p99, 2), unit: 'ms' },
  ];
}

async function throughput(runtime: LocalRuntime, headers: Record<string, string>, scale: number): Promise<BenchRow[]> {
  const writes = Math.max(100, Math.round(400 * scale));
  const reads = Math.max(200, Math.round(1000 * scale));
  const ids: string[] = [];
  const rows: BenchRow[] = [];
  rows.push(
    ...(await load('CREATE POST /api/v1/tasks', writes, async (i) => {
      ids.push((await expectStatus(call(runtime, 'POST', TASKS, headers, { title: `Load ${i}`, priority: i % 2 ? 'high' : 'low' }), 201, 'create')).body.data.id);
    })),
  );
  rows.push(...(await load('READ GET /api/v1/tasks/{id}', reads, async (i) => void (await expectStatus(call(runtime, 'GET', `${TASKS}/${ids[i % ids.length]}`, headers), 200, 'read')))));
  rows.push(...(await load('LIST GET /api/v1/tasks?limit=20', reads, async () => void (await expectStatus(call(runtime, 'GET', `${TASKS}?limit=20`, headers), 200, 'list')))));
  rows.push(
    ...(await load('UPDATE PATCH /api/v1/tasks/{id}', writes, async (i) => void (await expectStatus(call(runtime, 'PATCH', `${TASKS}/${ids[i]}`, headers, { status: 'in_progress' }), 200, 'update')))),
  );
  rows.push(...(await load('DELETE /api/v1/tasks/{id}', writes, async (i) => void (await expectStatus(call(runtime, 'DELETE', `${TASKS}/${ids[i]}`, headers), 200, 'delete')))));
  return rows;
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const headers = await credentials(runtime);
  return [...(await commandCounts(runtime, headers, context.scale)), ...(await throughput(runtime, headers, context.scale))];
}
