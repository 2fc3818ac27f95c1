/**
 * Import writes: batched (at most 4 DynamoDB write requests per 25 records), atomic per
 * transaction, and a fault part-way reported per item; the same request retried with the same
 * Idempotency-Key completes it without duplicates. Runs the import handler in process against
 * the test run's DynamoDB Local, counting (and failing) the SDK commands it sends.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { db, dbOnce, tableName } from '../../../shared/data/client.js';
import { lambdaContext, parsed, proxyEvent } from '../../support/events.js';
import { newTenant, type TestTenant } from '../../support/identity.js';

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const { handler: importHandler } = await import('../../../functions/import/handler.js');
const { handler: entitiesHandler } = await import('../../../functions/entities/handler.js');

let tenant: TestTenant;

beforeAll(async () => {
  tenant = await newTenant();
});

afterEach(() => vi.restoreAllMocks());

function call(h: typeof importHandler, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const all: Record<string, string> = { Cookie: tenant.admin.cookie, ...headers };
  if (body !== undefined) all['Content-Type'] = 'application/json';
  return h(proxyEvent({ method, path, headers: all, body: body === undefined ? undefined : JSON.stringify(body) }), lambdaContext()).then(parsed);
}

/**
 * Counts write commands (on both clients: transactions go through the single-attempt one);
 * `failAt` (1-based) makes that TransactWriteItems fail with `fault`, `busyFor` makes the first
 * that many TransactWriteItems fail as DynamoDB Local's lock timeout.
 */
function watch(options: { failAt?: number; fault?: Error; busyFor?: number } = {}) {
  const seen = { transactions: 0, writes: [] as string[] };
  for (const client of [db(), dbOnce()]) {
    const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
    vi.spyOn(client, 'send').mockImplementation((async (command: { constructor: { name: string }; input: any }) => {
      const name = command.constructor.name;
      const dataTable = command.input.TableName === undefined || [tableName('records'), tableName('events'), tableName('history')].includes(command.input.TableName);
      // Writes to the records, events and history tables (authentication and rate limits write elsewhere).
      if (/^(TransactWrite|BatchWrite|Put|Update|Delete)/.test(name) && dataTable) {
        seen.writes.push(name);
      }
      if (command instanceof TransactWriteCommand) {
        seen.transactions += 1;
        if (seen.transactions === options.failAt) throw options.fault ?? Object.assign(new Error('injected'), { name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
        if (seen.transactions <= (options.busyFor ?? 0)) {
          throw Object.assign(new Error('This action timed out because it too long waiting for a lock. This request will succeed in actual DynamoDB API'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
        }
      }
      return send(command);
    }) as never);
  }
  return seen;
}

async function total(): Promise<number> {
  const response = await call(entitiesHandler, 'GET', '/api/v1/tasks');
  return response.body.pagination.total;
}

const tasks = (n: number, label: string) =>
  Array.from({ length: n }, (_, i) => ({ title: `${label} ${i}`, status: ['todo', 'in_progress', 'completed'][i % 3], priority: ['low', 'medium', 'high'][i % 3] }));

describe('import writes', () => {
  it('imports 100 tasks in at most 16 transactions (4 per 25 records), notify included, then one Put of what the import wrote (for its undo)', async () => {
    const seen = watch();
    const response = await call(importHandler, 'POST', '/api/v1/import/tasks', { tasks: tasks(100, 'count'), notify: true });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.imported).toBe(100);
    expect(seen.writes.at(-1)).toBe('PutCommand');
    const transactions = seen.writes.slice(0, -1);
    expect(transactions.every((w) => w === 'TransactWriteCommand')).toBe(true);
    expect(transactions.length).toBeLessThanOrEqual(16);
  });

  it('a fault part-way answers 503 IMPORT_INCOMPLETE with the per-item report; the retry with the same key completes it without duplicates', async () => {
    const before = await total();
    const body = { tasks: tasks(60, 'fault') };
    const key = { 'Idempotency-Key': `fault-${Date.now()}` };

    watch({ failAt: 2 });
    const first = await call(importHandler, 'POST', '/api/v1/import/tasks', body, key);
    vi.restoreAllMocks();

    expect(first.status).toBe(503);
    expect(first.body.code).toBe('IMPORT_INCOMPLETE');
    const report = first.body.data;
    expect(report.imported).toBeGreaterThan(0);
    expect(report.imported + report.failed).toBe(60);
    expect(report.errors.every((e: any) => /not written/.test(e.error))).toBe(true);
    // The counters moved by exactly the records written: each transaction carried its own.
    expect(await total()).toBe(before + report.imported);

    const retry = await call(importHandler, 'POST', '/api/v1/import/tasks', body, key);

    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.body.data).toMatchObject({ imported: 60, failed: 0 });
    const ids = retry.body.data.tasks.map((t: any) => t.id);
    expect(new Set(ids).size).toBe(60);
    for (const task of report.tasks) expect(ids).toContain(task.id);
    expect(await total()).toBe(before + 60);
  });

  it('an engine-busy answer (lock timeout, throttling) is retried in place: 201, every task once', async () => {
    const before = await total();

    const seen = watch({ busyFor: 3 });
    const response = await call(importHandler, 'POST', '/api/v1/import/tasks', { tasks: tasks(30, 'busy'), notify: true });
    vi.restoreAllMocks();

    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({ imported: 30, failed: 0 });
    expect(seen.transactions).toBeGreaterThan(3);
    expect(await total()).toBe(before + 30);
  });
});
