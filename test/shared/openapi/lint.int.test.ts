/**
 * The served document passes Redocly's `recommended` rules (redocly.yaml says why three rules are off, and what replaces one).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('the OpenAPI document', () => {
  it('lints clean with @redocly/cli (no errors, no warnings)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, (await api('GET', '/api/v1/openapi.json')).text);

      const { stdout } = await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file],
        { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, maxBuffer: 64 * 1024 * 1024 },
      ).catch((error: { stdout?: string; stderr?: string }) => {
        // A lint with errors exits non-zero: its report is still on stdout.
        if (error.stdout) return { stdout: error.stdout };
        throw error;
      });
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };

      expect(report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
