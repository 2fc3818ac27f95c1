/**
 * Cold start counted in instructions, not milliseconds: each family's synthesized bundle imported
 * in a fresh `node` under valgrind's callgrind, less a bare `node -e 1`, for this checkout and
 * for another commit (BENCH_VERSUS, default b49301e; checked out as bench/versus.ts does). With
 * V8 made deterministic (--single-threaded --predictable) the count repeats within about 0.1 %
 * whatever else the machine runs, where the import time of the `cold-start` scenario moves by tens
 * of percent on a shared 2-core machine. Target: each bundle within 5 % of the other commit's.
 *
 * Needs valgrind (Debian's package) and, the first time, git and the npm registry. The synthesized
 * assemblies go to a temporary folder, removed at the end.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { familyBundles } from '../../infra/aws/bundles.js';
import { families } from '../../shared/routes.js';
import { round } from '../stats.js';
import type { BenchRow } from '../types.js';
import { checkoutOf } from '../versus.js';

export const order = 6;
export const long = true;
export const usesLocal = false;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STACK = 'EntityRecordApi';
const TARGET_PERCENT = 5;

/** Instructions callgrind counts for `node <args>`: what it prints as "Collected". */
function instructions(args: string[], env: Record<string, string>, cwd: string): number {
  // callgrind prints its count on stderr.
  const { stderr: output } = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded', '--predictable', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', AWS_LAMBDA_FUNCTION_NAME: 'cold-start-bench', LOG_LEVEL: 'SILENT', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    encoding: 'utf8',
  });
  const match = /Collected : (\d+)/.exec(output ?? '');
  if (!match) throw new Error(`callgrind printed no count:\n${output.slice(-1000)}`);
  return Number(match[1]);
}

/** `npx cdk synth` of the checkout in `dir` into a temporary folder. */
function synth(dir: string): string {
  const out = mkdtempSync(path.join(tmpdir(), 'cold-start-instructions-'));
  execFileSync('npx', ['cdk', 'synth', '--quiet', '-o', out], { cwd: dir, stdio: 'ignore' });
  return out;
}

const IMPORT = 'globalThis.awslambda ??= { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } }; await import(process.argv[1]);';

export async function run(): Promise<BenchRow[]> {
  const commit = process.env.BENCH_VERSUS || 'b49301e';
  const log = (line: string) => console.log(`  import-instructions: ${line}`);
  const other = checkoutOf(commit, log);
  const outs = { here: synth(ROOT), other: synth(other) };
  try {
    const names = families;
    const here = familyBundles(outs.here, STACK, names);
    const there = familyBundles(outs.other, STACK, names);
    const bare = instructions(['-e', '1'], {}, ROOT);
    const rows: BenchRow[] = [];
    for (const family of names) {
      const a = here.get(family);
      const b = there.get(family);
      if (!a || !b) continue;
      const count = (bundle: typeof a) => instructions(['--input-type=module', '-e', IMPORT, bundle.file], bundle.environment, path.dirname(bundle.file)) - bare;
      const mine = count(a);
      const theirs = count(b);
      const change = ((mine - theirs) / theirs) * 100;
      log(`${family}: ${round(mine / 1e6, 1)} M against ${round(theirs / 1e6, 1)} M instructions (${round(change, 1)} %)`);
      rows.push({
        scenario: `cold start in instructions: each bundle imported under callgrind, this checkout against ${commit}`,
        metric: `${family}: instructions to import, less bare node`,
        value: round(mine / 1e6, 1),
        unit: 'M',
        target: `within ${TARGET_PERCENT} % of ${commit}'s`,
        pass: change <= TARGET_PERCENT,
        note: `${commit}: ${round(theirs / 1e6, 1)} M (${change >= 0 ? '+' : ''}${round(change, 1)} %)`,
      });
    }
    return rows;
  } finally {
    rmSync(outs.here, { recursive: true, force: true });
    rmSync(outs.other, { recursive: true, force: true });
  }
}
