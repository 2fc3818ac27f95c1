/**
 * The local deployment secret (shared/deployment-secret.ts): kept in DATA_DIR/deployment.key
 * so cursors and encrypted webhook secrets stay valid across restarts, created on first start.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEPLOYMENT_SECRET_ENV, resetDeploymentSecret } from '../../shared/deployment-secret.js';

/** Sets DEPLOYMENT_SECRET for the handlers of this process (unless it is already set). */
export function useLocalDeploymentSecret(dataDir: string | undefined): void {
  if (process.env[DEPLOYMENT_SECRET_ENV]) return;
  let secret: string;
  if (dataDir) {
    const dir = resolve(dataDir);
    const file = join(dir, 'deployment.key');
    if (existsSync(file)) {
      secret = readFileSync(file, 'utf8').trim();
    } else {
      mkdirSync(dir, { recursive: true });
      secret = randomBytes(32).toString('base64url');
      // wx: two processes starting at once must not overwrite each other's key.
      try {
        writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        secret = readFileSync(file, 'utf8').trim();
      }
    }
  } else {
    secret = randomBytes(32).toString('base64url');
  }
  process.env[DEPLOYMENT_SECRET_ENV] = secret;
  resetDeploymentSecret();
}
