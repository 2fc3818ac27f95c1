import { describe, expect, it } from 'vitest';
import { DUMMY_PASSWORD_HASH, generatePassword, hashPassword, parseHash, verifyPassword } from '../../../shared/auth/passwords.js';

describe('password hashing', () => {
  it('stores a self-describing scrypt string with its parameters, salt and hash', async () => {
    const stored = await hashPassword('correct horse');

    const parsed = parseHash(stored);
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(parsed?.salt.length).toBe(16);
    expect(parsed?.hash.length).toBe(32);
  });

  it('verifies the right password and refuses a wrong one', async () => {
    const stored = await hashPassword('correct horse');

    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('correct horsE', stored)).toBe(false);
  });

  it('salts every hash, so the same password hashes differently', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);

    expect(a).not.toBe(b);
    expect(await verifyPassword('same password', b)).toBe(true);
  });

  it('refuses malformed stored strings instead of throwing', async () => {
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$a$b$c$d$e')).toBe(false);
    expect(await verifyPassword('x', 'bcrypt$1$2$3$AAAA$AAAA')).toBe(false);
  });

  it('has a dummy hash with the real parameters that no usual password matches', async () => {
    const dummy = parseHash(DUMMY_PASSWORD_HASH);

    expect(dummy).toMatchObject({ N: 16384, r: 8, p: 1 });
    expect(dummy?.salt.length).toBe(16);
    expect(dummy?.hash.length).toBe(32);
    expect(await verifyPassword('password', DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword('', DUMMY_PASSWORD_HASH)).toBe(false);
  });

  it('generates random passwords long enough for the password rule', () => {
    const a = generatePassword();

    expect(a.length).toBeGreaterThanOrEqual(16);
    expect(a).not.toBe(generatePassword());
  });
});
