import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { OPERATOR } from '../../support/server.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface Run {
  code: number | null;
  output: string;
}

/** Runs `npm start`'s entry (infra/local/main.ts) until it exits or `until` matches its output. */
function start(env: Record<string, string | undefined>, until?: RegExp): { done: Promise<Run>; ready: Promise<string>; stop: (signal: NodeJS.Signals) => void } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'WARN', ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let markReady: (text: string) => void;
  const ready = new Promise<string>((resolve) => (markReady = resolve));
  const collect = (chunk: Buffer) => {
    output += chunk;
    if (until?.test(output)) markReady(output);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const done = new Promise<Run>((resolve) => child.once('exit', (code) => resolve({ code, output })));
  return { done, ready, stop: (signal) => child.kill(signal) };
}

function portAcceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'era-data-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('npm start (infra/local/main.ts)', () => {
  it('ends with one line saying what to do when the port is taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;

    // The shared engine's operator stays the suite's own: start-up ensures the bootstrap admin.
    const run = await start({ PORT: String(port), DYNAMODB_ENDPOINT: inject('dynamoEndpoint'), ADMIN_EMAIL: OPERATOR.email, ADMIN_PASSWORD: OPERATOR.password }).done;
    blocker.close();

    expect(run.code).toBe(1);
    expect(run.output.trim().split('\n').at(-1)).toBe(`Port ${port} is already in use: stop what uses it or set PORT to another port.`);
  });

  it('ends with one line naming what to install when Java is missing', async () => {
    // Node is started by its absolute path; the PATH that is searched for `java` holds nothing.
    const emptyPath = mkdtempSync(join(tmpdir(), 'era-path-'));

    const run = await start({ PORT: '0', PATH: emptyPath, DATA_DIR: dataDir, DYNAMODB_ENDPOINT: '' }).done;
    rmSync(emptyPath, { recursive: true });

    expect(run.code).toBe(1);
    expect(run.output.trim().split('\n').at(-1)).toMatch(/^Java 17 or newer is needed .*openjdk-17-jre-headless/);
  });

  it('persists data in DATA_DIR across a restart and stops DynamoDB Local on SIGTERM', async () => {
    const env = { PORT: '0', DATA_DIR: dataDir, DYNAMODB_ENDPOINT: '', ADMIN_EMAIL: 'restart@test.local', ADMIN_PASSWORD: 'restart-password-1' };
    const listening = /listening on (http:\/\/\S+) \(DynamoDB at http:\/\/127\.0\.0\.1:(\d+)\)/;
    const first = start(env, listening);
    const [, url, enginePort] = listening.exec(await first.ready)!;
    const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD }) });
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    const created = await fetch(`${url}/api/v1/tags`, { method: 'POST', headers: { 'Content-Type': 'application/json', Cookie: cookie }, body: JSON.stringify({ name: 'survives' }) });
    const tagId = ((await created.json()) as { data: { id: string } }).data.id;

    first.stop('SIGTERM');
    const stopped = await first.done;
    const engineStillUp = await portAcceptsConnections(Number(enginePort));
    const second = start(env, listening);
    const [, url2] = listening.exec(await second.ready)!;
    const login2 = await fetch(`${url2}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD }) });
    const read = await fetch(`${url2}/api/v1/tags/${tagId}`, { headers: { Cookie: login2.headers.getSetCookie()[0].split(';')[0] } });
    second.stop('SIGINT');
    const stoppedAgain = await second.done;

    expect(stopped.code).toBe(0);
    expect(engineStillUp).toBe(false);
    expect(read.status).toBe(200);
    expect(((await read.json()) as { data: { name: string } }).data.name).toBe('survives');
    expect(stoppedAgain.code).toBe(0);
    // Two starts of Java: on a loaded 2-core machine each can take close to a minute.
  }, 240_000);
});
