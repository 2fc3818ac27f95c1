/**
 * An aggregate's query (GET /api/v1/{entity}/aggregate, CONTRACT.md "Aggregates"), parsed
 * against the entity: the functions asked, the fields grouped and bucketed, and the filters as
 * LIST's parser reads them; the same rules for the REST query string and GraphQL's typed
 * arguments; and the UTC bucket of a date. Pure.
 */
import { utcDay } from '../data/index.js';
import { BadRequestError } from '../errors.js';
import { list, parseListQuery, type QuerySpec } from '../query/index.js';
import { PROTECTED_FIELDS, type LoadedEntity } from '../registry/index.js';

export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/** A string field at most this long may be grouped on (longer text makes a group per record). */
export const MAX_GROUP_TEXT_LENGTH = 200;
export const MAX_GROUP_FIELDS = 2;

/** The aggregate's own parameters; the others are LIST's filters. */
export const AGGREGATE_PARAMETERS = new Set(['count', 'sum', 'avg', 'min', 'max', 'groupBy', 'interval']);

/** LIST parameters about pages and presentation, which an aggregate does not take. */
const PAGE_PARAMETERS = new Set([
  'page', 'limit', 'cursor', 'sort', 'sortBy', 'order', 'sortOrder', 'fields', 'include', 'distinct', 'ids', 'metas', 'child',
  'includeMetadata', 'metadataFields', 'mergeMetadata', 'mergeStrategy', 'replaceMetadata',
]);

type FieldKind = 'number' | 'date' | 'datetime' | 'group';

export interface AggregateField {
  name: string;
  path: string[];
  type: string;
}

/** An aggregate's query, parsed against the entity. */
export interface AggregateQuery {
  count: boolean;
  sum: AggregateField[];
  avg: AggregateField[];
  min: AggregateField[];
  max: AggregateField[];
  groupBy: AggregateField[];
  interval?: Interval;
  /** The field the interval buckets (createdAt unless dateField names another). */
  dateField: AggregateField;
  /** LIST's reading of the filters (filter, equality shorthands, search, date range). */
  spec: QuerySpec;
}

export interface AggregateGroup {
  key: Record<string, unknown>;
  count?: number;
  sum?: Record<string, number>;
  avg?: Record<string, number | null>;
  min?: Record<string, unknown>;
  max?: Record<string, unknown>;
}

/** The record's own attributes an aggregate may name, beside the entity's fields. */
export const TOP: Record<string, string> = { createdAt: 'datetime', updatedAt: 'datetime' };

function fieldOf(entity: LoadedEntity, name: string): AggregateField | undefined {
  if (Object.prototype.hasOwnProperty.call(TOP, name)) return { name, path: [name], type: TOP[name] };
  const field = Object.prototype.hasOwnProperty.call(entity.fields, name) ? entity.fields[name] : undefined;
  if (!field || (PROTECTED_FIELDS as readonly string[]).includes(name)) return undefined;
  return { name, path: ['data', name], type: field.type };
}

/** Whether a field may be used as `kind`; the reason it may not otherwise. */
function unfit(entity: LoadedEntity, field: AggregateField, kind: FieldKind | 'orderable'): string | undefined {
  if (kind === 'number') return field.type === 'number' ? undefined : 'is not a number field';
  if (kind === 'orderable') return ['number', 'date', 'datetime'].includes(field.type) ? undefined : 'is not a number, date or date-time field';
  if (kind === 'date' || kind === 'datetime') return ['date', 'datetime'].includes(field.type) ? undefined : 'is not a date or date-time field';
  const definition = entity.fields[field.name];
  if (field.type === 'enum' || field.type === 'boolean' || field.type === 'uuid') return undefined;
  if (field.type === 'string' && definition && (definition.references || (definition.maxLength ?? Infinity) <= MAX_GROUP_TEXT_LENGTH)) return undefined;
  return `cannot be grouped on (enum, boolean, reference and string fields of at most ${MAX_GROUP_TEXT_LENGTH} characters can)`;
}

/** The fields of `entity` each use may name: grouped, summed and averaged, bucketed and bounded (min/max take numbers and dates). */
export function aggregatableFields(entity: LoadedEntity): { group: string[]; number: string[]; date: string[] } {
  const names = [...Object.keys(entity.fields), ...Object.keys(TOP)];
  const fit = (kind: FieldKind) => names.filter((name) => { const field = fieldOf(entity, name); return field !== undefined && unfit(entity, field, kind) === undefined; });
  return { group: fit('group'), number: fit('number'), date: fit('date') };
}

function fieldsOf(entity: LoadedEntity, query: Record<string, string>, param: string, kind: FieldKind | 'orderable', details: Record<string, string>): AggregateField[] {
  const out: AggregateField[] = [];
  for (const name of list(query[param])) {
    const field = fieldOf(entity, name);
    const reason = field ? unfit(entity, field, kind) : 'is not a field of this entity';
    if (reason) details[param] = `'${name}' ${reason}`;
    else out.push(field!);
  }
  return out;
}

/**
 * An aggregate query string of `entity` (CONTRACT.md "Aggregates"); 400 INVALID_REQUEST naming
 * the parameter and field that cannot be aggregated that way, LIST's errors for its filters.
 */
export function parseAggregateQuery(entity: LoadedEntity, query: Readonly<Record<string, string>>): AggregateQuery {
  const details: Record<string, string> = {};
  for (const name of Object.keys(query)) {
    if (PAGE_PARAMETERS.has(name) || name.startsWith('includeFields[')) details[name] = 'is not an aggregate parameter (an aggregate answers groups, not pages of records)';
  }
  const countText = query.count;
  if (countText !== undefined && countText !== '' && countText !== '*') details.count = "takes no field: 'count', 'count=' or 'count=*'";
  const sum = fieldsOf(entity, query, 'sum', 'number', details);
  const avg = fieldsOf(entity, query, 'avg', 'number', details);
  const min = fieldsOf(entity, query, 'min', 'orderable', details);
  const max = fieldsOf(entity, query, 'max', 'orderable', details);
  const groupBy = fieldsOf(entity, query, 'groupBy', 'group', details);
  if (list(query.groupBy).length > MAX_GROUP_FIELDS) details.groupBy = `at most ${MAX_GROUP_FIELDS} fields`;
  const interval = query.interval === undefined || query.interval === '' ? undefined : (query.interval as Interval);
  if (interval !== undefined && !INTERVALS.includes(interval)) details.interval = `must be one of ${INTERVALS.join(', ')}`;
  const dateFieldName = query.dateField === undefined || query.dateField === '' ? 'createdAt' : query.dateField;
  const dateField = fieldOf(entity, dateFieldName);
  const dateReason = dateField ? unfit(entity, dateField, 'datetime') : 'is not a field of this entity';
  if (dateReason) details.dateField = `'${dateFieldName}' ${dateReason}`;
  if (Object.keys(details).length) throw new BadRequestError(`Invalid aggregate: ${Object.keys(details).join(', ')}`, details);

  const filters = Object.fromEntries(Object.entries(query).filter(([name]) => !AGGREGATE_PARAMETERS.has(name)));
  const spec = parseListQuery(entity, filters);
  const asked = sum.length + avg.length + min.length + max.length > 0;
  return { count: countText !== undefined || !asked, sum, avg, min, max, groupBy, interval, dateField: dateField!, spec };
}

/** What a GraphQL aggregate asks for, as typed arguments (the REST parameters' values). */
export interface AggregateInput {
  count?: boolean;
  sum?: readonly string[];
  avg?: readonly string[];
  min?: readonly string[];
  max?: readonly string[];
  groupBy?: readonly string[];
  interval?: string;
  dateField?: string;
  /** Field → value; each must equal (LIST's GraphQL filter). */
  filter?: Readonly<Record<string, unknown>>;
  search?: string;
  startDate?: string;
  endDate?: string;
}

/**
 * The aggregate query of typed arguments (GraphQL's): written as the query string REST would
 * take and read by parseAggregateQuery, so both are checked by the same rules and answer the
 * same errors.
 */
export function aggregateQueryOf(entity: LoadedEntity, input: AggregateInput): AggregateQuery {
  const params: Record<string, string> = {};
  if (input.count) params.count = '';
  for (const name of ['sum', 'avg', 'min', 'max', 'groupBy'] as const) {
    if (input[name]?.length) params[name] = input[name].join(',');
  }
  for (const name of ['interval', 'dateField', 'search', 'startDate', 'endDate'] as const) {
    if (input[name] !== undefined) params[name] = input[name];
  }
  const conditions = Object.fromEntries(Object.entries(input.filter ?? {}).filter(([, v]) => v !== undefined));
  if (Object.keys(conditions).length) params.filter = JSON.stringify(conditions);
  return parseAggregateQuery(entity, params);
}

const DAY_MS = 86_400_000;

/** The UTC bucket (YYYY-MM-DD: the day, the ISO week's Monday, the month's first day) of a date or date-time value; null without one. Pure. */
export function bucketOf(value: unknown, interval: Interval): string | null {
  const day = utcDay(value);
  if (day === undefined) return null;
  if (interval === 'day') return day;
  if (interval === 'month') return `${day.slice(0, 7)}-01`;
  const ms = Date.parse(`${day}T00:00:00Z`);
  const sinceMonday = (new Date(ms).getUTCDay() + 6) % 7;
  return new Date(ms - sinceMonday * DAY_MS).toISOString().slice(0, 10);
}
