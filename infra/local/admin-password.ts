/**
 * The bootstrap admin's generated password, kept in DATA_DIR/admin-password (owner-only) from
 * the moment it is generated until the admin first signs in, so that no way a start can end
 * (a taken port, a crash, Ctrl-C before the banner) loses it: the first start that serves shows
 * it. It is written before the user is created, removed when the admin signs in, and dropped at
 * start when it no longer opens the account (ADMIN_PASSWORD given, a reset, a change).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface PendingPassword {
  email: string;
  password: string;
}

export const PENDING_PASSWORD_FILE = 'admin-password';

export function pendingPasswordPath(dataDir: string): string {
  return join(resolve(dataDir), PENDING_PASSWORD_FILE);
}

export function readPendingPassword(dataDir: string): PendingPassword | undefined {
  const file = pendingPasswordPath(dataDir);
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<PendingPassword>;
    return typeof value.email === 'string' && typeof value.password === 'string' ? { email: value.email, password: value.password } : undefined;
  } catch {
    return undefined;
  }
}

export function writePendingPassword(dataDir: string, pending: PendingPassword): void {
  const file = pendingPasswordPath(dataDir);
  mkdirSync(resolve(dataDir), { recursive: true });
  writeFileSync(file, `${JSON.stringify(pending)}\n`, { mode: 0o600 });
  // mode applies only when the file is created; an older file keeps owner-only too.
  chmodSync(file, 0o600);
}

export function clearPendingPassword(dataDir: string): void {
  rmSync(pendingPasswordPath(dataDir), { force: true });
}
