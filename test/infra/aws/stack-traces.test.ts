/**
 * The stack-trace mapper injected into every bundle: a bundle built like a family's (minified ESM,
 * external source map, infra/aws/runtime/stack-traces.ts injected) prints stacks that name the
 * TypeScript source and line, without --enable-source-maps.
 */
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EsbuildBundling, REQUIRE_SHIM, STACK_TRACES } from '../../../infra/aws/functions.js';

describe('stack traces of a bundle', () => {
  it('point at the TypeScript source once a stack is printed, with no flag at start', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'stack-traces-'));
    try {
      const entry = path.join(dir, 'failing.ts');
      writeFileSync(entry, "export function fail(): never {\n  throw new Error('boom');\n}\ntry {\n  fail();\n} catch (error) {\n  console.log((error as Error).stack);\n}\n");
      const outfile = path.join(dir, 'out', 'index.mjs');
      await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', minify: true, sourcemap: true, sourcesContent: false, inject: [STACK_TRACES], banner: { js: REQUIRE_SHIM }, outfile, logLevel: 'error' });

      const run = spawnSync(process.execPath, [outfile], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });

      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(/^Error: boom/);
      expect(run.stdout).toMatch(/failing\.ts:2:\d+/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('map frames of a chunk loaded on first use, as the app bundles them (code splitting)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'stack-traces-chunks-'));
    try {
      writeFileSync(path.join(dir, 'later.ts'), "export function fail(): never {\n  throw new Error('boom in a chunk');\n}\n");
      const entry = path.join(dir, 'entry.ts');
      writeFileSync(entry, "export async function handler(): Promise<string> {\n  try {\n    (await import('./later.js')).fail();\n  } catch (error) {\n    return (error as Error).stack ?? '';\n  }\n  return '';\n}\n");
      const out = path.join(dir, 'out');
      new EsbuildBundling(entry, [], []).tryBundle(out);

      const run = spawnSync(process.execPath, ['--input-type=module', '-e', 'const { handler } = await import(process.argv[1]); console.log(await handler());', path.join(out, 'index.mjs')], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '' },
      });

      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(/^Error: boom in a chunk/);
      expect(run.stdout).toMatch(/later\.ts:2:\d+/);
      expect(run.stdout).toMatch(/entry\.ts:3:\d+/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
