/**
 * The LIST (and READ) query parameters of SPEC.md → a QuerySpec. Both spellings are accepted
 * (sort/sortBy, order/sortOrder, startDate/from, endDate/to); when both are given the first
 * wins. Any other parameter that names a field of the entity (or a metadata.<path>) is an
 * equality filter; a protected field there is 400 INVALID_FILTER; a parameter that names
 * nothing is 400 INVALID_REQUEST naming it (refuseUnknownParameters). Pure.
 */
import { BadRequestError } from '../errors.js';
import type { LoadedEntity } from '../registry/index.js';
import { parseDateRange, type DateRange } from './dates.js';
import { isMetadataPath, PROTECTED, resolveField, selectableFields } from './fields.js';
import { equalityFromText, invalidFilter, parseFilter, searchWords, type Condition } from './filter.js';
import { parseSort, type SortKey } from './sort.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/** At most this many ids in `ids=` (one BatchGetItem). */
export const MAX_IDS = 100;

export const RESERVED_PARAMETERS = new Set([
  'page', 'limit', 'cursor', 'filter', 'search', 'sort', 'sortBy', 'order', 'sortOrder', 'fields', 'include', 'startDate', 'endDate',
  'from', 'to', 'dateField', 'distinct', 'ids', 'metas', 'child', 'includeMetadata', 'metadataFields', 'mergeMetadata', 'mergeStrategy',
  'replaceMetadata',
]);

/** The parameters READ takes (SPEC.md), besides the entity's field names. */
export const READ_PARAMETERS = new Set(['fields', 'include', 'metas', 'child', 'includeMetadata', 'metadataFields', 'mergeMetadata', 'mergeStrategy']);

/**
 * Parameters every LIST and READ accepts and ignores: a cache buster (`_`, as jQuery and many
 * HTTP tools add it) and campaign tracking parameters (`utm_*`). Neither can be a typo of a filter.
 */
export function isIgnoredParameter(name: string): boolean {
  return name === '_' || name.startsWith('utm_');
}

/** `includeFields[<relation>]`: fields of an included relation. */
function isIncludeFields(name: string): boolean {
  return /^includeFields\[[^\]]+\]$/.test(name);
}

/**
 * 400 INVALID_REQUEST naming every query parameter that is neither one the operation documents
 * nor a field of the entity (nor a metadata.<path>, an equality filter on LIST): a typo such as
 * `?stauts=paid` must not silently return every record.
 */
export function refuseUnknownParameters(entity: LoadedEntity, query: Record<string, string>, operation: 'list' | 'read'): void {
  const known = operation === 'list' ? RESERVED_PARAMETERS : READ_PARAMETERS;
  const unknown = Object.keys(query).filter(
    (name) => !known.has(name) && !isIgnoredParameter(name) && !isIncludeFields(name) && !isMetadataPath(name) && !PROTECTED.has(name) && !resolveField(entity, name).ok,
  );
  if (unknown.length === 0) return;
  const details = Object.fromEntries(unknown.map((name) => [name, `is not a ${operation === 'list' ? 'LIST' : 'READ'} parameter nor a field of ${entity.slug}`]));
  throw new BadRequestError(`Unknown query parameter(s): ${unknown.join(', ')}`, details);
}

export interface QuerySpec {
  page: number;
  limit: number;
  /** The cursor as given (its signature and shape are checked when the list runs). */
  cursor?: string;
  conditions: Condition[];
  /** Lower-cased search words; each must match. */
  words: string[];
  sort: SortKey[];
  dateRange?: DateRange;
  ids?: string[];
  /** Fields to return (id always). */
  fields?: string[];
  /** distinct=true with one field in `fields`. */
  distinct?: string;
}

export function list(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(',').map((s) => s.trim()).filter(Boolean))];
}

/** 'true' / '1' → true; 'false' / '0' / absent → false; anything else 400. */
export function booleanParam(query: Record<string, string>, name: string): boolean {
  const value = query[name];
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new BadRequestError(`${name} must be true or false`, { [name]: 'must be true or false' });
}

function positiveInt(value: string | undefined, name: string, details: Record<string, string>): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    details[name] = 'must be a positive integer';
    return undefined;
  }
  return Number(value);
}

/**
 * page (default 1), limit (default 20, capped at 100), cursor; 400 INVALID_REQUEST with details
 * otherwise. A cursor carries its own position and page number, so `page` with `cursor` is refused.
 */
export function parsePagination(query: Record<string, string>): { page: number; limit: number; cursor?: string } {
  const details: Record<string, string> = {};
  const page = positiveInt(query.page, 'page', details);
  const limit = positiveInt(query.limit, 'limit', details);
  const cursor = query.cursor !== undefined && query.cursor !== '' ? query.cursor : undefined;
  if (cursor !== undefined && !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(cursor)) details.cursor = 'is not a cursor returned by this API';
  if (cursor !== undefined && page !== undefined) details.page = 'cannot be combined with cursor (the cursor knows its page)';
  if (Object.keys(details).length) throw new BadRequestError('Invalid pagination parameters', details);
  return { page: page ?? 1, limit: Math.min(limit ?? DEFAULT_LIMIT, MAX_LIMIT), ...(cursor ? { cursor } : {}) };
}

/** `fields=a,b`: known, non-protected names; 400 INVALID_REQUEST details.fields otherwise. */
export function parseFields(entity: LoadedEntity, query: Record<string, string>): string[] | undefined {
  if (query.fields === undefined || query.fields.trim() === '') return undefined;
  const names = list(query.fields);
  const known = selectableFields(entity);
  const protectedNames = names.filter((n) => PROTECTED.has(n));
  if (protectedNames.length) throw new BadRequestError(`Protected field(s) cannot be selected: ${protectedNames.join(', ')}`, { fields: `protected: ${protectedNames.join(', ')}` });
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length) throw new BadRequestError(`Unknown field(s): ${unknown.join(', ')}`, { fields: `unknown field(s): ${unknown.join(', ')}; known: ${[...known].join(', ')}` });
  return names;
}

export function parseListQuery(entity: LoadedEntity, query: Record<string, string>): QuerySpec {
  refuseUnknownParameters(entity, query, 'list');
  const pagination = parsePagination(query);
  const conditions = parseFilter(entity, query.filter);
  for (const [name, text] of Object.entries(query)) {
    if (RESERVED_PARAMETERS.has(name) || name.startsWith('includeFields[')) continue;
    if (PROTECTED.has(name)) throw invalidFilter(`field '${name}' is protected and cannot be filtered`);
    if (isMetadataPath(name) || (resolveField(entity, name).ok && name !== 'createdAt' && name !== 'updatedAt')) {
      conditions.push(equalityFromText(entity, name, text));
    }
  }
  const sort = parseSort(entity, query.sort ?? query.sortBy, query.order ?? query.sortOrder);
  const dateRange = parseDateRange(entity, query);
  const fields = parseFields(entity, query);
  let ids: string[] | undefined;
  if (query.ids !== undefined) {
    ids = list(query.ids);
    if (ids.length > MAX_IDS) throw new BadRequestError(`ids takes at most ${MAX_IDS} ids`, { ids: `at most ${MAX_IDS} ids` });
  }
  let distinct: string | undefined;
  if (booleanParam(query, 'distinct')) {
    if (!fields || fields.length !== 1) throw new BadRequestError('distinct needs fields naming exactly one field', { distinct: 'needs fields naming exactly one field' });
    distinct = fields[0];
  }
  return { ...pagination, conditions, words: searchWords(query.search), sort, dateRange, ids, fields, distinct };
}
