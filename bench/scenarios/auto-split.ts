/**
 * Write shards that follow the load, under `npm start` (docs/capacity.md): a public entity on
 * `writeShards: 'auto'` starts on 1 shard; BENCH_SPLIT_CLIENTS clients (default 16) create into
 * it without a pause until 10 s past the controller's decision (at most BENCH_SPLIT_SECONDS,
 * default 300); the change's pass then runs over the records the burst wrote. Measured: the rate
 * the controller saw on the busiest key, the time from the burst's start to its decision and to
 * the readers' switch, and afterwards a full cursor walk (anonymous) against the creates
 * acknowledged: every record once.
 *
 * The controller runs with the product's settings (SHARDS_WINDOW_SECONDS 10,
 * SHARDS_SPLIT_AFTER_SECONDS 60, SHARDS_CHECK_SECONDS 10, SHARDS_SPLIT_AT_PERCENT 50: 125 writes/s
 * on the busiest key); SHARDS_SPLIT_AT_PERCENT set for the run is passed on to the server. Runs
 * `npm start` (bench/npm-start.ts) on a DATA_DIR and engine of its own, with ENTITIES_DIR.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { send, sessionOf, tenantKey, type BenchTarget } from '../http.js';
import { startNpmStart } from '../npm-start.js';
import { round } from '../stats.js';
import type { BenchContext, BenchRow } from '../types.js';

export const order = 330;
export const long = true;
export const usesLocal = false;

const OPERATOR = { email: 'bench-operator@bench.local', password: `pw-${randomBytes(8).toString('hex')}` };

function definition(slug: string): Record<string, unknown> {
  return {
    name: 'listing',
    slug,
    tableName: slug,
    idFormat: { type: 'prefixed', prefix: 'lst' },
    fields: { title: { type: 'string', maxLength: 200 }, price: { type: 'number' } },
    access: { public: true, shared: true },
  };
}

/** `npm start` on its own DATA_DIR and engine. */
async function startServer(dir: string, dataDir: string, env: Record<string, string>): Promise<{ target: BenchTarget; stop: () => Promise<void> }> {
  const server = startNpmStart(dataDir, OPERATOR, { ...env, ENTITIES_DIR: dir });
  const url = await server.listening;
  return {
    target: { url },
    stop: () =>
      new Promise<void>((resolve) => {
        if (server.child.exitCode !== null) return resolve();
        server.child.once('exit', () => resolve());
        server.child.kill('SIGTERM');
      }),
  };
}

interface Status {
  state: string;
  writeShards: { auto: boolean; shards: number; read: number };
  trigger: { action: string; from: number; to: number; rate: number; threshold: number; seconds: number; at: string } | null;
}

export async function run(_context: BenchContext): Promise<BenchRow[]> {
  const clients = Math.max(1, Number(process.env.BENCH_SPLIT_CLIENTS ?? 16) || 16);
  const limitMs = Math.max(60, Number(process.env.BENCH_SPLIT_SECONDS ?? 300) || 300) * 1000;
  const percent = process.env.SHARDS_SPLIT_AT_PERCENT ?? '50';
  const slug = `lst${randomBytes(3).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'bench-entities-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-split-data-'));
  writeFileSync(join(dir, 'zz-bench.ts'), `export default ${JSON.stringify(definition(slug))};\n`);
  const scenario = `auto write shards: a burst of creates into a quiet public entity (npm start, ${clients} clients, split at ${percent} % of the per-key ceiling)`;
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    // The controller at the product's pace (the bench's runner slows it to hourly for the other scenarios).
    server = await startServer(dir, dataDir, { SHARDS_SPLIT_AT_PERCENT: percent, SHARDS_CHECK_SECONDS: process.env.BENCH_SHARDS_CHECK_SECONDS ?? '10' });
    const target = server.target;
    const operator = await sessionOf(target, OPERATOR);
    const { key } = await tenantKey(target, operator, 'Split', 'bench');
    const statusOf = async (): Promise<Status | undefined> => {
      const reply = await send(target, 'GET', '/api/v1/migrations', operator);
      return reply.status === 200 ? (reply.body.data as (Status & { entity: string })[]).find((s) => s.entity === slug) : undefined;
    };
    const before = await statusOf();
    const acknowledged = new Set<string>();
    let failed = 0;
    let running = true;
    const started = Date.now();
    const burst = Promise.all(
      Array.from({ length: clients }, async () => {
        while (running) {
          const reply = await send(target, 'POST', `/api/v1/${slug}`, key, { title: 'burst', price: 1 });
          if (reply.status === 201) acknowledged.add(String(reply.body.data.id));
          else failed += 1;
        }
      }),
    );
    let decidedAt: number | undefined;
    let switchedAt: number | undefined;
    let status: Status | undefined;
    let burstEnded: number | undefined;
    // The burst runs until 10 s after the decision (writes race the change's start), then the
    // pass over the records it wrote runs alone until readers switch (at most 10 more minutes).
    while (Date.now() - started < (burstEnded === undefined ? limitMs : limitMs + 600_000)) {
      await new Promise((r) => setTimeout(r, 1000));
      status = await statusOf();
      if (status?.trigger && decidedAt === undefined) decidedAt = Date.parse(status.trigger.at);
      if (running && (Date.now() - started >= limitMs || (decidedAt !== undefined && Date.now() - decidedAt >= 10_000))) {
        running = false;
        burstEnded = Date.now();
      }
      if (status && status.writeShards.read > (before?.writeShards.read ?? 1)) {
        switchedAt = Date.now();
        break;
      }
      const seconds = Math.round((Date.now() - started) / 1000);
      if (seconds % 15 === 0) console.log(`  ${seconds} s: ${acknowledged.size} created; shards ${status?.writeShards.shards ?? '?'} (read ${status?.writeShards.read ?? '?'}), ${status?.state ?? '?'}`);
    }
    running = false;
    await burst;
    const seconds = ((burstEnded ?? Date.now()) - started) / 1000;
    // Every record once: a cursor walk, anonymous (a public entity), after the split.
    const seen = new Set<string>();
    let walked = 0;
    let cursor: string | null = null;
    do {
      const reply = await send(target, 'GET', `/api/v1/${slug}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {});
      if (reply.status !== 200) throw new Error(`walk: ${reply.status} ${JSON.stringify(reply.body)}`);
      for (const record of reply.body.data as { id: string }[]) {
        seen.add(record.id);
        walked += 1;
      }
      cursor = reply.body.pagination.nextCursor;
    } while (cursor);
    const missing = [...acknowledged].filter((id) => !seen.has(id)).length;
    const rate = round(acknowledged.size / seconds, 1);
    const trigger = status?.trigger;
    const rows: BenchRow[] = [
      { scenario, metric: 'creates acknowledged', value: acknowledged.size, note: `${rate} creates/s over ${round(seconds, 0)} s; ${failed} refused` },
      {
        scenario,
        metric: 'burst to the controller’s decision',
        value: decidedAt === undefined ? Number.NaN : round((decidedAt - started) / 1000, 1),
        unit: 's',
        note: trigger ? `${trigger.action} ${trigger.from} → ${trigger.to}: busiest key ${trigger.rate} writes/s (lowest window ${round((trigger as { lowest?: number }).lowest ?? 0, 1)}), threshold ${trigger.threshold} for ${trigger.seconds} s` : 'no decision within the run',
      },
      {
        scenario,
        metric: 'burst to the readers’ switch',
        value: switchedAt === undefined ? Number.NaN : round((switchedAt - started) / 1000, 1),
        unit: 's',
        note: `write shards ${before?.writeShards.shards ?? 1} → ${status?.writeShards.shards ?? '?'}; the change's pass over the ${acknowledged.size} records ran ${switchedAt && decidedAt ? round((switchedAt - decidedAt) / 1000, 0) : '?'} s after the decision, the burst stopping 10 s after it`,
      },
      { scenario, metric: 'cursor walk after the split: records missing / listed twice', value: missing, note: `${walked} listed, ${seen.size} distinct, ${acknowledged.size} acknowledged; ${walked - seen.size} twice`, target: '0 / 0', pass: missing === 0 && walked === seen.size },
    ];
    return rows;
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}
