/**
 * `npm run bench`: runs every scenario module of bench/scenarios/ (each exports `run(context)`
 * returning rows), then writes bench/results/latest.md (a Markdown table) and latest.json.
 *
 * One DynamoDB Local (in memory) and one local gateway are shared by the HTTP scenarios; they
 * are started on first use, in this process, with rate limits raised so that the load itself is
 * not refused (RATE_LIMIT_* = 1e9 unless set). BENCH_SCALE scales the iteration counts;
 * BENCH_ONLY=<substring> runs only the matching scenario files; the long ones (drains, crash
 * rounds) run only when BENCH_ONLY names them or BENCH_ALL=1.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchContext, BenchRow, BenchScenarioModule, LocalRuntime } from './types.js';

const here = fileURLToPath(new URL('.', import.meta.url));

// Before any shared module is loaded: quiet logs, no SDK notice, limits out of the way.
process.env.LOG_LEVEL ??= 'ERROR';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The write-shards controller's background reads (every 10 s by default) would be billed to the
// requests a scenario happens to be measuring: here it checks hourly.
process.env.SHARDS_CHECK_SECONDS ??= '3600';
for (const name of ['RATE_LIMIT_API_KEY_PER_HOUR', 'RATE_LIMIT_SESSION_PER_HOUR', 'RATE_LIMIT_ANONYMOUS_PER_HOUR']) {
  process.env[name] ??= '1000000000';
}

let local: Promise<{ runtime: LocalRuntime; stop: () => Promise<void> }> | undefined;

function startLocal(): Promise<{ runtime: LocalRuntime; stop: () => Promise<void> }> {
  local ??= (async () => {
    const { startLocalStack } = await import('../infra/local/server.js');
    const admin = { email: 'bench-admin@bench.local', password: `bench-${randomBytes(12).toString('hex')}` };
    const stack = await startLocalStack({ host: '127.0.0.1', port: 0, admin });
    return { runtime: { url: stack.url, dynamoEndpoint: stack.dynamoEndpoint, admin }, stop: () => stack.stop() };
  })();
  return local;
}

function cell(value: unknown): string {
  return String(value ?? '').replace(/\|/g, '\\|');
}

function toMarkdown(rows: readonly BenchRow[], meta: Record<string, string>): string {
  const lines = [
    '# Benchmark results',
    '',
    ...Object.entries(meta).map(([k, v]) => `- ${k}: ${v}`),
    '',
    '| Scenario | Metric | Value | Unit | Target | Met | Note |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) =>
      `| ${cell(r.scenario)} | ${cell(r.metric)} | ${cell(r.value)} | ${cell(r.unit)} | ${cell(r.target)} | ${r.pass === undefined ? '' : r.pass ? 'yes' : 'NO'} | ${cell(r.note)} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY;
  const files = readdirSync(join(here, 'scenarios'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && (!only || f.includes(only)))
    .sort();
  const modules: { file: string; module: BenchScenarioModule }[] = [];
  for (const file of files) {
    modules.push({ file, module: (await import(pathToFileURL(join(here, 'scenarios', file)).href)) as BenchScenarioModule });
  }
  if (!only && process.env.BENCH_ALL !== '1') {
    for (let i = modules.length - 1; i >= 0; i--) if (modules[i].module.long) modules.splice(i, 1);
  }
  modules.sort((a, b) => (a.module.order ?? 100) - (b.module.order ?? 100) || a.file.localeCompare(b.file));

  const context: BenchContext = {
    local: async () => (await startLocal()).runtime,
    scale: Number(process.env.BENCH_SCALE ?? 1) || 1,
  };
  const rows: BenchRow[] = [];
  let failed = false;
  try {
    // Started before any scenario, so that the process's DynamoDB client (created once, on first
    // use) points at the local engine even when an in-process scenario touches it first.
    if (modules.some(({ module }) => module.usesLocal !== false)) await context.local();
    for (const { file, module } of modules) {
      console.log(`bench: ${file}`);
      try {
        const produced = await module.run(context);
        for (const row of produced) console.log(`  ${row.scenario} · ${row.metric}: ${row.value}${row.unit ? ` ${row.unit}` : ''}${row.target ? ` (target ${row.target}${row.pass === false ? ', NOT MET' : ''})` : ''}`);
        rows.push(...produced);
      } catch (error) {
        failed = true;
        console.error(`bench: ${file} failed:`, error);
        rows.push({ scenario: file, metric: 'error', value: (error as Error).message });
      }
    }
  } finally {
    if (local) await (await local).stop();
  }

  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    command: 'npm run bench',
  };
  const outDir = join(here, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.json'), `${JSON.stringify({ ...meta, rows }, null, 2)}\n`);
  writeFileSync(join(outDir, 'latest.md'), toMarkdown(rows, meta));
  console.log(`bench: wrote bench/results/latest.md and latest.json (${rows.length} rows)`);
  process.exit(failed ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error('bench failed:', error);
  process.exit(1);
});
