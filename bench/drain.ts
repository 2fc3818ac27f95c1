/**
 * The read-and-delete loop of a queue worker, through HTTP only: seed N tasks in a partition of
 * their own (POST /api/v1/import/tasks, 100 per request), then read a page, delete what it holds
 * (single DELETEs or one bulk DELETE), insert a record or two meanwhile, follow nextCursor, until
 * nextCursor is null. Reports the seeded records that matched the query but were never returned
 * (lost), records returned twice (duplicates), records returned that do not match, pages and time.
 * Used by bench/scenarios/drain.ts (1,000 per order) and by the suite (a smaller count).
 */
import { send, type BenchReply } from './http.js';
import { pool } from './stats.js';

export interface DrainOrder {
  name: string;
  /** Query parameters after `limit=` (starting with `&`, or empty). */
  query: string;
  /** Which seeded tasks the query matches. */
  matches(task: SeededTask): boolean;
}

export interface SeededTask {
  id: string;
  title: string;
  description: string;
  status: string;
  priority: string;
}

export type DeleteMode = 'single' | 'bulk';

export interface DrainResult {
  order: string;
  mode: DeleteMode;
  expected: number;
  lost: number;
  duplicates: number;
  /** Returned records that do not match the query (seeded or inserted during the walk). */
  unexpected: number;
  /** Records inserted during the walk (they may or may not be returned, never twice). */
  inserted: number;
  pages: number;
  seedMs: number;
  drainMs: number;
  /** A few ids, for a report when something is lost. */
  lostExamples: string[];
}

const NOT_HIGH = encodeURIComponent(JSON.stringify({ priority: { $ne: 'high' } }));

/** Every order of the query language (docs/query-language.md) on tasks: default, each sortable field both ways, filters, search. */
export const DRAIN_ORDERS: DrainOrder[] = [
  { name: 'default (createdAt desc, id)', query: '', matches: () => true },
  { name: 'createdAt asc', query: '&order=asc', matches: () => true },
  { name: 'updatedAt asc', query: '&sort=updatedAt&order=asc', matches: () => true },
  { name: 'updatedAt desc', query: '&sort=updatedAt&order=desc', matches: () => true },
  { name: 'title asc', query: '&sort=title', matches: () => true },
  { name: 'title desc', query: '&sort=title&order=desc', matches: () => true },
  { name: 'status asc', query: '&sort=status', matches: () => true },
  { name: 'status desc', query: '&sort=status&order=desc', matches: () => true },
  { name: 'priority asc', query: '&sort=priority', matches: () => true },
  { name: 'priority desc', query: '&sort=priority&order=desc', matches: () => true },
  { name: 'priority asc, title desc', query: '&sort=priority,title&order=asc,desc', matches: () => true },
  { name: 'indexed equality status=todo (default order)', query: '&status=todo', matches: (t) => t.status === 'todo' },
  { name: 'status=todo, sort=title desc', query: '&status=todo&sort=title&order=desc', matches: (t) => t.status === 'todo' },
  { name: 'filter priority $ne high, sort=title', query: `&filter=${NOT_HIGH}&sort=title`, matches: (t) => t.priority !== 'high' },
  { name: 'filter priority $ne high, createdAt asc', query: `&filter=${NOT_HIGH}&order=asc`, matches: (t) => t.priority !== 'high' },
  { name: 'search=alpha (default order)', query: '&search=alpha', matches: (t) => t.description.includes('alpha') },
  { name: 'search=alpha, sort=title desc', query: '&search=alpha&sort=title&order=desc', matches: (t) => t.description.includes('alpha') },
];

/** The key's Authorization header. */
function bearer(apiKey: string): Record<string, string> {
  return { Authorization: `Bearer ${apiKey}` };
}

function expectStatus(reply: BenchReply, status: number, what: string): void {
  if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
}

const STATUSES = ['todo', 'in_progress', 'completed'];
const PRIORITIES = ['low', 'medium', 'high'];

/** A description of about 2,000 characters (over 1 KB: the task's listing copies are partial) ending with `words`. */
function longDescription(words: string): string {
  return `${'A long description of a drain task, written out to pass one kilobyte. '.repeat(28).slice(0, 2000 - words.length - 1)} ${words}`;
}

/**
 * `count` tasks with scattered titles (pairs share a title: ties broken by id), 100 per import;
 * with `long`, every other one has a 2,000-character description.
 */
async function seedDrainTasks(baseUrl: string, apiKey: string, count: number, long = false): Promise<SeededTask[]> {
  const width = String(count).length;
  const rows = Array.from({ length: count }, (_, i) => {
    // A permutation of 0..count-1 (7919 is prime, so coprime with any count it does not divide).
    const scattered = count % 7919 === 0 ? i : (i * 7919) % count;
    return {
      title: `drain ${String(Math.floor(scattered / 2)).padStart(width, '0')}`,
      description: ((words: string) => (long && i % 2 === 1 ? longDescription(words) : words))(i % 4 === 0 ? 'alpha item' : 'beta item'),
      status: STATUSES[i % 3],
      priority: PRIORITIES[Math.floor(i / 3) % 3],
    };
  });
  const seeded: SeededTask[] = [];
  for (let i = 0; i < rows.length; i += 100) {
    const reply = await send({ url: baseUrl }, 'POST', '/api/v1/import/tasks', bearer(apiKey), { tasks: rows.slice(i, i + 100) });
    expectStatus(reply, 201, 'import');
    if (reply.body.data.failed !== 0) throw new Error(`import: ${JSON.stringify(reply.body.data.errors).slice(0, 300)}`);
    seeded.push(...(reply.body.data.tasks as SeededTask[]));
  }
  return seeded;
}

/**
 * Seeds `count` tasks for the key's user (whose partition must hold nothing else), then drains
 * `order` with pages of `limit`, deleting each page after reading it.
 */
export async function drain(options: {
  baseUrl: string;
  apiKey: string;
  order: DrainOrder;
  count: number;
  mode: DeleteMode;
  limit?: number;
  /** Every other task (seeded and inserted) with a 2,000-character description. */
  long?: boolean;
}): Promise<DrainResult> {
  const { baseUrl, apiKey, order, count, mode } = options;
  const target = { url: baseUrl };
  const auth = bearer(apiKey);
  const limit = options.limit ?? 50;
  const seedStarted = performance.now();
  const seeded = await seedDrainTasks(baseUrl, apiKey, count, options.long);
  const seedMs = performance.now() - seedStarted;
  const expected = new Set(seeded.filter((t) => order.matches(t)).map((t) => t.id));
  const known = new Map<string, SeededTask>(seeded.map((t) => [t.id, t]));

  const seen = new Map<string, number>();
  let unexpected = 0;
  let pages = 0;
  let inserted = 0;
  const started = performance.now();
  const path = `/api/v1/tasks?limit=${limit}${order.query}&fields=title,description,status,priority`;
  let reply = await send(target, 'GET', path, auth);
  for (;;) {
    expectStatus(reply, 200, `GET ${path}`);
    pages++;
    const page = reply.body.data as SeededTask[];
    const { nextCursor, hasNext } = reply.body.pagination as { nextCursor: string | null; hasNext: boolean };
    if (hasNext !== (nextCursor !== null)) throw new Error(`hasNext ${hasNext} with nextCursor ${nextCursor}`);
    for (const task of page) {
      seen.set(task.id, (seen.get(task.id) ?? 0) + 1);
      if (!order.matches(known.get(task.id) ?? task)) unexpected++;
    }
    if (page.length) {
      const ids = page.map((t) => t.id);
      if (mode === 'bulk') {
        const removed = await send(target, 'DELETE', '/api/v1/tasks', auth, { ids });
        expectStatus(removed, 200, 'bulk DELETE');
        if (removed.body.data.deleted !== ids.length) throw new Error(`bulk DELETE: ${JSON.stringify(removed.body.data.failures).slice(0, 300)}`);
      } else {
        await pool(ids, 8, async (id) => expectStatus(await send(target, 'DELETE', `/api/v1/tasks/${id}`, auth), 200, `DELETE ${id}`));
      }
    }
    // A producer keeps writing meanwhile: one record sorting first and one sorting last by title.
    if (pages % 2 === 1) {
      for (const title of ['aaa drain new', 'zzz drain new']) {
        const words = inserted % 2 ? 'alpha new' : 'beta new';
        const body = { title: `${title} ${inserted}`, description: options.long && inserted % 4 < 2 ? longDescription(words) : words, status: STATUSES[inserted % 3], priority: PRIORITIES[inserted % 3] };
        const made = await send(target, 'POST', '/api/v1/tasks', auth, body);
        expectStatus(made, 201, 'POST');
        known.set(made.body.data.id, made.body.data as SeededTask);
        inserted++;
      }
    }
    if (!nextCursor) break;
    if (pages > count + 10) throw new Error('the walk does not end');
    reply = await send(target, 'GET', `${path}&cursor=${encodeURIComponent(nextCursor)}`, auth);
  }
  const drainMs = performance.now() - started;
  const lostIds = [...expected].filter((id) => !seen.has(id));
  return {
    order: order.name,
    mode,
    expected: expected.size,
    lost: lostIds.length,
    duplicates: [...seen.values()].reduce((sum, n) => sum + n - 1, 0),
    unexpected,
    inserted,
    pages,
    seedMs,
    drainMs,
    lostExamples: lostIds.slice(0, 5),
  };
}
