/**
 * Text generation over HTTP on the local gateway with the local provider (so the figures are the
 * API's own cost, not a model's): latency of POST /api/v1/ai/generate and GET /api/v1/ai/credits,
 * the DynamoDB commands of one generate call (authentication, the general and the route's rate
 * counter, the credit reservation and its settlement), and a burst of 20 parallel calls whose
 * reservations exceed the balance: what was spent must equal what the balance lost.
 */
import { randomBytes } from 'node:crypto';
import { round, summarize } from '../stats.js';
import { countCommands } from '../sdk-commands.js';
import type { BenchContext, BenchRow, LocalRuntime } from '../types.js';

export const order = 60;

// Read by the in-process server at its first generate call: a balance of 10 reservations of 500.
process.env.AI_DEFAULT_CREDITS ??= '5000';

const V1 = '/api/v1';
const PER_USER = 20;

async function call(runtime: LocalRuntime, method: string, path: string, cookie: string | undefined, body?: unknown) {
  const response = await fetch(`${runtime.url}${path}`, {
    method,
    headers: { ...(cookie ? { Cookie: cookie } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, response, body: JSON.parse(text) as { data: any } };
}

function cookieOf(response: Response): string {
  return response.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
}

/** A fresh user of the default tenant (its own generate limit and credits), logged in. */
async function newUser(runtime: LocalRuntime, adminCookie: string): Promise<{ id: string; cookie: string }> {
  const email = `bench-ai-${randomBytes(6).toString('hex')}@bench.local`;
  const password = `bench-${randomBytes(8).toString('hex')}`;
  const created = await call(runtime, 'POST', `${V1}/users`, adminCookie, { email, name: 'Bench AI', password, role: 'user' });
  if (created.status !== 201) throw new Error(`user creation: ${created.status}`);
  const login = await call(runtime, 'POST', `${V1}/auth/login`, undefined, { email, password });
  return { id: created.body.data.id, cookie: cookieOf(login.response) };
}

export async function run(context: BenchContext): Promise<BenchRow[]> {
  const runtime = await context.local();
  const admin = cookieOf((await call(runtime, 'POST', `${V1}/auth/login`, undefined, runtime.admin)).response);
  const rows: BenchRow[] = [];
  const calls = Math.max(PER_USER, Math.round(60 * context.scale));

  // Latency: sequential calls, a fresh user every 20 (the per-hour limit of generate).
  const generateTimes: number[] = [];
  const creditTimes: number[] = [];
  let user = await newUser(runtime, admin);
  for (let i = 0; i < calls; i++) {
    if (i > 0 && i % PER_USER === 0) user = await newUser(runtime, admin);
    let started = performance.now();
    const generated = await call(runtime, 'POST', `${V1}/ai/generate`, user.cookie, { prompt: `bench prompt ${i}`, maxTokens: 100 });
    generateTimes.push(performance.now() - started);
    if (generated.status !== 200) throw new Error(`generate: ${generated.status}`);
    started = performance.now();
    await call(runtime, 'GET', `${V1}/ai/credits`, user.cookie);
    creditTimes.push(performance.now() - started);
  }
  const g = summarize(generateTimes);
  const c = summarize(creditTimes);
  rows.push(
    { scenario: 'ai: POST /ai/generate (local provider, session)', metric: 'p50', value: round(g.p50, 1), unit: 'ms', note: `p99 ${round(g.p99, 1)} ms, n=${g.n}` },
    { scenario: 'ai: GET /ai/credits (session)', metric: 'p50', value: round(c.p50, 1), unit: 'ms', note: `p99 ${round(c.p99, 1)} ms, n=${c.n}` },
  );

  // DynamoDB commands of one generate call.
  const fresh = await newUser(runtime, admin);
  const commands = await countCommands(() => call(runtime, 'POST', `${V1}/ai/generate`, fresh.cookie, { prompt: 'count my commands', maxTokens: 50 }));
  const total = [...commands.values()].reduce((s, n) => s + n, 0);
  rows.push({
    scenario: 'ai: DynamoDB commands per generate call (session)',
    metric: 'commands',
    value: total,
    note: [...commands].map(([name, n]) => `${name.replace(/Command$/, '')} ${n}`).join(', '),
  });

  // A burst: 20 parallel calls reserving 500 each against a balance that covers 10 of them.
  const burst = await newUser(runtime, admin);
  const before = (await call(runtime, 'GET', `${V1}/ai/credits`, burst.cookie)).body.data.balance as number;
  const started = performance.now();
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, i) => call(runtime, 'POST', `${V1}/ai/generate`, burst.cookie, { prompt: `burst ${i}`, maxTokens: Math.min(500, Math.floor(before / 10)) })),
  );
  const elapsed = performance.now() - started;
  const spent = responses.filter((r) => r.status === 200).reduce((s, r) => s + (r.body.data.tokensUsed as number), 0);
  const after = (await call(runtime, 'GET', `${V1}/ai/credits`, burst.cookie)).body.data.balance as number;
  const statuses = responses.reduce<Record<number, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {});
  rows.push({
    scenario: 'ai: 20 parallel generate calls, balance for 10 reservations',
    metric: 'balance lost − tokens charged',
    value: before - after - spent,
    unit: 'credits',
    target: '= 0, balance ≥ 0',
    pass: before - after === spent && after >= 0,
    note: `statuses ${JSON.stringify(statuses)}, ${round(elapsed, 0)} ms for the burst, balance ${before} → ${after}`,
  });
  return rows;
}
