/**
 * JSON schemas derived from an entity's fields, compiled once per entity (ajv, every error at
 * once) for create and for update. `checkCreate` / `checkUpdate` turn a request body into the
 * values to write or throw 422 VALIDATION_FAILED with details keyed by field:
 *
 * - generated attributes in a body (id, createdAt, updatedAt, deletedAt, owner, tenantId and
 *   fields marked generated) are ignored;
 * - any other key that is not a field, a manyToMany foreign key (tagIds), metadata or metas is
 *   an unknown field (422 naming it);
 * - create: required fields, then defaults for the fields left out; null counts as left out;
 * - update: only the keys sent; null clears an optional field; required fields cannot be null;
 * - datetimes are stored as ISO 8601 UTC; metadata is at most 10,000 characters serialized, its
 *   keys __proto__ and constructor are dropped at any depth; a record is at most 100 kB.
 *
 * The validators of the built-in entities are compiled ahead of time (ajv standalone code in
 * validators.generated.ts, written by `npm run schemas`), so a cold start compiles nothing. A
 * schema without a matching precompiled validator (a changed or test-only definition) is compiled
 * by ajv (schema-compiler.ts), which is loaded only then: `prepareSchemaCompiler()` loads it.
 */
import { ValidationError } from '../errors.js';
import { SYSTEM_ATTRIBUTES, type FieldDefinition, type LoadedEntity } from './types.js';
import { precompiled as generated } from './validators.generated.js';

const precompiled: Readonly<Record<string, { schema: string; validate: unknown }>> = generated;

export const METADATA_MAX_CHARS = 10_000;
export const RECORD_MAX_CHARS = 100_000;
export const MAX_LINKS = 100;
export const MAX_METAS = 100;
/** How deep objects and arrays may nest inside a value (metadata counts as level 1; DynamoDB stops at 32 with the item). */
export const MAX_NESTING = 30;
/** The form of a `date` field: YYYY-MM-DD (a real calendar date: isCalendarDate). */
export const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';
/**
 * The forms of `datetime` and `uuid` fields, as patterns rather than ajv `format`s: the
 * precompiled validators of a format need ajv-formats at run time, which no cold start should
 * load (shared/registry/validators.generated.ts keeps to ajv's run-time helpers, whatever fields a
 * definition has). A date-time's values are then checked by isDateTime.
 */
export const DATE_TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?([Zz]|[+-]\\d{2}(:?\\d{2})?)$';
export const UUID_PATTERN = '^(urn:uuid:)?[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$';
/** Smallest non-zero magnitude DynamoDB stores. */
const MIN_NUMBER_MAGNITUDE = 1e-130;

import type { Schema, SchemaError, Validator } from './schema-types.js';

export type { Schema, SchemaError, Validator };

/** Compiles a schema with ajv (schema-compiler.ts), once loaded by prepareSchemaCompiler(). */
let compileWithAjv: ((schema: Schema) => Validator) | undefined;

/** Loads ajv, for schemas that have no precompiled validator. */
export async function prepareSchemaCompiler(): Promise<void> {
  compileWithAjv ??= (await import('./schema-compiler.js')).compileSchema;
}

/** The key of an entity's validator in validators.generated.ts. */
export function validatorName(entity: Pick<LoadedEntity, 'slug'>, mode: 'create' | 'update'): string {
  return `${entity.slug}:${mode}`;
}

function fieldSchema(field: FieldDefinition, nullable: boolean): Schema {
  let schema: Schema;
  switch (field.type) {
    case 'string': {
      const maxima = [field.maxLength, field.validation?.max].filter((n): n is number => n !== undefined);
      // A required string must not be empty unless validation.min says otherwise.
      const minLength = field.validation?.min ?? (field.required ? 1 : undefined);
      schema = {
        type: 'string',
        ...(maxima.length ? { maxLength: Math.min(...maxima) } : {}),
        ...(minLength !== undefined ? { minLength } : {}),
        ...(field.validation?.pattern !== undefined ? { pattern: field.validation.pattern } : {}),
      };
      break;
    }
    case 'number':
      schema = {
        type: 'number',
        ...(field.validation?.min !== undefined ? { minimum: field.validation.min } : {}),
        ...(field.validation?.max !== undefined ? { maximum: field.validation.max } : {}),
      };
      break;
    case 'enum':
      return nullable ? { enum: [...field.values!, null] } : { type: 'string', enum: [...field.values!] };
    case 'datetime':
      schema = { type: 'string', pattern: DATE_TIME_PATTERN };
      break;
    case 'date':
      // A calendar date, checked by isCalendarDate (the pattern keeps the precompiled code format-free).
      schema = { type: 'string', pattern: DATE_PATTERN };
      break;
    case 'boolean':
      schema = { type: 'boolean' };
      break;
    case 'uuid':
      schema = { type: 'string', pattern: UUID_PATTERN };
      break;
  }
  if (nullable) schema.type = [schema.type as string, 'null'];
  return schema;
}

export function writableFields(entity: LoadedEntity): [string, FieldDefinition][] {
  return Object.entries(entity.fields).filter(([, f]) => !f.generated);
}

export function linkKeys(entity: LoadedEntity): string[] {
  return Object.values(entity.relations)
    .filter((r) => r.type === 'manyToMany')
    .map((r) => r.foreignKey);
}

/** The JSON schema of a create (mode 'create') or update body. */
export function bodySchema(entity: LoadedEntity, mode: 'create' | 'update'): Schema {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const [name, field] of writableFields(entity)) {
    const isRequired = field.required === true;
    if (mode === 'create' && isRequired) required.push(name);
    properties[name] = fieldSchema(field, !isRequired);
  }
  for (const key of linkKeys(entity)) {
    properties[key] = { type: 'array', maxItems: MAX_LINKS, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 64 } };
  }
  properties.metadata = { type: mode === 'create' ? 'object' : ['object', 'null'] };
  properties.metas = {
    type: mode === 'create' ? 'object' : ['object', 'null'],
    maxProperties: MAX_METAS,
    propertyNames: { maxLength: 100 },
    additionalProperties: { type: mode === 'create' ? 'string' : ['string', 'null'], maxLength: 1000 },
  };
  return { type: 'object', additionalProperties: false, required, properties };
}

interface Compiled {
  create: Validator;
  update: Validator;
}

const compiled = new WeakMap<LoadedEntity, Compiled>();

/** The precompiled validator of this very schema, if `npm run schemas` wrote one. */
function precompiledFor(entity: LoadedEntity, mode: 'create' | 'update', schema: Schema): Validator | undefined {
  const entry = Object.hasOwn(precompiled, validatorName(entity, mode)) ? precompiled[validatorName(entity, mode)] : undefined;
  return entry && entry.schema === JSON.stringify(schema) ? (entry.validate as Validator) : undefined;
}

/** Whether both schemas of the entity have a precompiled validator (no ajv needed). */
export function isPrecompiled(entity: LoadedEntity): boolean {
  return (['create', 'update'] as const).every((mode) => precompiledFor(entity, mode, bodySchema(entity, mode)) !== undefined);
}

function validatorFor(entity: LoadedEntity, mode: 'create' | 'update'): Validator {
  const schema = bodySchema(entity, mode);
  const ready = precompiledFor(entity, mode, schema);
  if (ready) return ready;
  if (!compileWithAjv) throw new Error(`entity '${entity.slug}': no precompiled ${mode} validator, and prepareSchemaCompiler() was not awaited`);
  return compileWithAjv(schema);
}

/** The validators of an entity (once; the registry does it at load). */
export function compileSchemas(entity: LoadedEntity): Compiled {
  let c = compiled.get(entity);
  if (!c) {
    c = { create: validatorFor(entity, 'create'), update: validatorFor(entity, 'update') };
    compiled.set(entity, c);
  }
  return c;
}

/** Whether text is YYYY-MM-DD naming a day that exists (2024-02-29 does, 2023-02-29 does not). */
export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export const DATE_MESSAGE = 'must be a calendar date YYYY-MM-DD';
export const DATE_TIME_MESSAGE = 'must be an ISO 8601 date-time';

/**
 * Whether text (already of DATE_TIME_PATTERN's form) names an instant that exists: a calendar
 * date, hours 0-23, minutes and seconds 0-59 (no leap second: Date cannot hold one).
 */
export function isDateTime(text: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})/.exec(text);
  if (!match || !isCalendarDate(match[1])) return false;
  if (Number(match[2]) > 23 || Number(match[3]) > 59 || Number(match[4]) > 59) return false;
  return !Number.isNaN(Date.parse(text));
}

function describeType(field: FieldDefinition | undefined, fallback: string): string {
  if (!field) return fallback === 'object' ? 'an object' : fallback === 'array' ? 'an array' : `a ${fallback}`;
  if (field.type === 'datetime') return 'an ISO 8601 date-time';
  if (field.type === 'date') return 'a date (YYYY-MM-DD)';
  if (field.type === 'uuid') return 'a UUID';
  return field.type === 'enum' ? 'a string' : `a ${field.type}`;
}

function messageOf(error: SchemaError, entity: LoadedEntity, field: string): string {
  const params = error.params as Record<string, unknown>;
  const def = entity.fields[field];
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return `is not a field of ${entity.slug}`;
    case 'type': {
      const expected = String(params.type).split(',').filter((t) => t !== 'null')[0];
      return `must be ${describeType(def, expected)}`;
    }
    case 'maxLength':
      return error.instancePath.split('/').length > 2 ? `values must be at most ${String(params.limit)} characters` : `must be at most ${String(params.limit)} characters`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`;
    case 'minimum':
      return `must be greater than or equal to ${String(params.limit)}`;
    case 'maximum':
      return `must be less than or equal to ${String(params.limit)}`;
    case 'pattern':
      if (def?.type === 'date') return DATE_MESSAGE;
      if (def?.type === 'datetime') return DATE_TIME_MESSAGE;
      if (def?.type === 'uuid') return 'must be a UUID';
      return `must match the pattern ${String(params.pattern)}`;
    case 'format':
      return `must be ${params.format === 'uuid' ? 'a UUID' : 'an ISO 8601 date-time'}`;
    case 'enum': {
      const values = (params.allowedValues as unknown[]).filter((v) => v !== null);
      return `must be one of: ${values.join(', ')}`;
    }
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    case 'maxProperties':
      return `must have at most ${String(params.limit)} keys`;
    case 'uniqueItems':
      return 'must not repeat an item';
    case 'propertyNames':
      return 'keys must be at most 100 characters';
    default:
      return error.message ?? 'is invalid';
  }
}

/** Characters of a client's key named in `details`. */
const MAX_REPORTED_KEY = 100;

function detailsOf(errors: readonly SchemaError[], entity: LoadedEntity): Record<string, string> {
  const details: Record<string, string> = {};
  for (const error of errors) {
    const path = error.instancePath.split('/').slice(1);
    let field = path[0] ?? '';
    if (!field && error.keyword === 'required') field = String((error.params as { missingProperty: string }).missingProperty);
    if (!field && error.keyword === 'additionalProperties') field = String((error.params as { additionalProperty: string }).additionalProperty);
    if (error.keyword === 'propertyNames') continue;
    // A key the client made up is named, never echoed whole (a report stays small).
    const key = field ? (field.length > MAX_REPORTED_KEY ? `${field.slice(0, MAX_REPORTED_KEY)}…` : field) : 'body';
    // defineProperty: a key such as __proto__ or constructor is named like any other.
    if (!Object.prototype.hasOwnProperty.call(details, key)) Object.defineProperty(details, key, { value: messageOf(error, entity, field), enumerable: true, writable: true, configurable: true });
  }
  return details;
}

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A copy without __proto__ / constructor / prototype keys, at any depth. */
export function sanitizeObject(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sanitizeObject);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([k]) => !UNSAFE_KEYS.has(k))
        .map(([k, v]) => [k, sanitizeObject(v)]),
    );
  }
  return value;
}

/**
 * Why DynamoDB could not store a value (undefined when it can): a number it cannot represent
 * exactly (the SDK refuses integers beyond ±2^53 − 1; DynamoDB refuses magnitudes under 1e-130),
 * an empty key, or nesting deeper than MAX_NESTING. Stops at the first problem and never
 * recurses past MAX_NESTING, so a hostile body cannot exhaust the stack.
 */
export function unstorable(value: unknown, depth = 1): string | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) return `numbers must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`;
    if (value !== 0 && Math.abs(value) < MIN_NUMBER_MAGNITUDE) return `numbers must be 0 or at least ${MIN_NUMBER_MAGNITUDE} in magnitude`;
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (depth > MAX_NESTING) return `must be nested at most ${MAX_NESTING} levels deep`;
  const entries = Array.isArray(value) ? value.map((v) => ['0', v] as const) : Object.entries(value);
  for (const [key, v] of entries) {
    if (key === '') return 'keys must not be empty';
    const problem = unstorable(v, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/** Values to write, split by kind. */
export interface WriteInput {
  /** Field values (and manyToMany id lists) to set. */
  data: Record<string, unknown>;
  /** Fields to remove (update: sent as null). */
  unset: string[];
  /** The metadata sent (null on update: remove it). */
  metadata?: Record<string, unknown> | null;
  /** The metas sent (a null value on update removes that key; null removes all). */
  metas?: Record<string, string | null> | null;
}

function withoutGenerated(entity: LoadedEntity, body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if ((SYSTEM_ATTRIBUTES as readonly string[]).includes(key)) continue;
    if (entity.fields[key]?.generated) continue;
    Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

function normalize(entity: LoadedEntity, name: string, value: unknown): unknown {
  if (entity.fields[name]?.type === 'datetime' && typeof value === 'string') return new Date(value).toISOString();
  return value;
}

function split(entity: LoadedEntity, body: Record<string, unknown>, mode: 'create' | 'update'): WriteInput {
  const data: Record<string, unknown> = {};
  const unset: string[] = [];
  const input: WriteInput = { data, unset };
  for (const [key, value] of Object.entries(body)) {
    if (key === 'metadata') input.metadata = value === null ? null : (sanitizeObject(value) as Record<string, unknown>);
    else if (key === 'metas') input.metas = value === null ? null : (sanitizeObject(value) as WriteInput['metas']);
    else if (value === null) {
      if (mode === 'update') unset.push(key);
    } else data[key] = normalize(entity, key, value);
  }
  if (mode === 'create') {
    for (const [name, field] of writableFields(entity)) {
      if (data[name] === undefined && field.default !== undefined) data[name] = field.default;
    }
  }
  return input;
}

function checkSizes(input: WriteInput): void {
  const details: Record<string, string> = {};
  if (input.metadata && JSON.stringify(input.metadata).length > METADATA_MAX_CHARS) {
    details.metadata = `must be at most ${METADATA_MAX_CHARS} characters of serialized JSON`;
  }
  if (JSON.stringify({ data: input.data, metadata: input.metadata, metas: input.metas }).length > RECORD_MAX_CHARS) {
    details.body = `the record must be at most ${RECORD_MAX_CHARS} characters of serialized JSON`;
  }
  if (Object.keys(details).length) throw new ValidationError(details);
}

function check(entity: LoadedEntity, body: unknown, mode: 'create' | 'update'): WriteInput {
  const validate = compileSchemas(entity)[mode];
  const value = withoutGenerated(entity, body);
  if (!validate(value)) throw new ValidationError(detailsOf(validate.errors ?? [], entity));
  const problems = Object.entries(value).flatMap(([key, v]) => {
    if (entity.fields[key]?.type === 'datetime' && typeof v === 'string' && !isDateTime(v)) return [[key, DATE_TIME_MESSAGE]];
    if (entity.fields[key]?.type === 'date' && typeof v === 'string' && !isCalendarDate(v)) return [[key, DATE_MESSAGE]];
    const problem = unstorable(v);
    return problem ? [[key, problem]] : [];
  });
  if (problems.length) throw new ValidationError(Object.fromEntries(problems));
  const input = split(entity, value, mode);
  checkSizes(input);
  return input;
}

/**
 * The reference values of a body that failed validation, for fields the schema did not object
 * to: so that unknown ids are reported together with every other failing field.
 */
export function unvalidatedReferences(entity: LoadedEntity, body: unknown, failed: Record<string, unknown>): Record<string, unknown> {
  if (!body || typeof body !== 'object') return {};
  const out: Record<string, unknown> = {};
  const candidates = [...Object.entries(entity.fields).filter(([, f]) => f.references && !f.generated).map(([n]) => n), ...linkKeys(entity)];
  for (const name of candidates) {
    if (name in failed) continue;
    const value = (body as Record<string, unknown>)[name];
    if (typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))) out[name] = value;
  }
  return out;
}

/**
 * What is wrong with a record's values under the current definition (the rules of a create),
 * keyed by field; empty when it is valid. Used on the record an update leaves (the stored values
 * merged with the change), so that an update of a record written under looser rules must bring it
 * up to the current ones. Values of fields the definition no longer has are not judged; a field
 * left out that has a default counts as holding it (reads show the default).
 */
export function mergedProblems(entity: LoadedEntity, data: Record<string, unknown>): Record<string, string> {
  const value: Record<string, unknown> = {};
  for (const [name, field] of writableFields(entity)) {
    const v = Object.prototype.hasOwnProperty.call(data, name) ? data[name] : undefined;
    if (v !== undefined && v !== null) value[name] = v;
    else if (field.default !== undefined) value[name] = field.default;
  }
  for (const key of linkKeys(entity)) if (Array.isArray(data[key])) value[key] = data[key];
  const validate = compileSchemas(entity).create;
  const details = validate(value) ? {} : (detailsOf(validate.errors ?? [], entity) as Record<string, string>);
  for (const [name, v] of Object.entries(value)) {
    if (name in details || typeof v !== 'string') continue;
    if (entity.fields[name]?.type === 'date' && !isCalendarDate(v)) details[name] = DATE_MESSAGE;
    if (entity.fields[name]?.type === 'datetime' && !isDateTime(v)) details[name] = DATE_TIME_MESSAGE;
  }
  return details;
}

/** A create body → the values of the new record (defaults applied), or 422 with every failing field. */
export function checkCreate(entity: LoadedEntity, body: unknown): WriteInput {
  return check(entity, body, 'create');
}

/** A PATCH body → the changes, or 422 with every failing field. */
export function checkUpdate(entity: LoadedEntity, body: unknown): WriteInput {
  return check(entity, body, 'update');
}
