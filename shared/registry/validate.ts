/**
 * Definition checks, run when the registry loads: a definition with a problem stops start-up
 * with a message naming the file, the entity and every problem found. `validateDefinition`
 * checks one definition on its own; `validateRegistry` adds the checks across definitions
 * (unique slugs and tables, relation and reference targets).
 */
import {
  BUILT_IN_TARGETS,
  FIELD_TYPES,
  MAX_WRITE_SHARDS,
  OPERATIONS,
  PROTECTED_FIELDS,
  RECORD_EXTRAS,
  RELATION_TYPES,
  SYSTEM_ATTRIBUTES,
  type EntityDefinition,
  type FieldType,
  type LoadedEntity,
  type OperationName,
  type PermissionName,
} from './types.js';
import { isCalendarDate } from './schemas.js';

export class RegistryError extends Error {
  readonly problems: string[];
  constructor(message: string, problems: string[]) {
    super(message);
    this.name = 'RegistryError';
    this.problems = problems;
  }
}

/** First path segments under /api/v1 that belong to core endpoints: never an entity slug. */
export const RESERVED_SLUGS = new Set([
  'auth', 'users', 'tenants', 'keys', 'api-keys', 'import', 'upload', 'webhooks', 'stream', 'batch', 'graphql', 'ai', 'health', 'docs', 'migrations',
]);

const DEFINITION_KEYS = new Set(['name', 'slug', 'tableName', 'idFormat', 'fields', 'permissions', 'access', 'operations', 'softDelete', 'relations', 'rateLimit', 'writeShards', 'history', 'aggregates']);
const FIELD_KEYS = new Set(['type', 'required', 'maxLength', 'values', 'default', 'validation', 'searchable', 'indexed', 'sortable', 'generated', 'references', 'unique']);
const PERMISSIONS: readonly PermissionName[] = ['create', 'read', 'update', 'delete'];
const SCOPE = /^(\*|read|write|delete|[a-z][a-z0-9-]*:(read|write|delete|\*))$/;
const FIELD_NAME = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
const TEXT_TYPES = new Set(['string', 'uuid', 'datetime', 'enum']);
const INDEXABLE = new Set(['string', 'enum', 'uuid', 'boolean', 'number', 'date']);
/** Types whose values may be declared unique (a boolean has two values: unique makes no sense). */
const UNIQUE_TYPES = new Set(['string', 'number', 'enum', 'uuid', 'date', 'datetime']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOneOf<T extends string>(list: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (list as readonly string[]).includes(value);
}

function isPositiveInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

function checkField(name: string, field: unknown, problems: string[]): void {
  const at = `field '${name}'`;
  if (!FIELD_NAME.test(name)) problems.push(`${at}: a field name is a letter followed by letters, digits or _ (at most 64)`);
  if ((SYSTEM_ATTRIBUTES as readonly string[]).includes(name) || (RECORD_EXTRAS as readonly string[]).includes(name)) {
    problems.push(`${at}: '${name}' is managed by the service and cannot be declared`);
  }
  if (!isObject(field)) {
    problems.push(`${at}: must be an object`);
    return;
  }
  for (const key of Object.keys(field)) if (!FIELD_KEYS.has(key)) problems.push(`${at}: unknown key '${key}'`);
  const f = field;
  const type = f.type;
  if (!isOneOf(FIELD_TYPES, type)) {
    problems.push(`${at}: type must be one of ${FIELD_TYPES.join(', ')} (got ${JSON.stringify(type)})`);
    return;
  }
  for (const flag of ['required', 'searchable', 'indexed', 'sortable', 'unique'] as const) {
    if (f[flag] !== undefined && typeof f[flag] !== 'boolean') problems.push(`${at}: ${flag} must be a boolean`);
  }
  if (f.generated !== undefined && typeof f.generated !== 'boolean' && f.generated !== 'caller') problems.push(`${at}: generated must be a boolean or 'caller'`);
  if (f.generated && f.required) problems.push(`${at}: a generated field cannot be required`);
  if (f.generated && f.default !== undefined) problems.push(`${at}: a generated field cannot have a default`);
  if (f.generated === 'caller' && f.type !== 'string') problems.push(`${at}: generated 'caller' needs type string`);
  if (f.type === 'enum') {
    if (!Array.isArray(f.values) || f.values.length === 0 || !f.values.every((v) => typeof v === 'string' && v !== '')) {
      problems.push(`${at}: an enum needs values, a non-empty array of non-empty strings`);
    } else if (new Set(f.values).size !== f.values.length) problems.push(`${at}: enum values must be unique`);
  } else if (f.values !== undefined) problems.push(`${at}: values only apply to type enum`);
  if (f.maxLength !== undefined) {
    if (!isPositiveInt(f.maxLength)) problems.push(`${at}: maxLength must be a positive integer`);
    if (f.type !== 'string') problems.push(`${at}: maxLength only applies to type string`);
  }
  if (f.validation !== undefined) {
    if (!isObject(f.validation)) problems.push(`${at}: validation must be an object`);
    else {
      for (const key of Object.keys(f.validation)) if (!['min', 'max', 'pattern'].includes(key)) problems.push(`${at}: unknown validation key '${key}'`);
      const { min, max, pattern } = f.validation;
      if (min !== undefined || max !== undefined) {
        if (f.type !== 'number' && f.type !== 'string') problems.push(`${at}: validation min/max apply to number (value) and string (length)`);
        for (const [k, v] of [['min', min], ['max', max]] as const) {
          if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) problems.push(`${at}: validation.${k} must be a finite number`);
          else if (v !== undefined && f.type === 'string' && (!Number.isInteger(v) || v < 0)) problems.push(`${at}: validation.${k} of a string is a length (a non-negative integer)`);
        }
        if (typeof min === 'number' && typeof max === 'number' && min > max) problems.push(`${at}: validation.min (${min}) is greater than validation.max (${max})`);
      }
      if (pattern !== undefined) {
        if (f.type !== 'string') problems.push(`${at}: validation.pattern only applies to type string`);
        if (typeof pattern !== 'string') problems.push(`${at}: validation.pattern must be a string`);
        else {
          try {
            new RegExp(pattern, 'u');
          } catch (error) {
            problems.push(`${at}: validation.pattern is not a valid regular expression (${(error as Error).message})`);
          }
        }
      }
    }
  }
  if (f.default !== undefined) {
    const problem = defaultProblem(type, f);
    if (problem) problems.push(`${at}: default ${JSON.stringify(f.default)} ${problem}`);
  }
  if (f.unique === true) {
    if (!UNIQUE_TYPES.has(type)) problems.push(`${at}: type ${f.type} cannot be unique (types: ${[...UNIQUE_TYPES].join(', ')})`);
    if (f.default !== undefined) problems.push(`${at}: a unique field cannot have a default (every record would take the same value)`);
    if ((PROTECTED_FIELDS as readonly string[]).includes(name)) problems.push(`${at}: a protected field cannot be unique`);
  }
  if (f.indexed && !INDEXABLE.has(type)) problems.push(`${at}: type ${f.type} cannot be indexed`);
  if (f.references !== undefined && (typeof f.references !== 'string' || f.references === '')) problems.push(`${at}: references must name an entity`);
  if (f.references !== undefined && !TEXT_TYPES.has(type)) problems.push(`${at}: a reference holds an id (type string or uuid)`);
  if ((PROTECTED_FIELDS as readonly string[]).includes(name) && (f.searchable || f.indexed || f.sortable)) {
    problems.push(`${at}: a protected field cannot be searchable, indexed or sortable`);
  }
}

/** Whether a field's default fits it; `f`: the field as declared (its keys checked above). */
function defaultProblem(type: FieldType, f: Readonly<Record<string, unknown>>): string | undefined {
  const v = f.default;
  const validation = isObject(f.validation) ? f.validation : {};
  switch (type) {
    case 'enum':
      return typeof v === 'string' && Array.isArray(f.values) && f.values.includes(v) ? undefined : `is not one of the values`;
    case 'number':
      if (typeof v !== 'number') return 'is not a number';
      if (typeof validation.min === 'number' && v < validation.min) return `is below validation.min`;
      if (typeof validation.max === 'number' && v > validation.max) return `is above validation.max`;
      return undefined;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'is not a boolean';
    case 'datetime':
      return typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? undefined : 'is not a date-time';
    case 'date':
      return typeof v === 'string' && isCalendarDate(v) ? undefined : 'is not a calendar date YYYY-MM-DD';
    default:
      if (typeof v !== 'string') return 'is not a string';
      if (typeof f.maxLength === 'number' && v.length > f.maxLength) return 'is longer than maxLength';
      if (typeof validation.pattern === 'string' && validation.pattern && !new RegExp(validation.pattern, 'u').test(v)) return 'does not match validation.pattern';
      return undefined;
  }
}

function checkRelation(name: string, relation: unknown, def: Readonly<Record<string, unknown>>, problems: string[]): void {
  const at = `relation '${name}'`;
  if (!FIELD_NAME.test(name)) problems.push(`${at}: a relation name is a letter followed by letters, digits or _`);
  if (!isObject(relation)) {
    problems.push(`${at}: must be an object`);
    return;
  }
  for (const key of Object.keys(relation)) if (!['type', 'entity', 'foreignKey'].includes(key)) problems.push(`${at}: unknown key '${key}'`);
  const r = relation;
  if (!isOneOf(RELATION_TYPES, r.type)) problems.push(`${at}: type must be one of ${RELATION_TYPES.join(', ')}`);
  if (typeof r.entity !== 'string' || r.entity === '') problems.push(`${at}: entity must name an entity`);
  if (typeof r.foreignKey !== 'string' || !FIELD_NAME.test(r.foreignKey)) {
    problems.push(`${at}: foreignKey must name a field`);
    return;
  }
  const fields = isObject(def.fields) ? def.fields : {};
  if (name in fields) problems.push(`${at}: has the name of a field`);
  if (r.type === 'belongsTo' && !(r.foreignKey in fields)) problems.push(`${at}: foreignKey '${r.foreignKey}' is not a field of this entity`);
  if (r.type === 'manyToMany') {
    if (r.foreignKey in fields) problems.push(`${at}: foreignKey '${r.foreignKey}' holds the linked ids and cannot also be a field`);
    if ((SYSTEM_ATTRIBUTES as readonly string[]).includes(r.foreignKey) || (RECORD_EXTRAS as readonly string[]).includes(r.foreignKey)) {
      problems.push(`${at}: foreignKey '${r.foreignKey}' is managed by the service`);
    }
  }
  if (r.type === 'hasMany' && r.entity === 'users') problems.push(`${at}: users cannot be a hasMany target`);
}

/** Problems of one definition, without looking at the others. */
export function definitionProblems(def: unknown): string[] {
  const problems: string[] = [];
  if (!isObject(def)) return ['the definition must be an object (export default {...})'];
  for (const key of Object.keys(def)) if (!DEFINITION_KEYS.has(key)) problems.push(`unknown key '${key}'`);
  const d = def;
  if (typeof d.name !== 'string' || !/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(d.name)) problems.push('name must be a word (letters, digits, _ or -)');
  if (typeof d.slug !== 'string' || !/^[a-z][a-z0-9-]{0,63}$/.test(d.slug)) problems.push('slug must be lower-case letters, digits or - (a URL segment)');
  else if (RESERVED_SLUGS.has(d.slug)) problems.push(`slug '${d.slug}' is a core path and cannot be an entity`);
  if (typeof d.tableName !== 'string' || !/^[a-z][a-z0-9_]{0,63}$/.test(d.tableName)) problems.push('tableName must be lower-case letters, digits or _');
  if (!isObject(d.idFormat)) problems.push("idFormat must be {type: 'prefixed', prefix} or {type: 'uuid'}");
  else if (d.idFormat.type === 'prefixed') {
    if (typeof d.idFormat.prefix !== 'string' || !/^[a-z]{2,8}$/.test(d.idFormat.prefix)) problems.push('idFormat.prefix must be 2 to 8 lower-case letters');
  } else if (d.idFormat.type !== 'uuid') problems.push("idFormat.type must be 'prefixed' or 'uuid'");
  if (!isObject(d.fields) || Object.keys(d.fields).length === 0) problems.push('fields must be an object with at least one field');
  else for (const [name, field] of Object.entries(d.fields)) checkField(name, field, problems);
  if (d.permissions !== undefined) {
    if (!isObject(d.permissions)) problems.push('permissions must be an object');
    else {
      for (const [key, scopes] of Object.entries(d.permissions)) {
        if (!(PERMISSIONS as readonly string[]).includes(key)) problems.push(`permissions: unknown operation '${key}'`);
        else if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string' && SCOPE.test(s))) {
          problems.push(`permissions.${key} must be an array of scopes (entity:read|write|delete|*, read, write, delete or *)`);
        }
      }
    }
  }
  if (!isObject(d.access) || typeof d.access.public !== 'boolean' || typeof d.access.shared !== 'boolean') {
    problems.push('access must be {public: boolean, shared: boolean}');
  } else for (const key of Object.keys(d.access)) if (!['public', 'shared'].includes(key)) problems.push(`access: unknown key '${key}'`);
  if (d.operations !== undefined) {
    if (!isObject(d.operations)) problems.push('operations must be an object');
    else {
      for (const [key, on] of Object.entries(d.operations)) {
        if (!(OPERATIONS as readonly string[]).includes(key)) problems.push(`operations: unknown operation '${key}' (known: ${OPERATIONS.join(', ')})`);
        else if (typeof on !== 'boolean') problems.push(`operations.${key} must be a boolean`);
      }
    }
  }
  if (d.softDelete !== undefined && typeof d.softDelete !== 'boolean') problems.push('softDelete must be a boolean');
  if (d.history !== undefined && d.history !== false) {
    const days = (d.history as { days?: unknown } | null)?.days;
    if (typeof d.history !== 'object' || d.history === null || !Number.isInteger(days) || (days as number) < 1 || (days as number) > 3650) problems.push('history must be false or { days: an integer from 1 to 3650 }');
  }
  if (d.relations !== undefined) {
    if (!isObject(d.relations)) problems.push('relations must be an object');
    else for (const [name, relation] of Object.entries(d.relations)) checkRelation(name, relation, d, problems);
  }
  if (d.writeShards !== undefined && d.writeShards !== 'auto' && (!isPositiveInt(d.writeShards) || (d.writeShards as number) > MAX_WRITE_SHARDS)) {
    problems.push(`writeShards must be 'auto' or an integer from 1 to ${MAX_WRITE_SHARDS} (partition keys a listing's writes spread over; a page 1 reads each)`);
  }
  if (d.aggregates !== undefined) checkAggregates(d.aggregates, d.fields, problems);
  if (d.rateLimit !== undefined) {
    if (!isObject(d.rateLimit) || !isPositiveInt(d.rateLimit.limit) || typeof d.rateLimit.window !== 'string' || !/^\d+[smhd]$/.test(d.rateLimit.window)) {
      problems.push("rateLimit must be {limit: positive integer, window: e.g. '1h'}");
    }
  }
  return problems;
}

/**
 * `aggregates: { sum: [number fields], days: [date fields] }`: each a field of the right type
 * (days also createdAt and updatedAt), named once.
 */
function checkAggregates(aggregates: unknown, fields: unknown, problems: string[]): void {
  if (!isObject(aggregates)) {
    problems.push("aggregates must be an object: { sum: ['<number field>', ...], days: ['<date field>', ...] }");
    return;
  }
  for (const key of Object.keys(aggregates)) if (key !== 'sum' && key !== 'days') problems.push(`aggregates: unknown key '${key}' (known: sum, days)`);
  const declared = isObject(fields) ? fields : {};
  const kinds = [
    { key: 'sum', types: ['number'], own: [], what: 'a number field (only number fields can be summed)' },
    { key: 'days', types: ['date', 'datetime'], own: ['createdAt', 'updatedAt'], what: 'a date or date-time field (only dates are counted per day)' },
  ] as const;
  for (const { key, types, own, what } of kinds) {
    const names = aggregates[key];
    if (names === undefined) continue;
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) {
      problems.push(`aggregates.${key} must be an array of field names`);
      continue;
    }
    for (const name of names as string[]) {
      if ((own as readonly string[]).includes(name)) continue;
      const field = Object.prototype.hasOwnProperty.call(declared, name) ? declared[name] : undefined;
      if (!isObject(field)) problems.push(`aggregates.${key}: '${name}' is not a field of this entity`);
      else if (!(types as readonly unknown[]).includes(field.type)) problems.push(`aggregates.${key}: '${name}' is not ${what}`);
    }
    const twice = (names as string[]).filter((name, i) => names.indexOf(name) !== i);
    if (twice.length) problems.push(`aggregates.${key}: '${twice[0]}' is named twice`);
  }
}

function label(def: unknown, source?: string): string {
  const slug = isObject(def) && typeof def.slug === 'string' ? def.slug : undefined;
  return [source, slug ? `entity '${slug}'` : undefined].filter(Boolean).join(' ') || 'entity definition';
}

/** Checks one definition and fills in its defaults; throws RegistryError naming the entity and every problem. */
export function validateDefinition(def: unknown, source = 'inline'): LoadedEntity {
  const problems = definitionProblems(def);
  if (problems.length) {
    throw new RegistryError(`Invalid entity definition: ${label(def, source)}: ${problems.join('; ')}`, problems);
  }
  const d = def as EntityDefinition;
  const slug = d.slug;
  const operations = Object.fromEntries(OPERATIONS.map((op) => [op, d.operations?.[op] ?? true])) as Record<OperationName, boolean>;
  const defaults: Record<PermissionName, string[]> = {
    create: [`${slug}:write`],
    read: [`${slug}:read`],
    update: [`${slug}:write`],
    delete: [`${slug}:delete`],
  };
  const permission = (p: PermissionName): readonly string[] => [...(d.permissions?.[p] ?? defaults[p])];
  const permissions: Record<PermissionName, readonly string[]> = { create: permission('create'), read: permission('read'), update: permission('update'), delete: permission('delete') };
  const loaded: LoadedEntity = {
    ...d,
    permissions,
    operations,
    softDelete: d.softDelete ?? false,
    relations: { ...(d.relations ?? {}) },
    source,
  };
  return deepFreeze(loaded);
}

/** Checks across definitions: unique slugs, names and tables; relation and reference targets. */
export function validateRegistry(entities: readonly LoadedEntity[]): void {
  const problems: string[] = [];
  const bySlug = new Map<string, LoadedEntity>();
  for (const kind of ['slug', 'name', 'tableName'] as const) {
    const seen = new Map<string, string>();
    for (const e of entities) {
      const other = seen.get(e[kind]);
      if (other) problems.push(`${e.source} entity '${e.slug}': ${kind} '${e[kind]}' is also used by ${other}`);
      seen.set(e[kind], e.source);
    }
  }
  for (const e of entities) bySlug.set(e.slug, e);
  const exists = (slug: string) => bySlug.has(slug) || (BUILT_IN_TARGETS as readonly string[]).includes(slug);
  for (const e of entities) {
    const at = `${e.source} entity '${e.slug}'`;
    for (const [name, field] of Object.entries(e.fields)) {
      if (field.references && !exists(field.references)) problems.push(`${at}: field '${name}' references unknown entity '${field.references}'`);
    }
    for (const [name, r] of Object.entries(e.relations)) {
      if (!exists(r.entity)) {
        problems.push(`${at}: relation '${name}' targets unknown entity '${r.entity}'`);
        continue;
      }
      if (r.type === 'hasMany') {
        const target = bySlug.get(r.entity)!;
        const fk = target.fields[r.foreignKey];
        if (!fk) problems.push(`${at}: relation '${name}': '${r.foreignKey}' is not a field of '${r.entity}'`);
        else if (!fk.indexed) problems.push(`${at}: relation '${name}': '${r.entity}.${r.foreignKey}' must be indexed (children are listed from its partition)`);
      }
    }
  }
  if (problems.length) throw new RegistryError(`Invalid entity registry: ${problems.join('; ')}`, problems);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
