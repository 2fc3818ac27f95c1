/**
 * Sample data: `SEED=demo npm start` on an empty DATA_DIR, and `npm run seed`, create the demo
 * tenant, its two users (who sign in with the printed passwords) and a few hundred records.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { ROOT } from '../../readme/readme.js';

const dataDir = mkdtempSync(join(tmpdir(), 'era-seed-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, DYNAMODB_ENDPOINT: '', ADMIN_EMAIL: '', ADMIN_PASSWORD: '', LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

function run(script: string, extra: Record<string, string>, until?: RegExp): { ready: Promise<string>; exited: Promise<number | null>; stop: () => Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, env: { ...process.env, ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let markReady: (text: string) => void;
  const ready = new Promise<string>((resolve) => (markReady = resolve));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      markReady(output);
      resolve(code);
    }),
  );
  const collect = (chunk: Buffer) => {
    output += chunk;
    if (until?.test(output)) markReady(output);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return {
    ready,
    exited,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const signIn = /(admin|user)\s+(\S+@example\.com)\s+password (\S+)/g;

describe('sample data', () => {
  it('SEED=demo npm start on an empty DATA_DIR seeds it and says how to sign in; npm run seed then adds nothing', async () => {
    const server = run('infra/local/main.ts', { SEED: 'demo' }, /Sample data:[\s\S]*user\s+demo-user\S+\s+password \S+/);
    const output = await server.ready;
    const url = /listening on (http:\/\/\S+)/.exec(output)![1];

    expect(output).toMatch(/Sample data: tenant "Demo" \(ten_\S+\) with 80 products, 60 customers, 120 orders, 240 tasks\./);
    const users = [...output.matchAll(signIn)].map((m) => ({ role: m[1], email: m[2], password: m[3] }));
    expect(users.map((u) => u.email)).toEqual(['demo-admin@example.com', 'demo-user@example.com']);
    const cookies: Record<string, string> = {};
    for (const u of users) {
      const login = await api('POST', '/api/v1/auth/login', { baseUrl: url, body: { email: u.email, password: u.password } });
      expect(login.status).toBe(200);
      cookies[u.role] = login.headers.getSetCookie()[0].split(';')[0];
    }
    const count = async (slug: string, role: string) => (await api('GET', `/api/v1/${slug}?limit=1`, { baseUrl: url, cookie: cookies[role] })).body.pagination.total;
    expect(await count('tasks', 'admin')).toBe(240);
    expect(await count('tasks', 'user')).toBe(160 + 0);
    expect(await count('products', 'user')).toBeGreaterThanOrEqual(80);
    expect(await count('customers', 'user')).toBe(60);
    expect(await count('orders', 'user')).toBe(120);

    const again = run('bin/seed.ts', {});
    expect(await again.exited).toBe(0);
    expect(await again.ready).toMatch(/the demo tenant \(ten_\S+\) exists already; nothing added/);
    expect(await count('tasks', 'admin')).toBe(240);
    await server.stop();

    const restart = run('infra/local/main.ts', { SEED: 'demo' }, /SEED=demo loads the sample data into an empty DATA_DIR only/);
    expect(await restart.ready).toMatch(/run npm run seed to add it/);
    await restart.stop();
  }, 400_000);
});
