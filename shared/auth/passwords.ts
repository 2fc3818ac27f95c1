/**
 * Password hashing with scrypt (node:crypto, asynchronous so the event loop keeps serving).
 *
 * Stored form, self-describing so parameters can change later without a migration:
 *   scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>
 * with N=16384, r=8, p=1, a 16-byte random salt per password and a 32-byte key.
 * Verification recomputes with the stored parameters and compares with timingSafeEqual.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { MIN_PASSWORD_LENGTH } from './body-schemas.js';

export const SCRYPT_PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
export { MIN_PASSWORD_LENGTH };

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const { N, r, p } = SCRYPT_PARAMS;
  const hash = await scrypt(password, salt, KEY_LENGTH, { N, r, p });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

export function parseHash(stored: string): ParsedHash | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0)) return undefined;
  const salt = Buffer.from(parts[4], 'base64');
  const hash = Buffer.from(parts[5], 'base64');
  if (salt.length === 0 || hash.length === 0) return undefined;
  return { N, r, p, salt, hash };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const candidate = await scrypt(password, parsed.salt, parsed.hash.length, { N: parsed.N, r: parsed.r, p: parsed.p });
  return timingSafeEqual(candidate, parsed.hash);
}

/**
 * A hash nobody's password matches (of 32 random bytes, discarded), with the same parameters as
 * real ones: verified against for unknown e-mails, so that a wrong e-mail costs as much as a
 * wrong password.
 */
export const DUMMY_PASSWORD_HASH = 'scrypt$16384$8$1$SBi9BvbGG/Lw1WTitf8gUA==$UJUd1vTYarotK2qTU7mRFL7JdYMItW+rR5tPqIN2xZ0=';

/** A random password for the bootstrap admin: 24 characters of base64url (144 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
