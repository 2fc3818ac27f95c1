/**
 * What a record id tells (pure, no I/O, no node:crypto): the time a record was created, for the ids
 * generated now (shared/ids.ts newRecordId). That time places the record in its tenant's listing
 * (`<inverted createdAt>#<id>`), so the record item itself can stand there as its listing copy
 * (shared/data/partitions.ts recordKey). Ids that carry no time — ids of earlier versions
 * (UUIDv4, 20 random base62 characters) and ids derived for an import's Idempotency-Key (UUIDv5,
 * 20 base62 characters of a hash) — give undefined.
 */
/** How an entity's ids are made (its definition's `idFormat`). */
export type IdFormat = { type: 'prefixed'; prefix: string } | { type: 'uuid' };

/** Base62 in ASCII order, so fixed-width encodings sort like the numbers they encode. */
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Characters of time in a prefixed id: 62^8 ms is about 6,900 years. */
export const TIME_CHARACTERS = 8;
/** Random characters after the time in a prefixed id. */
export const RANDOM_CHARACTERS = 14;
/** Latest time a listing sort key can hold (its inverted createdAt has 13 digits). */
const MAX_EPOCH_MS = 9_999_999_999_999;

const UUID_V7 = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const BASE62_BODY = new RegExp(`^[0-9A-Za-z]{${TIME_CHARACTERS + RANDOM_CHARACTERS}}$`);

/** `ms` as TIME_CHARACTERS base62 digits, most significant first. */
export function timePrefix(ms: number): string {
  let n = Math.floor(ms);
  let out = '';
  for (let i = 0; i < TIME_CHARACTERS; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** The creation time (epoch ms) an id of this format carries; undefined for an id without one. */
export function idTime(idFormat: IdFormat, id: string): number | undefined {
  let ms: number;
  if (idFormat.type === 'uuid') {
    const match = UUID_V7.exec(id);
    if (!match) return undefined;
    ms = parseInt(`${match[1]}${match[2]}`, 16);
  } else {
    const prefix = `${idFormat.prefix}_`;
    if (!id.startsWith(prefix)) return undefined;
    const body = id.slice(prefix.length);
    if (!BASE62_BODY.test(body)) return undefined;
    ms = 0;
    for (const c of body.slice(0, TIME_CHARACTERS)) ms = ms * 62 + BASE62.indexOf(c);
  }
  return ms <= MAX_EPOCH_MS ? ms : undefined;
}
