/**
 * Everything a run's test files put in the temp folder (CDK's cdk.out* assemblies, test
 * directories) goes into one folder of its own, removed at the end: the test processes inherit
 * this TMPDIR. The integration project's global-setup.ts does the same for its files.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const runTmp = mkdtempSync(join(tmpdir(), 'entity-record-api-tests-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = runTmp;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(runTmp, { recursive: true, force: true });
  };
}
