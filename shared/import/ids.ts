/**
 * Record ids of an import. With an Idempotency-Key, each item's id is derived (SHA-256) from the
 * caller's idempotency scope, the key, the entity, the item's index and its JSON: a re-run of the
 * same request (a retry after a timeout or a fault part-way) plans the very same ids, and the
 * conditional Puts of shared/import/write.ts turn records already written into "already imported"
 * instead of duplicates; those ids carry no time, so their records keep a listing copy of their
 * own (shared/data/partitions.ts recordKey). Without the header, ids are new ones created at the
 * import's time (a retry is a new import).
 */
import { createHash } from 'node:crypto';
import { BASE62 } from '../record-ids.js';
import { newRecordId } from '../ids.js';
import type { LoadedEntity } from '../registry/index.js';

function base62(digest: Buffer, length: number): string {
  let n = BigInt(`0x${digest.toString('hex')}`);
  let out = '';
  for (let i = 0; i < length; i++) {
    out += BASE62[Number(n % 62n)];
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

/** The id of the item at `index`, created at `ms` (derived when `seed` is given, else new). */
export function importRecordId(entity: LoadedEntity, index: number, item: unknown, seed: IdSeed | undefined, ms: number): string {
  if (!seed) return newRecordId(entity.idFormat, ms);
  const digest = createHash('sha256')
    .update(JSON.stringify([seed.scope, seed.idempotencyKey, entity.slug, index, item]))
    .digest();
  return entity.idFormat.type === 'uuid' ? uuidOf(digest) : `${entity.idFormat.prefix}_${base62(digest, 20)}`;
}

/** A derived suffix (events' sort keys) for the same item. */
export function importSuffix(id: string): string {
  return createHash('sha256').update(`event:${id}`).digest('hex').slice(0, 12);
}
