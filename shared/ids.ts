/**
 * Random ids: a short prefix and 20 base62 characters from the CSPRNG (about 119 bits). Record ids
 * carry their creation time first (newRecordId), so that the record's place in its tenant's listing
 * can be derived from its id (shared/record-ids.ts).
 */
import { randomBytes } from 'node:crypto';
import { BASE62, RANDOM_CHARACTERS, timePrefix, type IdFormat } from './record-ids.js';

export function randomString(length: number, alphabet = BASE62): string {
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

/**
 * A record's id, created at `ms` (epoch milliseconds, the record's createdAt): a UUIDv7 (RFC 9562:
 * 48 bits of time, 74 random bits) for a UUID entity; otherwise the prefix, 8 base62 characters of
 * time and 14 random ones (about 83 bits), 22 characters in all.
 */
export function newRecordId(idFormat: IdFormat, ms: number): string {
  if (idFormat.type === 'uuid') {
    const bytes = randomBytes(16);
    bytes.writeUIntBE(ms, 0, 6);
    bytes[6] = 0x70 | (bytes[6] & 0x0f);
    bytes[8] = 0x80 | (bytes[8] & 0x3f);
    const h = bytes.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  return `${idFormat.prefix}_${timePrefix(ms)}${randomString(RANDOM_CHARACTERS)}`;
}
