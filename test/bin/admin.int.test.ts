/**
 * `npm run admin -- <command>` against the running API (npm start's entry, the suite's server)
 * and its tables: every command, an import of 2,000 CSV rows (20 batches) killed part-way and re-run, and an
 * export that imports back.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { api, baseUrl } from '../support/http.js';
import { login, uniqueEmail } from '../support/identity.js';
import { ROOT } from '../readme/readme.js';

const work = mkdtempSync(join(tmpdir(), 'era-admin-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function admin(args: string[], options: { killWhen?: RegExp } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: join(work, 'data'), DYNAMODB_ENDPOINT: inject('dynamoEndpoint'), API_URL: baseUrl(), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => {
      stderr += c;
      if (options.killWhen?.test(stderr)) child.kill('SIGKILL');
    });
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The CLI in a terminal of its own (a pseudo-terminal made by util-linux's `script`), so it draws
 * its progress bar as a person sees it; `interruptWhen` types Ctrl-C once the output matches.
 */
function adminInTerminal(args: string[], options: { interruptWhen: RegExp }): Promise<{ code: number | null; output: string }> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, '--import', 'tsx', 'bin/admin.ts', ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: join(work, 'data'), DYNAMODB_ENDPOINT: inject('dynamoEndpoint'), API_URL: baseUrl(), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', COLUMNS: '120' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let sent = false;
    const collect = (c: Buffer) => {
      output += c;
      if (!sent && options.interruptWhen.test(output)) {
        sent = true;
        child.stdin.write('\x03');
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

const password = /with password (\S+) \(shown once\)/;
let tenantId: string;
let tenantAdmin: { email: string; password: string };

beforeAll(async () => {
  const email = uniqueEmail('cli-admin');
  const run = await admin(['tenants', 'create', 'CLI tenant', '--admin-email', email]);
  expect(run.code).toBe(0);
  tenantId = /tenant (ten_\S+)/.exec(run.stdout)![1];
  tenantAdmin = { email, password: password.exec(run.stdout)![1] };
}, 60_000);

describe('npm run admin', () => {
  it('tenants create: a tenant whose admin signs in with the printed password', async () => {
    expect(tenantId).toMatch(/^ten_/);
    await expect(login(tenantAdmin.email, tenantAdmin.password)).resolves.toMatch(/^session=/);
  }, 120_000);

  it('users create, list and role', async () => {
    const email = uniqueEmail('cli-user');

    const created = await admin(['users', 'create', email, '--name', 'Cli User', '--tenant', tenantId]);
    const listed = await admin(['users', 'list', '--tenant', tenantId, '--json']);
    const promoted = await admin(['users', 'role', email, 'admin']);

    expect(created.code).toBe(0);
    await login(email, password.exec(created.stdout)![1]);
    expect(JSON.parse(listed.stdout).map((u: { email: string }) => u.email)).toEqual(expect.arrayContaining([email, tenantAdmin.email]));
    expect(promoted.stdout.trim()).toBe(`${email} is now admin`);
    const me = await api('GET', '/api/v1/users/me', { cookie: await login(email, password.exec(created.stdout)![1]) });
    expect(me.body.data.role).toBe('admin');
  }, 120_000);

  it('keys create (shown once), list and revoke', async () => {
    const created = await admin(['keys', 'create', tenantAdmin.email, '--scopes', 'tasks:read', '--name', 'from the CLI']);
    const key = created.stdout.trim();
    const keyId = /key (key_\S+)/.exec(created.stderr)![1];

    expect((await api('GET', '/api/v1/tasks', { apiKey: key })).status).toBe(200);
    expect((await api('POST', '/api/v1/tasks', { apiKey: key, body: { title: 'no' } })).status).toBe(403);
    const listed = await admin(['keys', 'list', tenantAdmin.email]);
    expect(listed.stdout).toContain(keyId);
    expect(listed.stdout).not.toContain(key);
    const revoked = await admin(['keys', 'revoke', keyId]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^revoked ${keyId} at `));
    // The running API cached the key when it verified it (API_KEY_CACHE_SECONDS, as another
    // container would); the tables no longer hold it: the list says so.
    const after = await admin(['keys', 'list', tenantAdmin.email, '--json']);
    expect(JSON.parse(after.stdout).map((k: { id: string }) => k.id)).not.toContain(keyId);
  }, 120_000);

  it('keys create without usable scopes says which exist', async () => {
    const run = await admin(['keys', 'create', tenantAdmin.email, '--scopes', 'everything']);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/unknown scope 'everything'/);
  }, 120_000);

  it('reset-password: the old password stops working, the printed one works', async () => {
    const run = await admin(['reset-password', tenantAdmin.email]);
    const fresh = /new password (\S+)/.exec(run.stdout)![1];

    await expect(login(tenantAdmin.email, tenantAdmin.password)).rejects.toThrow(/401/);
    await expect(login(tenantAdmin.email, fresh)).resolves.toMatch(/^session=/);
    tenantAdmin.password = fresh;
  }, 120_000);

  it('import: 2,000 CSV rows with 3 bad ones, killed part-way and re-run, imports each good row once and reports the bad', async () => {
    const file = join(work, 'tasks.csv');
    const lines = ['title,description,status,priority'];
    const bad = new Set([17, 1000, 1999]);
    for (let i = 1; i <= 2_000; i++) lines.push(`Task ${i},"Row ${i}, with a comma",todo,${bad.has(i) ? 'urgent' : ['low', 'medium', 'high'][i % 3]}`);
    writeFileSync(file, `${lines.join('\n')}\n`);

    const killed = await admin(['import', 'tasks', file, '--as', tenantAdmin.email], { killWhen: /import tasks: ([6-9]\d{2}|1[0-4]\d{2})\/2000/ });
    const rerun = await admin(['import', 'tasks', file, '--as', tenantAdmin.email]);

    expect(killed.code).toBeNull();
    expect(rerun.code).toBe(2);
    expect(rerun.stdout).toMatch(/^imported 1997 of 2000 rows into tasks in [\d.]+ s \(\d+ rows\/s\), \d+ of them by an earlier run; 3 failed: see .*tasks\.csv\.errors\.ndjson$/m);
    expect(rerun.stderr).toMatch(/import tasks: 2000\/2000 rows \(100%\), \d+ rows\/s, ETA/);
    const errors = readFileSync(`${file}.errors.ndjson`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(errors.map((e) => e.row)).toEqual([17, 1000, 1999]);
    expect(errors[0]).toMatchObject({ details: { priority: expect.any(String) }, item: { title: 'Task 17', priority: 'urgent' } });
    const cookie = await login(tenantAdmin.email, tenantAdmin.password);
    const listed = await api('GET', '/api/v1/tasks?limit=1', { cookie });
    expect(listed.body.pagination.total).toBe(1997);
  }, 600_000);

  it('import in a terminal, interrupted with Ctrl-C: the cursor is shown again and it says how to resume', async () => {
    const file = join(work, 'interrupted.csv');
    writeFileSync(file, ['title,priority', ...Array.from({ length: 3000 }, (_, i) => `Interrupted ${i},low`)].join('\n'));

    const run = await adminInTerminal(['import', 'tasks', file, '--as', tenantAdmin.email], { interruptWhen: /import tasks \|.*\b[1-9]\d{2,3}\/3000/ });
    const hidden = run.output.indexOf('\x1b[?25l');
    const shown = run.output.lastIndexOf('\x1b[?25h');

    expect(run.code).toBe(130);
    expect(hidden).toBeGreaterThanOrEqual(0);
    expect(shown).toBeGreaterThan(hidden);
    expect(run.output).toMatch(/import tasks interrupted after \d+ of 3000 rows\. Run the same command again to resume: the rows already imported are recognised and not imported twice\./);
  }, 120_000);

  it('export writes CSV that imports back to the same records; NDJSON in, a filter out', async () => {
    const owner = uniqueEmail('cli-export');
    const other = uniqueEmail('cli-import');
    await admin(['users', 'create', owner, '--tenant', tenantId, '--password', 'export-pass-1']);
    await admin(['users', 'create', other, '--tenant', tenantId, '--password', 'import-pass-1']);
    const ndjson = join(work, 'customers.ndjson');
    writeFileSync(ndjson, Array.from({ length: 250 }, (_, i) => JSON.stringify({ name: `Customer ${i}`, email: `c${i}@example.com`, ...(i % 2 ? { phone: `+1 555 ${1000 + i}` } : {}) })).join('\n'));
    const exported = join(work, 'customers.csv');
    const again = join(work, 'customers-again.csv');

    const imported = await admin(['import', 'customers', ndjson, '--as', owner]);
    const out = await admin(['export', 'customers', '--as', owner, '-o', exported]);
    const back = await admin(['import', 'customers', exported, '--as', other]);
    const out2 = await admin(['export', 'customers', '--as', other, '-o', again]);
    const filtered = await admin(['export', 'customers', '--as', owner, '--filter', '{"name":"Customer 7"}', '--format', 'ndjson']);

    expect(imported.stdout).toMatch(/^imported 250 of 250 rows/m);
    expect(out.stderr).toMatch(/exported 250 customers/);
    expect(back.stdout).toMatch(/^imported 250 of 250 rows/m);
    const rows = (file: string) =>
      (parse(readFileSync(file, 'utf8'), { columns: true }) as Record<string, string>[])
        .map(({ id, createdAt, updatedAt, ...rest }) => rest)
        .sort((a, b) => a.name.localeCompare(b.name));
    expect(out2.code).toBe(0);
    expect(rows(again)).toEqual(rows(exported));
    expect(rows(exported)).toHaveLength(250);
    expect(rows(exported).find((r) => r.name === 'Customer 1')).toMatchObject({ email: 'c1@example.com', phone: '+1 555 1001' });
    expect(filtered.stdout.trim().split('\n').map((l) => JSON.parse(l).name)).toEqual(['Customer 7']);
  }, 300_000);

  it('--help on every command', async () => {
    for (const command of [[], ['tenants', 'create'], ['users', 'create'], ['users', 'list'], ['users', 'role'], ['keys', 'create'], ['keys', 'list'], ['keys', 'revoke'], ['reset-password'], ['import'], ['export']]) {
      const run = await admin([...command, '--help']);
      expect(run.code, command.join(' ')).toBe(0);
      expect(run.stdout).toMatch(/^Usage: npm run admin -- /);
    }
  }, 400_000);
});
