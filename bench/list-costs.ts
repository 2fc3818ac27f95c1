/**
 * LIST cost measurement (issue 5), shared by `npm run bench` (bench/scenarios/list.ts) and the CI
 * check (test/bench/list-costs.int.test.ts).
 *
 * Seeds N tasks of one (synthetic) tenant and owner straight into the records table with
 * BatchWriteItem, in parallel, using the data layer's pure item builders — the record, a listing
 * copy per partition (tenant and owner views × base, status, priority) and consistent counters,
 * spread over every counter shard as many writers would leave them —
 * then runs each LIST shape in-process through the entity service (listRecords, as the handler
 * does) as the tenant's admin (the tenant partition holds all N), counting what DynamoDB read:
 * items (ScannedCount, or Count; 1 per GetItem hit; BatchGetItem responses) and consumed read
 * capacity (ReturnConsumedCapacity TOTAL, added to every command by a client middleware).
 */
import { loadLayouts } from '../shared/migrations/live-layouts.js';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { db, tableName } from '../shared/data/client.js';
import { COUNTER_SHARDS, COUNTER_SK, counterKey, recordCounts } from '../shared/data/counters.js';
import { copyItem, recordItem } from '../shared/data/items.js';
import { definitionLayout } from '../shared/data/layout.js';
import { listings } from '../shared/data/listings.js';
import type { StoredRecord } from '../shared/data/record-item.js';
import type { AuthContext } from '../shared/caller.js';
import { listRecords, type ListResult } from '../shared/entities/service.js';
import { parseListQueryString } from '../shared/entities/query.js';
import { newRecordId } from '../shared/ids.js';
import { findEntity, loadRegistry } from '../shared/registry/index.js';

const STATUSES = ['todo', 'in_progress', 'completed'];
const PRIORITIES = ['low', 'medium', 'high'];
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

export interface ListCost {
  shape: string;
  query: Record<string, string>;
  size: number;
  requests: number;
  itemsRead: number;
  capacity: number;
  returned: number;
  total: number;
  /** Items-read target, when the shape has one. */
  target?: number;
  targetText?: string;
  pass?: boolean;
  note: string;
}

export interface Seeded {
  size: number;
  auth: AuthContext;
  seconds: number;
}

function base62(n: number): string {
  return randomBytes(n).toString('base64url').replace(/[-_]/g, 'x').slice(0, n);
}

async function writeAll(items: Record<string, unknown>[], concurrency = 16): Promise<void> {
  const table = tableName('records');
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < chunks.length) {
        let requests = chunks[next++].map((Item) => ({ PutRequest: { Item } }));
        for (let attempt = 0; requests.length; attempt++) {
          const out = await db().send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
          requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
          if (requests.length) await new Promise((r) => setTimeout(r, Math.min(1000, 20 * 2 ** attempt)));
        }
      }
    }),
  );
}

/**
 * N tasks of a fresh synthetic tenant, one owner (`owner`: the tenant and user they belong to; a
 * fresh, made-up pair by default), created `spacingMs` apart from 2025-01-01T00:00:00Z (one
 * second by default).
 */
export async function seedTasks(size: number, owner?: { tenantId: string; userId: string }, spacingMs = 1000): Promise<Seeded> {
  return seedRecords('tasks', size, (i) => ({
    title: `Task ${i} ${WORDS[i % WORDS.length]}`,
    description: `Benchmark record number ${i} ${WORDS[(i * 7) % WORDS.length]}`,
    status: STATUSES[i % 3],
    priority: PRIORITIES[Math.floor(i / 3) % 3],
    tagIds: [],
  }), { owner, spacingMs, idOf: () => `tsk_${base62(20)}` });
}

/**
 * N records of `slug` (the fields of record i: `dataOf(i)`) written straight to the tables with
 * the data layer's item builders: the record, its listing copies and consistent counters.
 */
export async function seedRecords(
  slug: string,
  size: number,
  dataOf: (i: number) => Record<string, unknown>,
  options: { owner?: { tenantId: string; userId: string }; spacingMs?: number; /** The entity's own id format by default. */ idOf?: () => string } = {},
): Promise<Seeded> {
  await loadRegistry();
  // Seeded as the definition says (the entity's layout has no migration under way in the bench).
  const layout = definitionLayout(findEntity(slug)!);
  const entity = layout.entity;
  const started = performance.now();
  const { owner, spacingMs = 1000, idOf } = options;
  const tenantId = owner?.tenantId ?? `ten_bench${size}${base62(8)}`;
  const userId = owner?.userId ?? `usr_bench${base62(12)}`;
  const start = Date.parse('2025-01-01T00:00:00.000Z');
  /** Counter item (`pk`, its `item`) → shard → attribute → count (or sum). */
  const counters = new Map<string, Map<number, Map<string, number>>>();
  let batch: Record<string, unknown>[] = [];
  for (let i = 0; i < size; i++) {
    const at = new Date(start + i * spacingMs).toISOString();
    const record: StoredRecord = { entity: slug, id: idOf?.() ?? newRecordId(entity.idFormat, Date.parse(at)), tenantId, ownerId: userId, createdAt: at, updatedAt: at, version: 1, data: dataOf(i) };
    const item = recordItem(layout, record);
    batch.push(item);
    const entered = listings(layout, record);
    for (const l of entered) {
      const copy = copyItem(entity, l.partition, record);
      // Where the layout keeps the record itself in a listing, the record is that listing's entry.
      if (copy.pk !== item.pk || copy.sk !== item.sk) batch.push(copy);
    }
    for (const { pk, item: counter = COUNTER_SK, attribute, amount } of recordCounts(record, entered, layout.sums)) {
      const id = JSON.stringify([pk, counter]);
      const shards = counters.get(id) ?? new Map<number, Map<string, number>>();
      const attributes = shards.get(i % COUNTER_SHARDS) ?? new Map<string, number>();
      attributes.set(attribute, (attributes.get(attribute) ?? 0) + amount);
      shards.set(i % COUNTER_SHARDS, attributes);
      counters.set(id, shards);
    }
    if (batch.length >= 5000) {
      await writeAll(batch);
      batch = [];
    }
  }
  for (const [id, shards] of counters) {
    const [pk, counter] = JSON.parse(id) as [string, string];
    for (const [shard, attributes] of shards) batch.push({ ...counterKey(pk, shard, counter), kind: 'counter', ...Object.fromEntries(attributes) });
  }
  await writeAll(batch);
  const auth: AuthContext = { type: 'api_key', user: { id: userId, email: 'bench@bench.local', role: 'admin' }, tenantId, scopes: ['*'] };
  return { size, auth, seconds: (performance.now() - started) / 1000 };
}

interface Counted {
  requests: number;
  items: number;
  capacity: number;
}

function capacityOf(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + capacityOf(v), 0);
  const c = value as { CapacityUnits?: number; ReadCapacityUnits?: number } | undefined;
  return Number(c?.CapacityUnits ?? c?.ReadCapacityUnits ?? 0);
}

/** Runs `work` counting every DynamoDB command sent on the process's client. */
export async function counting<T>(work: () => Promise<T>): Promise<{ result: T; counted: Counted }> {
  const counted: Counted = { requests: 0, items: 0, capacity: 0 };
  const stack = db().middlewareStack;
  const name = `listCostCounter${base62(6)}`;
  stack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const command = context.commandName ?? '';
      if (!command.includes('Write') && !command.includes('Transact')) input.ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const output = out.output as Record<string, any>;
      counted.requests += 1;
      if (command.startsWith('Query') || command.startsWith('Scan')) counted.items += Number(output.ScannedCount ?? output.Count ?? 0);
      else if (command.startsWith('GetItem') || command === 'GetCommand') counted.items += output.Item ? 1 : 0;
      else if (command.startsWith('BatchGet')) counted.items += Object.values(output.Responses ?? {}).reduce((n: number, items) => n + (items as unknown[]).length, 0);
      counted.capacity += capacityOf(output.ConsumedCapacity);
      return out;
    },
    { step: 'initialize', name },
  );
  try {
    const result = await work();
    return { result, counted };
  } finally {
    stack.remove(name);
  }
}

export async function list(auth: AuthContext, query: Record<string, string>): Promise<ListResult> {
  const tasks = findEntity('tasks')!;
  return listRecords(tasks, auth, parseListQueryString(tasks, query));
}

/** Every LIST shape at one size. */
export async function measureListCosts(seeded: Seeded): Promise<ListCost[]> {
  const { auth, size } = seeded;
  const limit = 20;
  const rows: ListCost[] = [];
  const run = async (shape: string, query: Record<string, string>, target: number | undefined, targetText: string | undefined, note: string) => {
    // The entities' layout states are read once per process and refreshed at most every 5 s
    // (shared/migrations/live-layouts.ts): a per-container cost, not a per-LIST one, so not counted here.
    await loadLayouts();
    const { result, counted } = await counting(() => list(auth, query));
    const pagination = result.pagination;
    rows.push({
      shape,
      query,
      size,
      requests: counted.requests,
      itemsRead: counted.items,
      capacity: Math.round(counted.capacity * 10) / 10,
      returned: (result.data as unknown[]).length,
      total: pagination.total,
      target,
      targetText,
      pass: target === undefined ? undefined : counted.items <= target,
      note,
    });
  };
  // Counter items: the partition's shards; one copy more may come in the room left for an older single counter.
  const counters = COUNTER_SHARDS;
  await run('default order, page 1', { limit: String(limit) }, limit + 2 + counters, `≤ ${limit + 2} copies + ${counters} counter shards`, 'ONE Query from the counters: total + limit+1 copies');
  await run('default order, page 5', { limit: String(limit), page: '5' }, 4 * limit + limit + 2 + counters, `≤ ${4 * limit + 1} entries before + ${limit + 1} + ${counters} counter shards`, 'keys-only Query over the entries before (with the counter), then ONE Query for the page and one copy more');
  const page49 = await list(auth, { limit: String(limit), page: '49' });
  const cursor = page49.pagination.nextCursor;
  if (!cursor) throw new Error(`no cursor after page 49 at size ${size}`);
  await run('cursor, page 50', { limit: String(limit), cursor }, limit + 1 + counters, `≤ ${limit + 1} copies + ${counters} counter shards`, 'ONE Query after the cursor key (the page and one copy more) + ONE Query of the counter shards');
  await run('equality on an indexed field (status=todo)', { limit: String(limit), status: 'todo' }, limit + 2 + counters, `≤ ${limit + 2} copies + ${counters} counter shards`, "the status=todo partition: ONE Query from its counters + ONE Query of the base partition's counter shards (they count status)");
  await run(
    'two indexed equalities (status=todo&priority=high)',
    { limit: String(limit), status: 'todo', priority: 'high' },
    undefined,
    undefined,
    'counters of both field partitions (one Query per counter key range, in parallel), the smaller one read whole with the other equality pushed down: O(matches of one field)',
  );
  await run('equality on a non-indexed field (title=…)', { limit: String(limit), title: `Task ${Math.floor(size / 2)} ${WORDS[Math.floor(size / 2) % WORDS.length]}` }, undefined, undefined, 'O(partition): the whole tenant partition read, title pushed down as FilterExpression');
  await run('search (one word)', { limit: String(limit), search: 'alpha' }, undefined, undefined, 'O(partition): all copies read, the words matched as each Query returns');
  await run('sort by a non-indexed field (title)', { limit: String(limit), sort: 'title' }, undefined, undefined, 'O(partition): the whole partition read, sorted in memory');
  return rows;
}
