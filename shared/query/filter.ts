/**
 * The `filter` parameter (a JSON object: field → plain value for equality, or → an object of
 * operators) and `{field}=value` equality parameters → conditions; and their evaluation on a
 * stored record. Pure: no I/O.
 *
 * Errors are 400 INVALID_FILTER with details.filter naming the problem: not a JSON object, an
 * unknown operator, an unknown or protected field, a wrong operand type.
 */
import { BadRequestError } from '../errors.js';
import { isCalendarDate, type LoadedEntity } from '../registry/index.js';
import { resolveField, valueAt, type FieldRef, type ValueType } from './fields.js';
import { foldText } from './fold.js';
import { compareText } from './sort.js';

export const OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$contains', '$startsWith', '$endsWith', '$null'] as const;
export type Operator = (typeof OPERATORS)[number];

/** At most this many values in $in / $nin (DynamoDB's IN takes 100 operands). */
export const MAX_IN_VALUES = 100;

export interface Condition {
  field: FieldRef;
  op: Operator;
  value: unknown;
}

export function invalidFilter(message: string): BadRequestError {
  return new BadRequestError(`Invalid filter: ${message}`, { filter: message }, 'INVALID_FILTER');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fieldOf(entity: LoadedEntity, name: string): FieldRef {
  const resolved = resolveField(entity, name);
  if (resolved.ok) return resolved.ref;
  if (resolved.reason === 'protected') throw invalidFilter(`field '${name}' is protected and cannot be filtered`);
  throw invalidFilter(`unknown field '${name}'`);
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean';
}

/** A value of the field's type (datetimes normalised to ISO 8601 UTC); throws INVALID_FILTER otherwise. */
export function operand(field: FieldRef, op: string, value: unknown): string | number | boolean {
  const wrong = (expected: string) => invalidFilter(`${op} on '${field.name}' needs ${expected}, got ${JSON.stringify(value)}`);
  switch (field.type) {
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw wrong('a number');
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw wrong('a boolean');
      return value;
    case 'datetime': {
      if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw wrong('an ISO 8601 date-time string');
      return new Date(Date.parse(value)).toISOString();
    }
    case 'date':
      if (typeof value !== 'string' || !isCalendarDate(value)) throw wrong('a calendar date YYYY-MM-DD');
      return value;
    case 'any':
      if (!isScalar(value)) throw wrong('a string, number or boolean');
      return value;
    default:
      if (typeof value !== 'string') throw wrong('a string');
      return value;
  }
}

const STRING_TYPES = new Set<ValueType>(['string', 'enum', 'uuid', 'datetime', 'date', 'any']);

function condition(field: FieldRef, op: string, value: unknown): Condition {
  if (!(OPERATORS as readonly string[]).includes(op)) throw invalidFilter(`unknown operator '${op}' on '${field.name}'; known: ${OPERATORS.join(', ')}`);
  const o = op as Operator;
  switch (o) {
    case '$eq':
    case '$ne':
      if (value === null) return { field, op: '$null', value: o === '$eq' };
      return { field, op: o, value: operand(field, o, value) };
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      if (field.type === 'boolean') throw invalidFilter(`${o} does not apply to the boolean field '${field.name}'`);
      if (field.type === 'any' && typeof value === 'boolean') throw invalidFilter(`${o} on '${field.name}' needs a string or a number`);
      return { field, op: o, value: operand(field, o, value) };
    case '$in':
    case '$nin':
      if (!Array.isArray(value)) throw invalidFilter(`${o} on '${field.name}' needs an array`);
      if (value.length > MAX_IN_VALUES) throw invalidFilter(`${o} on '${field.name}' takes at most ${MAX_IN_VALUES} values`);
      return { field, op: o, value: value.map((v) => operand(field, o, v)) };
    case '$contains':
    case '$startsWith':
    case '$endsWith':
      if (!STRING_TYPES.has(field.type)) throw invalidFilter(`${o} applies to text fields, not to '${field.name}'`);
      if (typeof value !== 'string') throw invalidFilter(`${o} on '${field.name}' needs a string`);
      return { field, op: o, value };
    case '$null':
      if (typeof value !== 'boolean') throw invalidFilter(`$null on '${field.name}' needs true or false`);
      return { field, op: o, value };
  }
}

/** The `filter` parameter → conditions (AND). */
export function parseFilter(entity: LoadedEntity, raw: string | undefined): Condition[] {
  if (raw === undefined || raw.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalidFilter('must be a JSON object (it is not valid JSON)');
  }
  if (!isPlainObject(parsed)) throw invalidFilter('must be a JSON object');
  const conditions: Condition[] = [];
  for (const [name, spec] of Object.entries(parsed)) {
    if (name.startsWith('$')) throw invalidFilter(`unknown operator '${name}' at the top level; give field names`);
    const field = fieldOf(entity, name);
    if (isPlainObject(spec)) {
      const ops = Object.entries(spec);
      if (ops.length === 0) throw invalidFilter(`'${name}' has an empty operator object`);
      for (const [op, value] of ops) conditions.push(condition(field, op, value));
    } else if (Array.isArray(spec)) {
      throw invalidFilter(`'${name}' has an array; use {"$in": [...]}`);
    } else conditions.push(condition(field, '$eq', spec));
  }
  return conditions;
}

/** JSON number syntax only (no hex, binary, '+', blanks or Infinity); a finite number. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

export function numberFromText(text: string): number | undefined {
  if (!JSON_NUMBER.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** A `{field}=value` parameter's text as a value of the field's type. */
export function equalityFromText(entity: LoadedEntity, name: string, text: string): Condition {
  const field = fieldOf(entity, name);
  let value: unknown = text;
  if (field.type === 'number') {
    value = numberFromText(text);
    if (value === undefined) throw invalidFilter(`'${name}' needs a number (JSON number syntax), got '${text}'`);
  } else if (field.type === 'boolean') {
    if (text !== 'true' && text !== 'false') throw invalidFilter(`'${name}' needs true or false, got '${text}'`);
    value = text === 'true';
  } else if (field.type === 'any') {
    // A metadata path has no declared type: the text matches the string, or the number / boolean it spells.
    const values: unknown[] = [text];
    const number = numberFromText(text);
    if (number !== undefined) values.push(number);
    if (text === 'true' || text === 'false') values.push(text === 'true');
    if (values.length > 1) return condition(field, '$in', values);
  }
  return condition(field, '$eq', value);
}

// ---------- evaluation ----------

function same(a: unknown, b: unknown): boolean {
  return a === b;
}

function comparable(a: unknown, b: unknown): boolean {
  return (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
}

/** Numbers numerically, strings in UTF-8 byte order (as DynamoDB compares them). */
function order(a: unknown, b: unknown): number {
  return typeof a === 'string' ? compareText(a, b as string) : (a as number) - (b as number);
}

/**
 * One condition on a stored record. The same semantics as the pushed-down FilterExpression
 * (shared/query/expression.ts): comparisons only between values of one type; a missing value
 * is unequal to everything ($ne and $nin match it) and null for $null.
 */
export function matchesCondition(record: unknown, c: Condition): boolean {
  const v = valueAt(record, c.field.path);
  switch (c.op) {
    case '$eq':
      return same(v, c.value);
    case '$ne':
      return !same(v, c.value);
    case '$gt':
      return comparable(v, c.value) && order(v, c.value) > 0;
    case '$gte':
      return comparable(v, c.value) && order(v, c.value) >= 0;
    case '$lt':
      return comparable(v, c.value) && order(v, c.value) < 0;
    case '$lte':
      return comparable(v, c.value) && order(v, c.value) <= 0;
    case '$in':
      return (c.value as unknown[]).some((x) => same(v, x));
    case '$nin':
      return !(c.value as unknown[]).some((x) => same(v, x));
    case '$contains':
      return typeof v === 'string' && foldText(v).includes(foldText(String(c.value)));
    case '$startsWith':
      return typeof v === 'string' && v.startsWith(String(c.value));
    case '$endsWith':
      return typeof v === 'string' && v.endsWith(String(c.value));
    case '$null':
      return (v === undefined || v === null) === c.value;
  }
}

export function matchesAll(record: unknown, conditions: readonly Condition[]): boolean {
  return conditions.every((c) => matchesCondition(record, c));
}

/** `search`: folded words (shared/query/fold.ts), each of which must appear. */
export function searchWords(text: string | undefined): string[] {
  return [...new Set(foldText(text ?? '').split(/\s+/).filter(Boolean))];
}

/** The text `search` looks in: the searchable fields, folded, one per line. */
export function searchTextOf(data: Record<string, unknown>, fields: readonly string[]): string {
  return fields
    .map((f) => data[f])
    .filter((v): v is string | number => typeof v === 'string' || typeof v === 'number')
    .map((v) => foldText(String(v)))
    .join('\n');
}

export function matchesSearch(data: Record<string, unknown>, fields: readonly string[], words: readonly string[]): boolean {
  if (words.length === 0) return true;
  const text = searchTextOf(data, fields);
  return words.every((w) => text.includes(w));
}
