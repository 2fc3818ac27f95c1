/**
 * A generated admin password is never lost: a first start that ends before serving (the port is
 * taken) keeps it, the next start that serves shows it, the first sign-in retires it, and the
 * admin CLI's reset-password sets a new one against the running npm start.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../readme/readme.js';

const dataDir = mkdtempSync(join(tmpdir(), 'era-password-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// Its own engine on its own DATA_DIR: the bootstrap admin here is admin@localhost, not the suite's operator.
const env = { HOST: '127.0.0.1', DATA_DIR: dataDir, DYNAMODB_ENDPOINT: '', ADMIN_EMAIL: '', ADMIN_PASSWORD: '', LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

function start(port: string): { output: () => string; ready: Promise<string>; exited: Promise<number | null>; stop: () => Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], { cwd: ROOT, env: { ...process.env, ...env, PORT: port }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let markReady: (url: string) => void;
  const ready = new Promise<string>((resolve) => (markReady = resolve));
  const collect = (chunk: Buffer) => {
    output += chunk;
    const match = /Lost the password\?/.test(output) && /listening on (http:\/\/\S+)/.exec(output);
    if (match) markReady(match[1]);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    output: () => output,
    ready,
    exited,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function runAdmin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function signIn(url: string, password: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'admin@localhost', password }) });
  return response.status;
}

describe('the generated admin password', () => {
  it('survives a first start that could not serve, is shown until the first sign-in, and can be reset', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const takenPort = String((blocker.address() as { port: number }).port);

    // 1. The port is taken: the admin is created, the start ends before it serves.
    const first = start(takenPort);
    expect(await first.exited).toBe(1);
    blocker.close();
    expect(first.output()).toMatch(/generated password is kept: the next start that serves shows it\.\nPort \d+ is already in use/);
    const file = join(dataDir, 'admin-password');
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // 2. The next start that serves shows it, with where to go and how to sign in.
    const second = start('0');
    const url = await second.ready;
    const password = /Password {3}(\S+) {3}\(generated/.exec(second.output())![1];
    expect(second.output()).toContain(`API        ${url}/api/v1`);
    expect(second.output()).toContain(`${url}/api/docs`);
    expect(second.output()).toContain(`${url}/dashboard`);
    expect(second.output()).toContain('Admin      admin@localhost');
    expect(second.output()).toContain('npm run admin -- reset-password admin@localhost');
    expect(await signIn(url, password)).toBe(200);
    expect(existsSync(file)).toBe(false);

    // 3. Signed in once: it is not shown again; reset-password (against the running start) gives a new one.
    const reset = await runAdmin(['reset-password', 'admin@localhost']);
    const fresh = /new password (\S+)/.exec(reset.stdout)?.[1];
    expect(reset.code, reset.stderr).toBe(0);
    expect(await signIn(url, password)).toBe(401);
    expect(await signIn(url, fresh!)).toBe(200);
    await second.stop();

    const third = start('0');
    await third.ready;
    expect(third.output()).not.toContain(password);
    // It was generated, then reset: the banner claims no choice the admin never made.
    expect(third.output()).toMatch(/Password {3}not shown: a generated password is shown only until the admin first signs in/);
    expect(third.output()).not.toMatch(/the one you chose/);
    await third.stop();
  }, 300_000);
});
