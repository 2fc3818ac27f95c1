/**
 * kill -9 of `npm start` (infra/local/main.ts) on a DATA_DIR, with concurrent writes and
 * Idempotency-Key requests in flight: after a restart on the same DATA_DIR every acknowledged
 * create is there, every acknowledged delete is gone, the engine of the killed run is not left
 * running, and a retry of a request cut off by the crash is not refused as still in progress.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { api, sessionCookieOf } from '../../support/http.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ADMIN = { email: 'crash@test.local', password: 'crash-password-1' };
// One round in the suite (each restart starts Java); CRASH_ROUNDS=40 for a long run.
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 1);
const dataDir = mkdtempSync(join(tmpdir(), 'era-crash-'));
let running: ChildProcess | undefined;

afterAll(async () => {
  if (running && running.exitCode === null) {
    const exited = new Promise((r) => running!.once('exit', r));
    running.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      DYNAMODB_ENDPOINT: '',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'ERROR',
      RATE_LIMIT_SESSION_PER_HOUR: '100000',
      RATE_LIMIT_ANONYMOUS_PER_HOUR: '100000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running = child;
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not started in 90 s:\n${output}`)), 90_000);
    const collect = (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
  return { url, child };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

interface InFlight {
  key: string;
  body: Record<string, unknown>;
}

describe('kill -9 of the local runtime with writes in flight', () => {
  it(`keeps every acknowledged write and frees in-flight Idempotency-Keys (${ROUNDS} rounds)`, { timeout: 300_000 }, async () => {
    const created = new Set<string>();
    const deleted = new Set<string>();
    let server = await start();
    for (let round = 0; round < ROUNDS; round++) {
      const login = await api('POST', '/api/v1/auth/login', { baseUrl: server.url, body: ADMIN });
      const cookie = sessionCookieOf(login)!;
      const call = (method: string, path: string, options: Parameters<typeof api>[2] = {}) => api(method, path, { baseUrl: server.url, cookie, ...options });
      const inFlight = new Map<string, InFlight>();
      let stopped = false;
      const writer = async (n: number) => {
        for (let i = 0; !stopped; i++) {
          const entry = { key: randomUUID(), body: { title: `crash ${round}-${n}-${i}` } };
          inFlight.set(entry.key, entry);
          try {
            const response = await call('POST', '/api/v1/tasks', { body: entry.body, headers: { 'Idempotency-Key': entry.key } });
            if (response.status === 201) created.add(response.body.data.id);
            inFlight.delete(entry.key);
            const victim = [...created].find((id) => !deleted.has(id) && Math.random() < 0.5);
            if (victim) {
              const removed = await call('DELETE', `/api/v1/tasks/${victim}`);
              if (removed.status === 200) deleted.add(victim);
            }
          } catch {
            return; // the connection died with the server
          }
        }
      };
      const writers = Array.from({ length: 6 }, (_, n) => writer(n));
      await new Promise((r) => setTimeout(r, 1_500 + Math.random() * 1_500));
      const enginePid = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
      const exited = new Promise((r) => server.child.once('exit', r));
      server.child.kill('SIGKILL');
      await exited;
      stopped = true;
      await Promise.all(writers);

      server = await start();
      // The killed run's engine does not linger beside the new one.
      expect(isAlive(enginePid)).toBe(false);
      const relogin = sessionCookieOf(await api('POST', '/api/v1/auth/login', { baseUrl: server.url, body: ADMIN }))!;
      const get = (path: string) => api('GET', path, { baseUrl: server.url, cookie: relogin });
      const checks = await Promise.all(
        [...created].map(async (id) => ({ id, status: (await get(`/api/v1/tasks/${id}`)).status })),
      );
      for (const { id, status } of checks) expect(status, id).toBe(deleted.has(id) ? 404 : 200);
      for (const entry of inFlight.values()) {
        const retry = await api('POST', '/api/v1/tasks', { baseUrl: server.url, cookie: relogin, body: entry.body, headers: { 'Idempotency-Key': entry.key } });
        expect(retry.status, retry.text).toBe(201);
        created.add(retry.body.data.id);
      }
      expect(created.size).toBeGreaterThan(0);
    }
    expect(existsSync(join(dataDir, 'shared-local-instance.db'))).toBe(true);
  });
});
