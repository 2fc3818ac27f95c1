/**
 * Record ids of an import. With an Idempotency-Key, each item's id is derived (SHA-256) from the
 * caller's idempotency scope, the key, the entity, the item's index and its JSON: a re-run of the
 * same request (a retry after a timeout or a fault part-way) plans the very same ids, and the
 * conditional Puts of shared/import/write.ts turn records already written into "already imported"
 * instead of duplicates. Without the header, ids are random (a retry is a new import).
 */
import { createHash } from 'node:crypto';
import { newId, newUuid } from '../ids.js';
import type { LoadedEntity } from '../registry/types.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(digest: Buffer, length: number): string {
  let n = BigInt(`0x${digest.toString('hex')}`);
  let out = '';
  for (let i = 0; i < length; i++) {
    out += ALPHABET[Number(n % 62n)];
    n /= 62n;
  }
  return out;
}

function uuidOf(digest: Buffer): string {
  const b = Buffer.from(digest.subarray(0, 16));
  b[6] = (b[6] & 0x0f) | 0x50; // version 5 (name-based, SHA)
  b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface IdSeed {
  /** The caller's idempotency scope (shared/http/idempotency.ts idempotencyScope). */
  scope: string;
  idempotencyKey: string;
}

/** The id of the item at `index` (derived when `seed` is given, else random). */
export function importRecordId(entity: LoadedEntity, index: number, item: unknown, seed: IdSeed | undefined): string {
  if (!seed) return entity.idFormat.type === 'uuid' ? newUuid() : newId(entity.idFormat.prefix);
  const digest = createHash('sha256')
    .update(JSON.stringify([seed.scope, seed.idempotencyKey, entity.slug, index, item]))
    .digest();
  return entity.idFormat.type === 'uuid' ? uuidOf(digest) : `${entity.idFormat.prefix}_${base62(digest, 20)}`;
}

/** A derived suffix (events' sort keys) for the same item. */
export function importSuffix(id: string): string {
  return createHash('sha256').update(`event:${id}`).digest('hex').slice(0, 12);
}
