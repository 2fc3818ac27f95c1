/**
 * Import scenario (issue 6), through HTTP on the local gateway and DynamoDB Local:
 * POST /api/v1/import/tasks with 100 tasks (mixed status and priority, an assignee, notify on:
 * the most items per record), every SDK command counted by a middleware on the process's
 * DynamoDB client (the gateway runs the handlers in this process).
 * Target: at most 4 DynamoDB write requests per 25 records on the records/events tables.
 * Times: one import of 100, and 10 imports of 100 one after another.
 */
import { db, tableName } from '../../shared/data/client.js';
import { round, summarize } from '../stats.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';

export const order = 40;

async function call(runtime: LocalRuntime, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${runtime.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function credentials(runtime: LocalRuntime): Promise<{ headers: Record<string, string>; email: string }> {
  const login = await fetch(`${runtime.url}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(runtime.admin) });
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
  const key = await call(runtime, 'POST', '/api/v1/api-keys', { Cookie: cookie }, { name: 'bench import', scopes: ['*'] });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { headers: { Authorization: `Bearer ${key.body.data.key}` }, email: runtime.admin.email };
}

interface Sent {
  name: string;
  table: string;
}

async function record(work: () => Promise<void>): Promise<Sent[]> {
  const sent: Sent[] = [];
  const stack = db().middlewareStack;
  stack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; TransactItems?: unknown[]; RequestItems?: Record<string, unknown> };
      const table = input.TableName ?? (input.TransactItems ? 'transaction' : input.RequestItems ? Object.keys(input.RequestItems).join('+') : '?');
      sent.push({ name: (context.commandName ?? 'unknown').replace(/Command$/, ''), table });
      return next(args);
    },
    { step: 'initialize', name: 'benchImportCounter' },
  );
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    stack.remove('benchImportCounter');
  }
  return sent;
}

const WRITES = /^(TransactWriteItems|BatchWriteItem|PutItem|UpdateItem|DeleteItem|Put|Update|Delete|BatchWrite|TransactWrite)$/;

function tasks(n: number, label: string, email: string): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    title: `${label} ${i}`,
    status: ['todo', 'in_progress', 'completed'][i % 3],
    priority: ['low', 'medium', 'high'][i % 3],
    assigneeEmail: email,
  }));
}

async function importOnce(runtime: LocalRuntime, headers: Record<string, string>, email: string, label: string): Promise<void> {
  const response = await call(runtime, 'POST', '/api/v1/import/tasks', headers, { tasks: tasks(100, label, email), assignUsers: true, notify: true });
  if (response.status !== 201 || response.body.data.imported !== 100) throw new Error(`import: ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const { headers, email } = await credentials(runtime);
  const dataTables = [tableName('records'), tableName('events'), 'transaction'];
  const scenario = 'import: POST /api/v1/import/tasks, 100 tasks (assignUsers, notify) over HTTP on DynamoDB Local';

  // Warm-up (module loading, key cache).
  await importOnce(runtime, headers, email, 'warm');

  let single = 0;
  const sent = await record(async () => {
    const t = performance.now();
    await importOnce(runtime, headers, email, 'single');
    single = performance.now() - t;
  });
  const writes = sent.filter((s) => WRITES.test(s.name) && dataTables.includes(s.table));
  const reads = sent.filter((s) => !WRITES.test(s.name) && (dataTables.includes(s.table) || s.table.includes(tableName('identity'))));
  const perQuarter = writes.length / 4;

  const repeats = Math.max(10, Math.round(10 * context.scale));
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    await importOnce(runtime, headers, email, `repeat ${i}`);
    samples.push(performance.now() - t);
  }
  const total = performance.now() - started;
  const { p50 } = summarize(samples);
  const byName = (list: Sent[]) => [...list.reduce((m, s) => m.set(s.name, (m.get(s.name) ?? 0) + 1), new Map<string, number>())].map(([n, c]) => `${n} ${c}`).join(', ');
  return [
    {
      scenario,
      metric: 'DynamoDB write requests per 25 records',
      value: round(perQuarter, 2),
      target: '≤ 4',
      pass: perQuarter <= 4,
      note: `100 records: ${byName(writes)} (each a TransactWriteItems of ≤ 100 items: records + 8 listing copies + event each, and one ADD per counter partition); reads: ${byName(reads) || 'none'}`,
    },
    { scenario, metric: 'time, 1 import of 100 tasks', value: round(single, 1), unit: 'ms' },
    { scenario, metric: `time, ${repeats} imports of 100 tasks (sequential)`, value: round(total, 0), unit: 'ms', note: `p50 per import ${round(p50, 1)} ms; ${round((repeats * 100) / (total / 1000), 0)} records/s` },
  ];
}
