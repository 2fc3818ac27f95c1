/**
 * `npm start` as the benches run it (bench/crash.ts, bench/soak.ts): a child process running
 * infra/local/main.ts on 127.0.0.1 and a free port, with a DATA_DIR and engine of its own, the
 * given admin, and the rate limits out of the way (the limits are not under test there: hundreds
 * of requests a second go through one key).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface StartedServer {
  child: ChildProcess;
  /** Its URL once it listens; rejects if it exits first or does not listen within 180 s. */
  listening: Promise<string>;
  /** The last 20,000 characters it wrote. */
  output(): string;
}

/** `where.cwd`: another checkout's root (bench/versus.ts); `where.label` names it in errors. */
export function startNpmStart(dataDir: string, admin: { email: string; password: string }, env: Record<string, string> = {}, where: { cwd?: string; label?: string } = {}): StartedServer {
  const label = where.label ?? 'npm start';
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    cwd: where.cwd ?? ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      DYNAMODB_ENDPOINT: '',
      AWS_ENDPOINT_URL_DYNAMODB: '',
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
      RATE_LIMIT_API_KEY_PER_HOUR: '1000000000',
      RATE_LIMIT_SESSION_PER_HOUR: '1000000000',
      RATE_LIMIT_ANONYMOUS_PER_HOUR: '1000000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not listen within 180 s:\n${output}`)), 180_000);
    const collect = (chunk: Buffer) => {
      output = (output + chunk).slice(-20_000);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}:\n${output}`));
    });
  });
  return { child, listening, output: () => output };
}
