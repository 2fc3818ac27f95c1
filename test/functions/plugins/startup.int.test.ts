/**
 * A bad plugin stops start-up with one line naming its file: `npm start` (infra/local/main.ts)
 * and the plugins function's cold start. The plugins are read from a directory of the test's own
 * (PLUGIN_DIR), so no other process sees them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'plugins-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(script: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', ...script], {
    cwd: ROOT,
    env: { ...process.env, PLUGIN_DIR: dir, LOG_LEVEL: 'SILENT', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    encoding: 'utf8',
    timeout: 90_000,
  });
}

function startLocal() {
  return run(['infra/local/main.ts'], {
    PORT: '0',
    DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
    ADMIN_EMAIL: 'operator@test.local',
    ADMIN_PASSWORD: 'operator-password-1',
  });
}

function coldStart() {
  return run(['--input-type=module', '-e', "await import('./functions/plugins/handler.ts'); console.log('started');"], {});
}

describe('plugin start-up', () => {
  it('refuses a declaration with a bad method and auth: npm start exits with one line naming the file', () => {
    writeFileSync(
      join(dir, 'broken.plugin.ts'),
      `export default ${JSON.stringify({ name: 'broken', routes: [{ method: 'FETCH', path: '/api/v1/broken', handler: 'go', auth: 'maybe' }] })};\n`,
    );
    writeFileSync(join(dir, 'broken.handlers.ts'), 'export async function go() { return { data: {} }; }\n');

    const local = startLocal();
    const lambda = coldStart();

    const file = join(dir, 'broken.plugin.ts');
    expect(local.status).toBe(1);
    expect(local.stdout).not.toContain('listening');
    expect(local.stderr.trim()).toBe(
      `Could not start: Plugin ${file} is invalid: routes[0].method: must be one of GET, POST, PATCH, PUT, DELETE; routes[0].auth: must be one of required, optional, none`,
    );
    expect(lambda.status).not.toBe(0);
    expect(lambda.stdout).not.toContain('started');
    expect(lambda.stderr).toContain(`Plugin ${file} is invalid: routes[0].method`);
  });

  it('refuses a route whose handler the handlers module does not export, naming both files', () => {
    rmSync(join(dir, 'broken.plugin.ts'), { force: true });
    rmSync(join(dir, 'broken.handlers.ts'), { force: true });
    writeFileSync(
      join(dir, 'partial.plugin.ts'),
      `export default ${JSON.stringify({ name: 'partial', routes: [{ method: 'GET', path: '/api/v1/partial', handler: 'missing', auth: 'none' }] })};\n`,
    );
    writeFileSync(join(dir, 'partial.handlers.ts'), 'export async function present() { return { data: {} }; }\n');

    const lambda = coldStart();

    expect(lambda.status).not.toBe(0);
    expect(lambda.stderr).toContain(`names handler 'missing', which ${join(dir, 'partial.handlers.ts')} does not export as a function`);
  });

  it('compiles a schema that has no precompiled validator at start-up, and refuses one that is not a valid JSON Schema', () => {
    rmSync(join(dir, 'partial.plugin.ts'), { force: true });
    rmSync(join(dir, 'partial.handlers.ts'), { force: true });
    const declare = (body: unknown) =>
      writeFileSync(
        join(dir, 'schemas.plugin.ts'),
        `export default ${JSON.stringify({ name: 'schemas', routes: [{ method: 'POST', path: '/api/v1/schemas', handler: 'go', auth: 'required', body }] })};\n`,
      );
    writeFileSync(join(dir, 'schemas.handlers.ts'), 'export async function go() { return { data: {} }; }\n');

    declare({ type: 'object', properties: { n: { type: 'integer', default: 1 } } });
    const valid = coldStart();
    declare({ type: 'object', properties: { n: { type: 'integr' } } });
    const local = startLocal();
    const lambda = coldStart();

    expect(valid.stderr).toBe('');
    expect(valid.stdout).toContain('started');
    const message = `Could not start: Plugin ${join(dir, 'schemas.plugin.ts')} is invalid: POST /api/v1/schemas body is not a valid JSON Schema (schema is invalid: data/properties/n/type must be equal to one of the allowed values`;
    expect(local.status).toBe(1);
    expect(local.stderr.trim().startsWith(message)).toBe(true);
    expect(lambda.status).not.toBe(0);
    expect(lambda.stderr).toContain(message.slice('Could not start: '.length));
  });
});
