/**
 * The README's five-minute tour, run as written (the `sh` block after the one that sets
 * PASSWORD) against `npm start`'s entry started as the tour says (ALLOW_INSECURE_WEBHOOKS=1), with
 * the webhook receiver the tour starts itself on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, sessionCookieOf } from '../support/http.js';
import { OPERATOR, startServer, type TestServer } from '../support/server.js';
import { isolatedTables, newDataDir } from '../functions/webhooks/isolated-server.js';
import { codeBlocksUnder, readme } from './readme.js';

let server: TestServer;
let hookPort: number;
const workDir = mkdtempSync(join(tmpdir(), 'era-tour-'));
const dataDir = newDataDir();

/** A port nothing listens on now: the tour's receiver takes it. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  // Tables of its own: its webhook workers alone deliver its events (the suite's server, which
  // refuses http:// targets, never picks them up).
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ALLOW_INSECURE_WEBHOOKS: '1', DATA_DIR: dataDir, ...isolatedTables() } });
  hookPort = await freePort();
}, 90_000);

afterAll(async () => {
  await server?.stop();
  rmSync(workDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: workDir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the README's five-minute tour", () => {
  it('runs end to end against npm start: sign in, key, create, filter, If-Match, stream, webhook', async () => {
    const blocks = codeBlocksUnder(readme(), 'A five-minute tour').filter((b) => b.lang === 'sh');
    expect(blocks[0].code).toMatch(/^export PASSWORD=/);
    const tour = blocks[1].code;

    const run = await runBash(tour, { API: server.url, EMAIL: OPERATOR.email, PASSWORD: OPERATOR.password, HOOK_PORT: String(hookPort) });
    const hookUrl = `http://127.0.0.1:${hookPort}/hook`;

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe(OPERATOR.email);
    expect(JSON.parse(lines[1]).map((e: { slug: string }) => e.slug)).toContain('tasks');
    const id = /^created (tsk_\S+)$/m.exec(run.stdout)?.[1];
    expect(id).toBeDefined();
    expect(run.stdout).toContain('"title":"Write the report"');
    expect(run.stdout).toMatch(/^in_progress\n412$/m);
    expect(run.stdout).toMatch(new RegExp(`^data: .*"type":"task.updated".*${id}`, 'm'));
    expect(run.stdout).toMatch(/^active$/m);
    // The tour's own receiver on 127.0.0.1 got the new task, signed.
    expect(run.stdout).toMatch(/^receiver got task\.created \(signed\)$/m);
    expect(run.stdout).toContain(`${server.url}/api/docs`);

    // What the tour made goes again: its key, its webhook, its task.
    const cookie = sessionCookieOf(await api('POST', '/api/v1/auth/login', { baseUrl: server.url, body: OPERATOR }))!;
    const keys = await api('GET', '/api/v1/api-keys', { baseUrl: server.url, cookie });
    for (const key of keys.body.data.filter((k: { name: string }) => k.name === 'tour')) await api('DELETE', `/api/v1/api-keys/${key.id}`, { baseUrl: server.url, cookie });
    const hooks = await api('GET', '/api/v1/webhooks', { baseUrl: server.url, cookie });
    for (const hook of hooks.body.data.filter((h: { url: string }) => h.url === hookUrl)) await api('DELETE', `/api/v1/webhooks/${hook.id}`, { baseUrl: server.url, cookie });
    expect((await api('DELETE', `/api/v1/tasks/${id}`, { baseUrl: server.url, cookie })).status).toBe(200);
    const seen = await api('GET', `/api/v1/tasks?filter=${encodeURIComponent('{"title":"Seen by the webhook"}')}`, { baseUrl: server.url, cookie });
    for (const task of seen.body.data) await api('DELETE', `/api/v1/tasks/${task.id}`, { baseUrl: server.url, cookie });
  }, 120_000);
});
