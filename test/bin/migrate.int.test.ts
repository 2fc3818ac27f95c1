/**
 * `npm run migrate` against the engine of the running test server (DYNAMODB_ENDPOINT): each
 * entity's layout and migration state, as text and as JSON.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

function migrate(...args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'bin/migrate.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DYNAMODB_ENDPOINT: inject('dynamoEndpoint'), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    timeout: 120_000,
  });
}

describe('npm run migrate', () => {
  it('prints every entity with its layout hash, state and records processed of total', async () => {
    const { stdout } = await migrate('--wait');

    for (const slug of ['tasks', 'products', 'orders']) expect(stdout).toMatch(new RegExp(`^${slug}\\s+done\\s+layout [0-9a-f]{16}\\s+records \\d+ of \\d+`, 'm'));
  }, 120_000);

  it('prints the same as JSON with --json', async () => {
    const { stdout } = await migrate('--json');
    const statuses = JSON.parse(stdout) as { entity: string; state: string; layout: { hash: string; indexes: unknown[] }; report: { count: number } }[];

    const tasks = statuses.find((s) => s.entity === 'tasks');
    expect(tasks).toMatchObject({ state: 'done', layout: { hash: expect.stringMatching(/^[0-9a-f]{16}$/) }, report: { count: 0 } });
    expect(tasks!.layout.indexes).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'status' })]));
  }, 120_000);
});
