/**
 * A list's or a read's query, parsed once against the entity's definition into typed values:
 * what to read (QuerySpec of shared/query/) and how to show each record (fields, metas, metadata,
 * included relations). The HTTP adapter parses a request's query string with parseListQueryString
 * / parseReadQueryString; GraphQL builds its list query from its own arguments (listQueryOf); the
 * service takes the result and never sees a query string. Parameter errors are 400 as SPEC.md
 * says (INVALID_REQUEST naming the parameter, INVALID_FILTER, INVALID_SORT).
 */
import { BadRequestError } from '../errors.js';
import { list, parseFields, parseListQuery, refuseUnknownParameters, type QuerySpec } from '../query/index.js';
import type { LoadedEntity } from '../registry/index.js';
import { parseMetadataOptions, type MetadataOptions } from './metadata.js';
import { parseIncludes, type Include } from './relations.js';

/** How each record of an answer is shown. */
export interface RecordView {
  /** The fields to return (id always); all when undefined. */
  fields?: string[];
  metas?: 'all' | string[];
  metadata: MetadataOptions;
  includes: Include[];
}

/** A LIST's query: the records to read and how to show them. */
export interface ListQuery {
  spec: QuerySpec;
  view: RecordView;
}

/** A READ's query: how to show the record. */
export interface ReadQuery {
  view: RecordView;
}

/** `child=all` or child names (relation names or target slugs of hasMany / manyToMany relations). */
function parseChild(entity: LoadedEntity, query: Record<string, string>): string[] {
  const names = list(query.child);
  if (names.length === 0) return [];
  const children = Object.entries(entity.relations).filter(([, r]) => r.type !== 'belongsTo');
  if (names.includes('all')) return children.map(([name]) => name);
  return names.map((n) => {
    const entry = children.find(([name]) => name === n) ?? children.find(([, r]) => r.entity === n);
    if (!entry) throw new BadRequestError(`Unknown child of ${entity.slug}: ${n}`, { child: `unknown child '${n}'; known: ${children.map(([name]) => name).join(', ') || 'none'}` });
    return entry[0];
  });
}

function parseView(entity: LoadedEntity, query: Record<string, string>, fields = parseFields(entity, query)): RecordView {
  const metasNames = list(query.metas);
  const metas = metasNames.length === 0 ? undefined : metasNames.includes('all') ? 'all' : metasNames;
  return { fields, metas, metadata: parseMetadataOptions(query), includes: parseIncludes(entity, query, parseChild(entity, query)) };
}

/** A LIST query string (one value per parameter) of `entity`; an unknown parameter is 400. */
export function parseListQueryString(entity: LoadedEntity, query: Readonly<Record<string, string>>): ListQuery {
  const spec = parseListQuery(entity, query);
  return { spec, view: parseView(entity, query, spec.fields) };
}

/** A READ query string of `entity`; an unknown parameter is 400. */
export function parseReadQueryString(entity: LoadedEntity, query: Readonly<Record<string, string>> = {}): ReadQuery {
  refuseUnknownParameters(entity, query, 'read');
  return { view: parseView(entity, query) };
}

/** What a GraphQL list asks for: a page, equality conditions on fields, search words. */
export interface ListInput {
  page?: number;
  limit?: number;
  /** Field → value; each must equal. */
  filter?: Readonly<Record<string, unknown>>;
  search?: string;
}

/**
 * The list query of typed arguments (GraphQL's): checked by the same rules as a query string
 * (a limit capped at 100, a filter on a protected or unknown field refused).
 */
export function listQueryOf(entity: LoadedEntity, input: ListInput): ListQuery {
  const params: Record<string, string> = {};
  if (input.page !== undefined) params.page = String(input.page);
  if (input.limit !== undefined) params.limit = String(input.limit);
  const conditions = Object.fromEntries(Object.entries(input.filter ?? {}).filter(([, v]) => v !== undefined));
  if (Object.keys(conditions).length) params.filter = JSON.stringify(conditions);
  if (input.search) params.search = input.search;
  return parseListQueryString(entity, params);
}
