/**
 * The README's five-minute tour, run as written (the `sh` block after the one that sets
 * PASSWORD) against `npm start`'s entry, with a local webhook receiver.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, sessionCookieOf } from '../support/http.js';
import { OPERATOR, startServer, type TestServer } from '../support/server.js';
import { codeBlocksUnder, readme } from './readme.js';

let server: TestServer;
let receiver: Server;
let hookUrl: string;
const workDir = mkdtempSync(join(tmpdir(), 'era-tour-'));

beforeAll(async () => {
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ALLOW_INSECURE_WEBHOOKS: '1' } });
  receiver = createServer((req, res) => res.writeHead(204).end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
}, 90_000);

afterAll(async () => {
  await server?.stop();
  receiver?.close();
  rmSync(workDir, { recursive: true, force: true });
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

    const run = await runBash(tour, { API: server.url, EMAIL: OPERATOR.email, PASSWORD: OPERATOR.password, HOOK: hookUrl });

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
    expect(run.stdout).toContain(`${server.url}/api/docs`);

    // What the tour made goes again: its key, its webhook, its task.
    const cookie = sessionCookieOf(await api('POST', '/api/v1/auth/login', { baseUrl: server.url, body: OPERATOR }))!;
    const keys = await api('GET', '/api/v1/api-keys', { baseUrl: server.url, cookie });
    for (const key of keys.body.data.filter((k: { name: string }) => k.name === 'tour')) await api('DELETE', `/api/v1/api-keys/${key.id}`, { baseUrl: server.url, cookie });
    const hooks = await api('GET', '/api/v1/webhooks', { baseUrl: server.url, cookie });
    for (const hook of hooks.body.data.filter((h: { url: string }) => h.url === hookUrl)) await api('DELETE', `/api/v1/webhooks/${hook.id}`, { baseUrl: server.url, cookie });
    expect((await api('DELETE', `/api/v1/tasks/${id}`, { baseUrl: server.url, cookie })).status).toBe(200);
  }, 120_000);
});
