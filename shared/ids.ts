/** Random ids: a short prefix and 20 base62 characters from the CSPRNG (about 119 bits). */
import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomString(length: number, alphabet = ALPHABET): string {
  let out = '';
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % alphabet.length);
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomString(20)}`;
}

export function newUuid(): string {
  return randomUUID();
}
