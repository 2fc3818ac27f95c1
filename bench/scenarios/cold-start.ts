/**
 * Cold start of each family, measured on the bundles a deploy uploads: `npx cdk synth` into a
 * temporary directory, then for each family function of the template its bundle's size and the
 * time to import it in a fresh `node` process (median of COLD_START_RUNS, default 9), with the
 * function's synthesized environment. Beside them, in the same run, a hello-world middy handler
 * bundled with the same esbuild options: the floor any bundle starts from. Also: the entities
 * bundle imported with NODE_OPTIONS=--enable-source-maps (how it was deployed before), which
 * shows what reading the source map only when a stack is printed saves.
 *
 * The temporary directory is outside the project, so a bundle that imports a module it left out
 * (the health function leaves the AWS SDK to the Lambda runtime) at load fails here loudly.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { familyBundles } from '../../infra/aws/bundles.js';
import { PROJECT_ROOT, REQUIRE_SHIM } from '../../infra/aws/functions.js';
import { families } from '../../shared/routes.js';
import { round } from '../stats.js';
import type { BenchRow } from '../types.js';

export const order = 5;
export const usesLocal = false;

const STACK = 'EntityRecordApi';
const RUNS = Number(process.env.COLD_START_RUNS ?? 9) || 9;

/** Targets of the import time (ms) and the bundle size (kB). */
const IMPORT_TARGET_MS: Record<string, number> = { health: 10, entities: 35, auth: 35, keys: 35, import: 35, graphql: 50 };
const SIZE_TARGET_KB: Record<string, number> = { health: 120 };

/**
 * Imports one bundle and prints the time it took. Lambda's Node runtime provides the `awslambda`
 * global that streaming handlers wrap themselves with; plain node does not, so a stand-in of its
 * two members is set first (it is not timed).
 */
const IMPORT_SCRIPT = [
  'globalThis.awslambda ??= { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };',
  'const t = performance.now(); await import(process.argv[1]); process.stdout.write(String(performance.now() - t));',
].join('\n');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median import time of `file` over RUNS fresh processes. */
function importTime(file: string, environment: Record<string, string>, nodeOptions = ''): number {
  const env = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_LAMBDA_FUNCTION_NAME: 'cold-start-bench',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...environment,
    NODE_OPTIONS: nodeOptions,
  };
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', IMPORT_SCRIPT, file], { env, encoding: 'utf8', cwd: path.dirname(file) });
    // The minified source line Node prints first says nothing: keep the message and the stack.
    if (result.status !== 0) throw new Error(`importing ${file} failed: ${result.stderr.split('\n').filter((line) => line.length < 400).join('\n').slice(0, 2000)}`);
    samples.push(Number(result.stdout));
  }
  return median(samples);
}

/** A three-line middy handler, bundled the way infra/aws/functions.ts bundles a family. */
async function helloWorld(outdir: string): Promise<string> {
  const file = path.join(outdir, 'hello-world', 'index.mjs');
  mkdirSync(path.dirname(file), { recursive: true });
  await build({
    stdin: {
      contents: "import middy from '@middy/core';\nexport const handler = middy(async () => ({ statusCode: 200, body: 'hello' }));\n",
      resolveDir: PROJECT_ROOT,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: true,
    banner: { js: REQUIRE_SHIM },
    outfile: file,
    logLevel: 'error',
  });
  return file;
}

export async function run(): Promise<BenchRow[]> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'cold-start-'));
  try {
    const started = Date.now();
    execFileSync('npx', ['cdk', 'synth', '--quiet', '-o', outdir], { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    const synthSeconds = round((Date.now() - started) / 1000, 1);
    const bundles = familyBundles(outdir, STACK, families);
    const hello = await helloWorld(outdir);
    const note = `cdk synth output; median of ${RUNS} fresh node ${process.version} processes`;

    const rows: BenchRow[] = [];
    const helloMs = importTime(hello, {});
    rows.push({ scenario: 'cold start: hello-world middy bundle', metric: 'bundle', value: round(statSync(hello).size / 1024, 1), unit: 'kB' });
    rows.push({ scenario: 'cold start: hello-world middy bundle', metric: 'import', value: round(helloMs, 1), unit: 'ms', note });
    for (const family of families) {
      const bundle = bundles.get(family);
      if (!bundle) throw new Error(`no bundle of family '${family}' in the cdk synth output`);
      const kb = bundle.bytes / 1024;
      const sizeTarget = SIZE_TARGET_KB[family];
      rows.push({
        scenario: `cold start: ${family}`,
        metric: 'bundle',
        value: round(kb, 1),
        unit: 'kB',
        ...(sizeTarget !== undefined ? { target: `≤ ${sizeTarget} kB`, pass: kb <= sizeTarget } : {}),
      });
      const ms = importTime(bundle.file, bundle.environment);
      const target = IMPORT_TARGET_MS[family];
      rows.push({
        scenario: `cold start: ${family}`,
        metric: 'import',
        value: round(ms, 1),
        unit: 'ms',
        ...(target !== undefined ? { target: `≤ ${target} ms`, pass: ms <= target } : {}),
        note: `${round(ms - helloMs, 1)} ms above hello-world`,
      });
    }
    const entities = bundles.get('entities');
    if (entities) {
      rows.push({
        scenario: 'cold start: entities with NODE_OPTIONS=--enable-source-maps',
        metric: 'import',
        value: round(importTime(entities.file, entities.environment, '--enable-source-maps'), 1),
        unit: 'ms',
        note: 'for comparison: the source map parsed at load instead of on the first printed stack',
      });
    }
    rows.push({ scenario: 'cold start: cdk synth', metric: 'duration', value: synthSeconds, unit: 's' });
    return rows;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
