/**
 * What a write makes of a record: a new record from a validated body, an update applied to the
 * stored one (metadata and metas merged, a null removing a key), the checks the result must pass
 * (the whole definition, unique values that fit a key), and its change event. Pure but for the
 * random ids; the service (service.ts) reads and writes.
 */
import { randomBytes } from 'node:crypto';
import { eventItem, oversizedUniques, type ChangeType, type LiveLayout, type StoredRecord } from '../data/index.js';
import { ValidationError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { newId, newRecordId } from '../ids.js';
import { mergedProblems, METADATA_MAX_CHARS, type LoadedEntity, type WriteInput } from '../registry/index.js';
import { cleanMetadata, mergeMetadataPatch } from './metadata.js';
import { present } from './present.js';

/** The change event of a write, as the stream and webhooks show the record. */
export function changeEvent(layout: LiveLayout, change: ChangeType, record: StoredRecord, now: string): Record<string, unknown> {
  return eventItem(layout, change, record, present(layout.entity, record), {
    eventId: newId('evt'),
    suffix: randomBytes(6).toString('hex'),
    now,
  });
}

/** A time strictly after `previous` (updatedAt always moves forward, even within one millisecond). */
export function after(previous: string, now = new Date()): string {
  const prev = Date.parse(previous);
  return new Date(Math.max(now.getTime(), prev + 1)).toISOString();
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge where a null value removes the key. */
export function mergeDeep(current: Record<string, unknown> | undefined, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isPlainObject(value) && isPlainObject(out[key])) out[key] = mergeDeep(out[key] as Record<string, unknown>, value);
    else out[key] = value;
  }
  return out;
}

function mergeMetas(current: Record<string, string> | undefined, patch: Record<string, string | null>): Record<string, string> {
  const out: Record<string, string> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

export function newRecord(entity: LoadedEntity, auth: AuthContext, input: WriteInput, forced: Record<string, unknown> = {}): StoredRecord {
  const created = Date.now();
  const now = new Date(created).toISOString();
  const data: Record<string, unknown> = { ...input.data, ...forced };
  for (const [name, field] of Object.entries(entity.fields)) {
    if (field.generated === 'caller') data[name] = auth.user.id;
  }
  const record: StoredRecord = {
    entity: entity.slug,
    id: newRecordId(entity.idFormat, created),
    tenantId: auth.tenantId,
    ownerId: auth.user.id,
    createdAt: now,
    updatedAt: now,
    version: 1,
    data,
  };
  if (input.metadata) record.metadata = cleanMetadata(input.metadata);
  if (input.metas) record.metas = mergeMetas(undefined, input.metas);
  return record;
}

export function applyUpdate(entity: LoadedEntity, before: StoredRecord, input: WriteInput, options: { replaceMetadata?: boolean }): StoredRecord {
  const data = { ...before.data, ...input.data };
  // A field with a default set to null keeps the null: an absent value means "stored before the
  // field existed" and reads as the default (shared/data/layout.ts upgradeData), a null reads as null.
  for (const key of input.unset) {
    if (entity.fields[key]?.default !== undefined) data[key] = null;
    else delete data[key];
  }
  const next: StoredRecord = { ...before, data, updatedAt: after(before.updatedAt), version: before.version + 1 };
  if (input.metadata === null) delete next.metadata;
  else if (input.metadata) {
    next.metadata = options.replaceMetadata ? cleanMetadata(input.metadata) : mergeMetadataPatch(before.metadata, input.metadata);
    if (JSON.stringify(next.metadata).length > METADATA_MAX_CHARS) {
      throw new ValidationError({ metadata: `must be at most ${METADATA_MAX_CHARS} characters of serialized JSON (after merging with the current metadata)` });
    }
  }
  if (input.metas === null) delete next.metas;
  else if (input.metas) next.metas = mergeMetas(before.metas, input.metas);
  return next;
}

/** Reference fields whose value changes (only those are checked on update). */
export function changedReferences(before: StoredRecord, input: WriteInput): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input.data)) {
    if (JSON.stringify(before.data[key]) === JSON.stringify(value)) continue;
    if (Array.isArray(value) && Array.isArray(before.data[key])) {
      const known = new Set(before.data[key] as string[]);
      changed[key] = (value as string[]).filter((v) => !known.has(v));
    } else changed[key] = value;
  }
  return changed;
}

/** 422 for a unique value too long to be held (its key would pass DynamoDB's limit). */
export function refuseOversizedUniques(entity: LoadedEntity, before: StoredRecord | undefined, record: StoredRecord): void {
  const fields = oversizedUniques(entity, before, record);
  if (fields.length) throw new ValidationError(Object.fromEntries(fields.map((f) => [f, 'is too long for a unique field (at most about 1900 bytes once URL-encoded)'])));
}

/**
 * The record an update leaves must satisfy the current definition as a whole, not only in the
 * fields sent: a record written before a rule was tightened (a shorter maxLength, a new required
 * field, a narrower enum) must be made valid by the update that touches it (422 naming each
 * field otherwise). Reading it still works.
 */
export function checkMerged(entity: LoadedEntity, record: StoredRecord): void {
  const details = mergedProblems(entity, record.data);
  if (Object.keys(details).length) throw new ValidationError(details);
}
