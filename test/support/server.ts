/**
 * Starts the local API exactly as `npm start` does (a child process running infra/local/main.ts)
 * against an engine that is already running, with extra environment for the test at hand.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export const OPERATOR = { email: 'operator@test.local', password: 'operator-password-1' };

export interface TestServer {
  url: string;
  stop(): Promise<void>;
  /** Everything the server printed (its logs), for tests that check what is logged. */
  output(): string;
  /** Ends the server abruptly (SIGKILL: no shutdown code runs), for crash-recovery tests. */
  kill(): Promise<void>;
}

export async function startServer(options: { dynamoEndpoint: string; env?: Record<string, string> }): Promise<TestServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DYNAMODB_ENDPOINT: options.dynamoEndpoint,
      ADMIN_EMAIL: OPERATOR.email,
      ADMIN_PASSWORD: OPERATOR.password,
      LOG_LEVEL: 'WARN',
      // Every test file logs in from 127.0.0.1 as several users; tests of the limits start their own server.
      RATE_LIMIT_ANONYMOUS_PER_HOUR: '100000',
      RATE_LIMIT_SESSION_PER_HOUR: '100000',
      RATE_LIMIT_API_KEY_PER_HOUR: '100000',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    output: () => output,
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
