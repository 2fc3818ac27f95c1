/**
 * Conditional writes (RFC 9110 If-Match / If-Unmodified-Since) on one record. A record's ETag is
 * derived from its identity and version only, so READ and every write show the same value for
 * the same version, whatever fields or view a request asked for. The check itself is the
 * conditional write: the transaction is guarded by the version that satisfied the precondition,
 * so a concurrent change makes the write fail (412) rather than overwrite.
 */
import { createHash } from 'node:crypto';
import type { StoredRecord } from '../data/index.js';
import { BadRequestError, PreconditionFailedError } from '../errors.js';

export interface Preconditions {
  /** `*` or the entity-tags listed in If-Match. */
  ifMatch?: '*' | string[];
  /** If-Unmodified-Since, epoch milliseconds. */
  ifUnmodifiedSince?: number;
}

/** A strong ETag naming one version of one record (weak tags never match If-Match). */
export function recordEtag(record: Pick<StoredRecord, 'entity' | 'id' | 'createdAt' | 'version'>): string {
  const digest = createHash('sha256').update(`${record.entity}\n${record.id}\n${record.createdAt}\n${record.version}`).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e]*"$/;
const MAX_TAGS = 20;

/** The If-Match field value: `*`, or a list of entity-tags (400 when it is neither). */
export function parseIfMatch(value: string): '*' | string[] {
  const trimmed = value.trim();
  if (trimmed === '*') return '*';
  const tags = trimmed.split(',').map((t) => t.trim()).filter((t) => t.length > 0);
  if (tags.length === 0 || tags.length > MAX_TAGS || !tags.every((t) => ENTITY_TAG.test(t))) {
    throw new BadRequestError('If-Match must be * or a list of entity-tags ("...")', { 'If-Match': 'must be * or quoted entity-tags' }, 'INVALID_REQUEST');
  }
  return tags;
}

/** If-Unmodified-Since as epoch milliseconds; not a valid HTTP-date → ignored (RFC 9110 13.1.4). */
export function parseIfUnmodifiedSince(value: string | undefined): number | undefined {
  if (!value || !/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value.trim())) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The preconditions of a request's headers (If-Unmodified-Since is ignored when If-Match is sent). */
export function preconditionsOf(headers: Record<string, string>): Preconditions | undefined {
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined) return { ifMatch: parseIfMatch(ifMatch) };
  const since = parseIfUnmodifiedSince(headers['if-unmodified-since']);
  return since === undefined ? undefined : { ifUnmodifiedSince: since };
}

/** An `ifMatch` given in a body (bulk items, GraphQL arguments): undefined when absent. */
export function preconditionsOfValue(ifMatch: unknown): Preconditions | undefined {
  if (ifMatch === undefined || ifMatch === null) return undefined;
  if (typeof ifMatch !== 'string') throw new BadRequestError('ifMatch must be a string', { ifMatch: 'must be * or an ETag' });
  return { ifMatch: parseIfMatch(ifMatch) };
}

function sameTag(a: string, b: string): boolean {
  // Strong comparison: a weak tag matches nothing.
  return !a.startsWith('W/') && a === b;
}

/** Whether `record` (the current state, undefined when there is none the caller may see) satisfies them. */
export function satisfied(preconditions: Preconditions, record: StoredRecord | undefined): boolean {
  if (!record || record.deletedAt) return false;
  if (preconditions.ifMatch === '*') return true;
  if (preconditions.ifMatch) {
    const current = recordEtag(record);
    return preconditions.ifMatch.some((tag) => sameTag(tag, current));
  }
  if (preconditions.ifUnmodifiedSince !== undefined) {
    // HTTP dates have whole seconds: a change within the named second counts as not after it.
    return Math.floor(Date.parse(record.updatedAt) / 1000) * 1000 <= preconditions.ifUnmodifiedSince;
  }
  return true;
}

export function preconditionFailed(entityName: string, id: string, current: StoredRecord | undefined): PreconditionFailedError {
  const shown = current && !current.deletedAt ? current : undefined;
  return new PreconditionFailedError(
    shown ? `The ${entityName} '${id}' has changed; it was not written` : `The ${entityName} '${id}' does not exist; it was not written`,
    shown ? recordEtag(shown) : undefined,
  );
}
