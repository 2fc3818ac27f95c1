/**
 * This checkout against another commit of the project, side by side on one machine (the `versus`
 * scenario): both run `npm start` on DATA_DIRs of their own holding the same records, and the
 * same requests go to each in alternating rounds, so a slower round of the machine slows both.
 *
 * The other commit is checked out with `git worktree` under node_modules/.cache/versus/<commit>
 * (installed once with `npm ci`, kept for the next run). Each round measures, per server,
 * requests per second and p50 at 8 concurrent clients, and the CPU each process of its tree
 * (the API's Node.js process, the engine's JVM) spent per request, read from /proc.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNpmStart } from './npm-start.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN = { email: 'versus@bench.local', password: 'versus-bench-password-1' };
/** USER_HZ: the unit of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = 100;

/** The other commit's checkout, made and installed on first use. */
export function checkoutOf(commit: string, log: (line: string) => void): string {
  const dir = join(ROOT, 'node_modules', '.cache', 'versus', commit);
  if (!existsSync(join(dir, 'node_modules'))) {
    mkdirSync(join(dir, '..'), { recursive: true });
    if (!existsSync(join(dir, 'package.json'))) {
      log(`checking out ${commit} into ${dir}`);
      execFileSync('git', ['worktree', 'add', '--force', '--detach', dir, commit], { cwd: ROOT, stdio: 'ignore' });
    }
    log(`npm ci in ${dir}`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'ignore' });
  }
  return dir;
}

export interface VersusServer {
  label: string;
  dir: string;
  dataDir: string;
  child: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the first healthy answer. */
  startMs: number;
}

/** `npm start` of the checkout in `dir` on `dataDir`, resolved once /api/health answers 200. */
export async function startAt(label: string, dir: string, dataDir: string): Promise<VersusServer> {
  const started = performance.now();
  const { child, listening } = startNpmStart(dataDir, ADMIN, { LOG_LEVEL: 'ERROR' }, { cwd: dir, label });
  const url = await listening;
  for (;;) {
    const res = await fetch(`${url}/api/health`).catch(() => undefined);
    if (res?.ok) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { label, dir, dataDir, child, url, startMs: performance.now() - started };
}

export async function stopServer(server: VersusServer): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU milliseconds (user + system) spent so far by the API process and by the engine's JVM. */
export function cpuOf(server: VersusServer): { api: number; engine: number } {
  const pids = [server.child.pid!];
  for (let i = 0; i < pids.length; i++) pids.push(...childPids(pids[i]));
  let api = 0;
  let engine = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (command.includes('java')) engine += ms;
      else if (pid === server.child.pid) api += ms;
    } catch {
      // gone meanwhile
    }
  }
  return { api, engine };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request as a typical client sends it (keep-alive, Accept-Encoding: gzip); the body is read,
 * not decoded. A kept-alive socket the server closed as it was reused is retried once, as HTTP
 * clients do.
 */
export async function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
  try {
    return await send(base, method, path, headers, body);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
    return send(base, method, path, headers, body);
  }
}

function send(base: string, method: string, path: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, base),
      { method, agent, headers: { 'accept-encoding': 'gzip', ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('latin1') }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

/** An API key of the admin with every scope. */
export async function adminKey(base: string): Promise<Record<string, string>> {
  const login = await call(base, 'POST', '/api/v1/auth/login', { 'accept-encoding': 'identity' }, ADMIN);
  const cookie = String(login.headers['set-cookie']?.[0] ?? '').split(';')[0];
  const created = await call(base, 'POST', '/api/v1/api-keys', { cookie, origin: base, 'accept-encoding': 'identity' }, { name: 'versus', scopes: ['*'] });
  if (created.status !== 201) throw new Error(`key: ${created.status} ${created.body}`);
  return { authorization: `Bearer ${(JSON.parse(created.body) as { data: { key: string } }).data.key}` };
}

export interface RoundResult {
  rps: number;
  p50: number;
  apiCpuMs: number;
  engineCpuMs: number;
}

/** `count` requests from `concurrency` clients; CPU per request of the API process and the engine. */
export async function round(server: VersusServer, count: number, concurrency: number, request: (i: number) => Promise<Answer>): Promise<RoundResult> {
  const before = cpuOf(server);
  const started = performance.now();
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        const answer = await request(i);
        if (answer.status !== 200) throw new Error(`${server.label}: ${answer.status} ${answer.body.slice(0, 200)}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = performance.now() - started;
  const after = cpuOf(server);
  latencies.sort((a, b) => a - b);
  return {
    rps: (count / elapsed) * 1000,
    p50: latencies[latencies.length >> 1],
    apiCpuMs: (after.api - before.api) / count,
    engineCpuMs: (after.engine - before.engine) / count,
  };
}

export function freshDataDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `versus-${label}-`));
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function destroyAgent(): void {
  agent.destroy();
}
