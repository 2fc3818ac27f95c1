/**
 * What the registry contributes to the OpenAPI document: per entity a record schema, a create and
 * an update schema (the very JSON schemas the API validates bodies with, shared/registry/schemas.ts),
 * a filter schema with every operator, and the operations of the entity routes of shared/routes.ts
 * with the LIST parameters. Pure: entities in, plain objects out.
 */
import { DEFAULT_LIMIT, MAX_IDS, MAX_LIMIT, OPERATORS, RESERVED_PARAMETERS } from '../query/index.js';
import { bodySchema, linkKeys, PROTECTED_FIELDS, type FieldDefinition, type LoadedEntity, type OperationName } from '../registry/index.js';
import { envelopeOf, ref, type Schema } from './components.js';
import type { OperationSpec } from './operation.js';

const PROTECTED = new Set<string>(PROTECTED_FIELDS);

/** 'task' → 'Task', 'line item' → 'LineItem'. */
export function pascalCase(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

export function schemaNames(entity: LoadedEntity): { record: string; create: string; update: string; filter: string } {
  const base = pascalCase(entity.name);
  return { record: base, create: `${base}Create`, update: `${base}Update`, filter: `${base}Filter` };
}

function valueSchema(field: FieldDefinition): Schema {
  switch (field.type) {
    case 'string': {
      const schema: Schema = { type: 'string' };
      const max = [field.maxLength, field.validation?.max].filter((n): n is number => n !== undefined);
      if (max.length) schema.maxLength = Math.min(...max);
      if (field.validation?.pattern !== undefined) schema.pattern = field.validation.pattern;
      return schema;
    }
    case 'number':
      return {
        type: 'number',
        ...(field.validation?.min !== undefined ? { minimum: field.validation.min } : {}),
        ...(field.validation?.max !== undefined ? { maximum: field.validation.max } : {}),
      };
    case 'enum':
      return { type: 'string', enum: [...(field.values ?? [])] };
    case 'datetime':
      return { type: 'string', format: 'date-time' };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'boolean':
      return { type: 'boolean' };
    case 'uuid':
      return { type: 'string', format: 'uuid' };
  }
}

function sampleValue(name: string, field: FieldDefinition): unknown {
  if (field.default !== undefined) return field.default;
  switch (field.type) {
    case 'string':
      if (field.validation?.pattern === '^#[0-9a-fA-F]{6}$') return '#3366ff';
      if (/email/i.test(name)) return 'ada@example.com';
      return `Example ${name}`;
    case 'number':
      return Math.max(field.validation?.min ?? 0, 10);
    case 'enum':
      return field.values?.[0];
    case 'datetime':
      return '2026-01-01T12:00:00.000Z';
    case 'date':
      return '2026-01-01';
    case 'boolean':
      return true;
    case 'uuid':
      return '6f1c1e2a-0b7e-4c55-9d1e-3f3b2a1c0d9e';
  }
}

function publicFields(entity: LoadedEntity): [string, FieldDefinition][] {
  return Object.entries(entity.fields).filter(([name]) => !PROTECTED.has(name));
}

/** A create body that passes validation: every required field (references left out). */
export function createExample(entity: LoadedEntity): Record<string, unknown> {
  const example: Record<string, unknown> = {};
  for (const [name, field] of publicFields(entity)) {
    if (field.generated) continue;
    if (field.required || (!field.references && field.type !== 'datetime')) example[name] = sampleValue(name, field);
  }
  return example;
}

function recordExample(entity: LoadedEntity): Record<string, unknown> {
  const id = entity.idFormat.type === 'uuid' ? '0d8c4a52-5a3e-4f0e-9a63-2b9d2f4c7e11' : `${entity.idFormat.prefix}_8Jx2LqP4Zs`;
  const example: Record<string, unknown> = { id, ...createExample(entity) };
  for (const key of linkKeys(entity)) example[key] = [];
  example.createdAt = '2026-01-01T12:00:00.000Z';
  example.updatedAt = '2026-01-01T12:00:00.000Z';
  return example;
}

function recordSchema(entity: LoadedEntity): Schema {
  const properties: Record<string, Schema> = {
    id: entity.idFormat.type === 'uuid' ? { type: 'string', format: 'uuid' } : { type: 'string', pattern: `^${entity.idFormat.prefix}_` },
  };
  for (const [name, field] of publicFields(entity)) {
    const value = valueSchema(field);
    // A stored optional field may have been cleared with null.
    properties[name] = field.required ? value : { anyOf: [value, { type: 'null' }] };
    if (field.references) properties[name].description = `Id of a ${field.references === 'users' ? 'user of the tenant' : `record of ${field.references}`}.`;
    if (field.unique) {
      const scope = entity.access.public ? 'across every tenant' : 'in the tenant';
      properties[name].description = [properties[name].description, `Unique ${scope}: a value another record holds answers 409 UNIQUE_VIOLATION.`].filter(Boolean).join(' ');
    }
  }
  for (const key of linkKeys(entity)) properties[key] = { type: 'array', items: { type: 'string' } };
  properties.createdAt = { type: 'string', format: 'date-time', readOnly: true };
  properties.updatedAt = { type: 'string', format: 'date-time', readOnly: true };
  if (entity.softDelete) properties.deletedAt = { type: 'string', format: 'date-time', readOnly: true, description: 'Set when the record is soft-deleted.' };
  properties.metadata = { type: 'object', additionalProperties: true, description: 'Present with includeMetadata=true or mergeMetadata=true.' };
  properties.metas = { type: 'object', additionalProperties: { type: 'string' }, description: 'Present with metas=all or metas=<names>.' };
  return {
    type: 'object',
    description: `A ${entity.name} record. Fields left out with \`fields=\` are absent; relations asked for with \`include=\` are embedded under their name.`,
    required: ['id'],
    properties,
    examples: [recordExample(entity)],
  };
}

function operatorSchema(field: FieldDefinition): Schema {
  const value = valueSchema(field);
  const comparable = field.type === 'number' || field.type === 'datetime' || field.type === 'date' ? value : { type: ['string', 'number'] };
  return {
    type: 'object',
    minProperties: 1,
    additionalProperties: false,
    properties: {
      $eq: { anyOf: [value, { type: 'null' }] },
      $ne: { anyOf: [value, { type: 'null' }] },
      $gt: comparable,
      $gte: comparable,
      $lt: comparable,
      $lte: comparable,
      $in: { type: 'array', items: value, maxItems: 100 },
      $nin: { type: 'array', items: value, maxItems: 100 },
      $contains: { type: 'string' },
      $startsWith: { type: 'string' },
      $endsWith: { type: 'string' },
      $null: { type: 'boolean' },
    },
  };
}

function filterSchema(entity: LoadedEntity): Schema {
  const properties: Record<string, Schema> = { id: { anyOf: [{ type: 'string' }, operatorSchema({ type: 'string' })] } };
  for (const [name, field] of publicFields(entity)) properties[name] = { anyOf: [valueSchema(field), { type: 'null' }, operatorSchema(field)] };
  properties.createdAt = { anyOf: [{ type: 'string', format: 'date-time' }, operatorSchema({ type: 'datetime' })] };
  properties.updatedAt = { anyOf: [{ type: 'string', format: 'date-time' }, operatorSchema({ type: 'datetime' })] };
  return {
    type: 'object',
    description: `A LIST filter on ${entity.slug}: a field name maps to a value (equality) or to an object of operators (${OPERATORS.join(', ')}); all conditions must match. Keys \`metadata.<path>\` filter on metadata.`,
    properties,
    patternProperties: { '^metadata\\.': {} },
    additionalProperties: false,
  };
}

/** The component schemas of one entity. */
export function entitySchemas(entity: LoadedEntity): Record<string, Schema> {
  const names = schemaNames(entity);
  const create = bodySchema(entity, 'create');
  const update = bodySchema(entity, 'update');
  return {
    [names.record]: recordSchema(entity),
    [names.create]: { ...create, description: `The body of a ${entity.name} create: unknown fields are refused (422); generated fields are ignored.`, examples: [createExample(entity)] },
    [names.update]: { ...update, description: `The body of a ${entity.name} update: only the fields to change; null clears an optional field.` },
    [names.filter]: filterSchema(entity),
  };
}

const query = (name: string, schema: Schema, description: string, extra: Schema = {}): Schema => ({ name, in: 'query', required: false, description, schema, ...extra });
const bool: Schema = { type: 'boolean' };
const csv: Schema = { type: 'string' };

/** Parameters every entity shares: components.parameters, referenced by name. */
export const COMMON_PARAMETERS: Record<string, Schema> = {
  Page: query('page', { type: 'integer', minimum: 1, default: 1 }, 'Page number, from 1.'),
  Limit: query('limit', { type: 'integer', minimum: 1, default: DEFAULT_LIMIT }, `Page size; values above ${MAX_LIMIT} are capped to ${MAX_LIMIT}.`),
  Cursor: query('cursor', { type: 'string' }, '`pagination.nextCursor` of the previous page: continues after it at a cost that does not grow with depth.'),
  SortBy: query('sortBy', csv, 'Alternative spelling of sort.'),
  Order: query('order', { type: 'string', pattern: '^(asc|desc)(,(asc|desc))*$' }, '`asc` or `desc` (comma list pairs with sort); default asc when sort is given, else createdAt desc.'),
  SortOrder: query('sortOrder', { type: 'string', pattern: '^(asc|desc)(,(asc|desc))*$' }, 'Alternative spelling of order.'),
  StartDate: query('startDate', { type: 'string' }, 'Inclusive lower bound (YYYY-MM-DD or ISO 8601) on dateField; also spelled from.'),
  EndDate: query('endDate', { type: 'string' }, 'Inclusive upper bound on dateField; also spelled to.'),
  From: query('from', { type: 'string' }, 'Alternative spelling of startDate.'),
  To: query('to', { type: 'string' }, 'Alternative spelling of endDate.'),
  DateField: query('dateField', { type: 'string', default: 'createdAt' }, 'The datetime or date field the date range applies to.'),
  Distinct: query('distinct', bool, 'With `fields` naming one field: the distinct values of that field as {value, label, entityType} items.'),
  Ids: query('ids', csv, `Comma-separated ids to return (at most ${MAX_IDS}).`),
  Metas: query('metas', csv, '`all`, or comma-separated metas names to return.'),
  Child: query('child', csv, '`all`, or comma-separated child collections to embed.'),
  IncludeMetadata: query('includeMetadata', bool, "Adds each record's metadata."),
  MetadataFields: query('metadataFields', csv, 'Comma-separated top-level metadata keys to return.'),
  MergeMetadata: query('mergeMetadata', bool, 'Returns metadata merged from global defaults, tenant settings, user preferences and the record.'),
  MergeStrategy: query('mergeStrategy', { type: 'string', enum: ['deep', 'shallow'], default: 'deep' }, 'How merged metadata combines.'),
  ReplaceMetadata: query('replaceMetadata', bool, 'Replace the metadata instead of merging.'),
};

const common = (name: keyof typeof COMMON_PARAMETERS): Schema => ({ $ref: `#/components/parameters/${name}` });

/** Parameters READ accepts (LIST accepts them too). */
function readParameters(entity: LoadedEntity): Schema[] {
  const relationNames = Object.keys(entity.relations);
  return [
    query('fields', csv, 'Comma-separated field names to return (id always).', { example: Object.keys(entity.fields).slice(0, 2).join(',') }),
    ...(relationNames.length
      ? [
          query('include', csv, `Comma-separated relations to embed (${relationNames.join(', ')}); nested with a dot.`),
          ...relationNames.map((r) => query(`includeFields[${r}]`, csv, `Fields to return for the included relation ${r}.`)),
        ]
      : []),
    common('Metas'),
    common('Child'),
    common('IncludeMetadata'),
    common('MetadataFields'),
    common('MergeMetadata'),
    common('MergeStrategy'),
  ];
}

/** Every LIST parameter of SPEC.md, plus an equality parameter per field of the entity. */
export function listParameters(entity: LoadedEntity): Schema[] {
  const names = schemaNames(entity);
  const fieldNames = publicFields(entity).map(([n]) => n);
  const exampleFilter = (() => {
    const enumField = publicFields(entity).find(([, f]) => f.type === 'enum');
    if (enumField) return { [enumField[0]]: { $in: enumField[1].values!.slice(0, 2) } };
    return { createdAt: { $gte: '2026-01-01T00:00:00Z' } };
  })();
  const sortable = ['id', 'createdAt', 'updatedAt', ...publicFields(entity).filter(([, f]) => f.sortable !== false).map(([n]) => n)];
  const searchable = publicFields(entity).filter(([, f]) => f.searchable).map(([n]) => n);
  return [
    common('Page'),
    common('Limit'),
    common('Cursor'),
    query(
      'filter',
      { type: 'string', contentMediaType: 'application/json', contentSchema: ref(names.filter) },
      `A JSON object (URL-encoded). Operators: ${OPERATORS.map((o) => `\`${o}\``).join(', ')}. An unknown field or operator answers 400 INVALID_FILTER.`,
      { example: JSON.stringify(exampleFilter) },
    ),
    ...(searchable.length ? [query('search', { type: 'string' }, `Case-insensitive partial match across ${searchable.join(', ')}; several words must all match.`)] : []),
    query('sort', csv, `Field name or comma-separated names (${sortable.join(', ')}); also spelled sortBy. A field that cannot be sorted answers 400 INVALID_SORT.`),
    common('SortBy'),
    common('Order'),
    common('SortOrder'),
    common('StartDate'),
    common('EndDate'),
    common('From'),
    common('To'),
    common('DateField'),
    common('Distinct'),
    common('Ids'),
    ...readParameters(entity),
    ...fieldNames
      .filter((n) => !RESERVED_PARAMETERS.has(n))
      .map((n) => query(n, { type: 'string' }, `Equality filter on ${n}.`)),
  ];
}

/** LIST's filter parameters, which an aggregate takes with LIST's meaning (its own are declared with its route). */
const AGGREGATE_FILTERS = new Set(['filter', 'search', 'startDate', 'endDate', 'from', 'to', 'dateField']);
const AGGREGATE_OWN = new Set(['count', 'sum', 'avg', 'min', 'max', 'groupBy', 'interval']);

export function aggregateFilterParameters(entity: LoadedEntity): Schema[] {
  const fieldNames = new Set(publicFields(entity).map(([n]) => n));
  return listParameters(entity).filter((p) => {
    const name = (typeof p.$ref === 'string' ? COMMON_PARAMETERS[p.$ref.split('/').pop()!]?.name : p.name) as string | undefined;
    if (!name || AGGREGATE_OWN.has(name)) return false;
    return AGGREGATE_FILTERS.has(name) || (fieldNames.has(name) && !RESERVED_PARAMETERS.has(name));
  });
}

const idParameter = (entity: LoadedEntity): Schema => ({
  name: 'id',
  in: 'path',
  required: true,
  description: `The ${entity.name}'s id.`,
  schema: { type: 'string' },
});

const ifNoneMatch: Schema = { $ref: '#/components/parameters/IfNoneMatch' };
const idempotencyKey: Schema = { $ref: '#/components/parameters/IdempotencyKey' };

interface EntityRouteContext {
  entity: LoadedEntity;
  method: string;
  /** The route's path template, before expansion. */
  template: string;
  /** Every registered entity, for child collections. */
  entities: ReadonlyMap<string, LoadedEntity>;
}

function enabled(entity: LoadedEntity, op: OperationName): boolean {
  return entity.operations[op];
}

/**
 * The operations of one entity route, expanded: `/api/v1/{entity}` → `/api/v1/tasks`, and for the
 * child route one path per collection relation. Disabled operations are left out.
 */
export function entityOperations(ctx: EntityRouteContext): { path: string; spec: OperationSpec }[] {
  const { entity, method, template } = ctx;
  const names = schemaNames(entity);
  const base = pascalCase(entity.slug);
  const single = pascalCase(entity.name);
  const tag = entity.slug;
  const collection = template.replace('{entity}', entity.slug);
  const record = ref(names.record);
  const listOf = (schema: Schema) => envelopeOf({ type: 'array', items: schema }, { pagination: true });
  const listHeaders = ['ETag', 'X-Total-Count', 'X-Page', 'X-Per-Page', 'Link'];

  if (template.endsWith('/{entity}')) {
    switch (method) {
      case 'GET':
        if (!enabled(entity, 'list')) return [];
        return [{
          path: collection,
          spec: {
            tag, operationId: `list${base}`, summary: `List ${entity.slug}`,
            description: `Pages of ${entity.slug}, newest first unless sorted. ${entity.access.public ? 'Public: no credentials needed.' : entity.access.shared ? 'Every user of the tenant sees every record.' : 'Row-level security: a user sees their own records (admins every record of the tenant).'}`,
            parameters: [...listParameters(entity), ifNoneMatch],
            responses: { 200: { description: `A page of ${entity.slug}.`, schema: listOf(record), headers: listHeaders }, 304: { description: 'Not modified (If-None-Match).' } },
            errors: [400],
          },
        }];
      case 'POST':
        if (!enabled(entity, 'create')) return [];
        return [{
          path: collection,
          spec: {
            tag, operationId: `create${single}`, summary: `Create a ${entity.name}`,
            parameters: [idempotencyKey],
            requestBody: { schema: ref(names.create), example: createExample(entity) },
            responses: { 201: { description: `The created ${entity.name}.`, schema: envelopeOf(record) } },
            errors: [400, 409, 422],
          },
        }];
      case 'OPTIONS':
        return [{
          path: collection,
          spec: {
            tag, operationId: `describe${base}`, summary: `Describe ${entity.slug}`,
            description: 'The entity description: methods, field descriptors, relations, the caller\'s permissions and rate limit. A CORS preflight (with Origin and Access-Control-Request-Method) is answered without credentials instead.',
            responses: { 200: { description: 'The entity description.', schema: envelopeOf(ref('EntityDescription')) } },
            errors: [],
          },
        }];
      case 'PATCH':
        if (!enabled(entity, 'update')) return [];
        return [{
          path: collection,
          spec: {
            tag, operationId: `bulkUpdate${base}`, summary: `Update many ${entity.slug}`,
            description: 'At most 100 items, each validated and authorised like a single update.',
            requestBody: {
              schema: {
                type: 'object', required: ['updates'], additionalProperties: false,
                properties: { updates: { type: 'array', minItems: 1, maxItems: 100, items: { allOf: [ref(names.update), { type: 'object', required: ['id'], properties: { id: { type: 'string' } } }] } } },
              },
            },
            responses: {
              200: {
                description: 'What was updated and what failed.',
                schema: envelopeOf({
                  type: 'object', required: ['operationId', 'updated', 'failed', 'items', 'failures'],
                  properties: { operationId: { type: 'string', description: 'Kept in the revision of every record this call changed.' }, updated: { type: 'integer' }, failed: { type: 'integer' }, items: { type: 'array', items: record }, failures: { type: 'array', items: ref('BulkFailure') } },
                }),
              },
            },
            errors: [400, 422],
          },
        }];
      case 'DELETE':
        if (!enabled(entity, 'delete')) return [];
        return [{
          path: collection,
          spec: {
            tag, operationId: `bulkDelete${base}`, summary: `Delete many ${entity.slug}`,
            description: 'At most 100 ids, each authorised like a single delete.',
            requestBody: { schema: { type: 'object', required: ['ids'], additionalProperties: false, properties: { ids: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string' } } } } },
            responses: {
              200: {
                description: 'What was deleted and what failed.',
                schema: envelopeOf({
                  type: 'object', required: ['operationId', 'deleted'],
                  properties: { operationId: { type: 'string', description: 'Kept in the revision of every record this call deleted.' }, deleted: { type: 'integer' }, failed: { type: 'integer' }, ids: { type: 'array', items: { type: 'string' } }, failures: { type: 'array', items: ref('BulkFailure') } },
                }),
              },
            },
            errors: [400, 422],
          },
        }];
    }
    return [];
  }

  if (template.endsWith('/{entity}/aggregate')) {
    if (method !== 'GET' || !enabled(entity, 'list')) return [];
    const numeric = publicFields(entity).find(([, f]) => f.type === 'number')?.[0];
    const grouped = publicFields(entity).find(([, f]) => f.type === 'enum')?.[0];
    // Two values in the order groups come: by key ascending.
    const [firstValue, secondValue] = grouped ? [...entity.fields[grouped].values!].sort() : [];
    const exampleQuery = [grouped && `groupBy=${grouped}`, numeric && `sum=${numeric}`].filter(Boolean).join('&') || 'count';
    // Each entity's own examples of the aggregate's declared parameters (shared/route-declarations/entities.ts).
    const examples: Schema[] = [
      ...(numeric ? [{ name: 'sum', in: 'query', example: numeric }, { name: 'avg', in: 'query', example: numeric }] : []),
      { name: 'min', in: 'query', example: numeric ?? 'createdAt' },
      { name: 'max', in: 'query', example: numeric ?? 'createdAt' },
      ...(grouped ? [{ name: 'groupBy', in: 'query', example: grouped }] : []),
      { name: 'interval', in: 'query', example: 'day' },
    ];
    return [{
      path: collection,
      spec: {
        tag, operationId: `aggregate${base}`, summary: `Count, sum, average, min and max of ${entity.slug}, by group`,
        description: `Aggregates of the ${entity.slug} the caller could list (LIST's filters, ${entity.access.public ? 'public: no credentials needed' : 'tenancy and row-level security'}${entity.softDelete ? ', soft-deleted records left out' : ''}). Groups are sorted by key ascending (null first); without grouping there is one group, key \`{}\`. A count alone, grouped by at most one indexed enum or boolean field, with no filter or one equality on an indexed field, and a count alone per \`interval\` of \`createdAt\` (or a date field the entity counts per day) with no filter but a range of whole days, are read from the counters kept with every write (\`meta.source: "counters"\`: a few read units whatever the number of records); \`min\` and \`max\` of \`createdAt\` alone (with \`count\`), with no filter or one equality on an indexed field, or grouped by one indexed enum or boolean field with no filter, from the two ends of the listing (of each value's), which is sorted by it (\`meta.source: "index"\`; grouped, only when every record has a value); anything else by reading the matching listing (\`meta.source: "scan"\`), and a read over AGGREGATE_SCAN_LIMIT records (100,000 by default) answers 400 AGGREGATE_TOO_LARGE. Either way its cost is in X-Request-Cost.\n\nFor example \`GET /api/v1/${entity.slug}/aggregate?${exampleQuery}\` (per group), or \`?interval=day&startDate=2024-06-01&endDate=2024-06-30\` (records per day of June, by \`createdAt\`).`,
        parameters: [...examples, ...aggregateFilterParameters(entity)],
        responses: {
          200: {
            description: 'The groups.',
            schema: {
              type: 'object', required: ['success', 'data', 'meta'],
              properties: {
                success: { const: true },
                data: {
                  type: 'array',
                  items: {
                    type: 'object', required: ['key'],
                    properties: {
                      key: { type: 'object', additionalProperties: true, description: 'The groupBy fields and the interval bucket (YYYY-MM-DD) of this group.' },
                      count: { type: 'integer' },
                      sum: { type: 'object', additionalProperties: { type: 'number' } },
                      avg: { type: 'object', additionalProperties: { type: ['number', 'null'] } },
                      min: { type: 'object', additionalProperties: true },
                      max: { type: 'object', additionalProperties: true },
                    },
                  },
                },
                meta: { type: 'object', required: ['groups', 'source'], properties: { groups: { type: 'integer' }, source: { type: 'string', enum: ['counters', 'index', 'scan'] } } },
              },
            },
            example: {
              success: true,
              data: [
                { key: grouped ? { [grouped]: firstValue } : {}, count: 3, ...(numeric ? { sum: { [numeric]: 70 } } : {}) },
                ...(grouped && secondValue ? [{ key: { [grouped]: secondValue }, count: 1, ...(numeric ? { sum: { [numeric]: 12.5 } } : {}) }] : []),
              ],
              meta: { groups: grouped && secondValue ? 2 : 1, source: 'scan' },
            },
          },
        },
        errors: [400],
      },
    }];
  }

  if (template.endsWith('/{entity}/{id}')) {
    const path = collection;
    const parameters = [idParameter(entity)];
    switch (method) {
      case 'GET':
        if (!enabled(entity, 'read')) return [];
        return [{
          path,
          spec: {
            tag, operationId: `get${single}`, summary: `Read a ${entity.name}`,
            parameters: [...parameters, ...readParameters(entity), ifNoneMatch],
            responses: { 200: { description: `The ${entity.name}.`, schema: envelopeOf(record), headers: ['ETag'] }, 304: { description: 'Not modified (If-None-Match).' } },
            errors: [404],
          },
        }];
      case 'PATCH':
        if (!enabled(entity, 'update')) return [];
        return [{
          path,
          spec: {
            tag, operationId: `update${single}`, summary: `Update a ${entity.name}`,
            description: 'Changes only the fields sent. `metadata` is merged into the stored metadata (a key set to null is removed) unless replaceMetadata=true.',
            parameters: [...parameters, common('ReplaceMetadata')],
            requestBody: { schema: ref(names.update) },
            responses: { 200: { description: `The updated ${entity.name}.`, schema: envelopeOf(record) } },
            errors: [400, 404, 409, 422],
          },
        }];
      case 'DELETE':
        if (!enabled(entity, 'delete')) return [];
        return [{
          path,
          spec: {
            tag, operationId: `delete${single}`, summary: `Delete a ${entity.name}`,
            description: entity.softDelete ? 'Soft delete: the record gets deletedAt and is returned; it leaves LIST and READ answers 404.' : 'Removes the record for good.',
            parameters,
            responses: {
              200: entity.softDelete
                ? { description: `The soft-deleted ${entity.name}.`, schema: envelopeOf(record) }
                : { description: 'Deleted.', schema: { type: 'object', required: ['success', 'message'], properties: { success: { const: true }, message: { type: 'string' } } } },
            },
            errors: [404],
          },
        }];
    }
    return [];
  }

  if (template.endsWith('/{entity}/deleted') && method === 'GET' && enabled(entity, 'read') && entity.history !== false) {
    return [{
      path: collection,
      spec: {
        tag, operationId: `listDeleted${base}`, summary: `List the deleted ${entity.slug} that can be restored`,
        description: `The ${entity.slug} deleted within retention, newest first: the caller's own (an admin's: the tenant's${entity.access.shared ? '; every user of the tenant sees all of them' : ''}). Each comes back with POST /{id}/restore and the revision before its deletion.`,
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'The nextCursor of the previous page.' },
        ],
        responses: {
          200: {
            description: 'A page of deleted records.',
            schema: envelopeOf({ type: 'array', items: { type: 'object', required: ['id', 'deletedAt', 'revision'], properties: { id: { type: 'string' }, deletedAt: { type: 'string', format: 'date-time' }, revision: { type: 'integer', description: 'The deletion\'s revision: restore revision - 1.' } } } }, { pagination: true }),
          },
        },
        errors: [400, 422],
      },
    }];
  }
  // History (docs/history.md): a record's revisions, the record after one, restore.
  if (template.endsWith('/{entity}/{id}/revisions') && method === 'GET' && enabled(entity, 'read') && entity.history !== false) {
    return [{
      path: collection,
      spec: {
        tag, operationId: `list${single}Revisions`, summary: `List a ${entity.name}'s revisions`,
        description: `Newest first, one per write (create, update, delete, restore), each with who made it, when, in which request and bulk operation, and the fields it changed (\`{field: {from, to}}\`). Kept ${entity.history ? entity.history.days : 30} days. Visible to those who may read the ${entity.name}; a deleted one's to its owner and the tenant's admins; anyone else gets 404.`,
        parameters: [
          idParameter(entity),
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'The nextCursor of the previous page.' },
        ],
        responses: { 200: { description: 'A page of revisions.', schema: envelopeOf({ type: 'array', items: ref('Revision') }, { pagination: true }) } },
        errors: [400, 404, 422],
      },
    }];
  }
  if (template.endsWith('/{entity}/{id}/revisions/{revision}') && method === 'GET' && enabled(entity, 'read') && entity.history !== false) {
    return [{
      path: collection,
      spec: {
        tag, operationId: `get${single}Revision`, summary: `Read a ${entity.name} as it stood after a revision`,
        parameters: [idParameter(entity), { name: 'revision', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: {
          200: {
            description: `The revision and the ${entity.name} as it stood after it.`,
            schema: envelopeOf({ type: 'object', required: ['revision', 'record'], properties: { revision: ref('Revision'), record } }),
          },
        },
        errors: [404, 422],
      },
    }];
  }
  if (template.endsWith('/{entity}/{id}/restore') && method === 'POST' && enabled(entity, 'update') && entity.history !== false) {
    return [{
      path: collection,
      spec: {
        tag, operationId: `restore${single}`, summary: `Restore a ${entity.name} to a revision`,
        description: `Puts the ${entity.name} back as it stood after \`revision\`, as a new revision (operation \`restore\`). Checked as an update (422, 409 on a unique value taken since, 412 on a stale If-Match). A deleted ${entity.name} (soft or hard, within retention) comes back with its id; that also needs the delete scope.`,
        parameters: [idParameter(entity), { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'The ETag the restore is conditional on (412 when the record changed since).' }],
        requestBody: { schema: { type: 'object', required: ['revision'], additionalProperties: false, properties: { revision: { type: 'integer', minimum: 1 } } }, example: { revision: 1 } },
        responses: { 200: { description: `The restored ${entity.name}.`, schema: envelopeOf(record), headers: ['ETag'] } },
        errors: [400, 404, 409, 412, 422],
      },
    }];
  }

  if (template.endsWith('/{entity}/{id}/{child}')) {
    const out: { path: string; spec: OperationSpec }[] = [];
    for (const [relationName, relation] of Object.entries(entity.relations)) {
      if (relation.type === 'belongsTo') continue;
      const target = ctx.entities.get(relation.entity);
      if (!target) continue;
      const path = template.replace('{entity}', entity.slug).replace('{child}', relationName);
      const targetNames = schemaNames(target);
      const childOp = `${single}${pascalCase(relationName)}`;
      if (method === 'GET' && target.operations.list) {
        out.push({
          path,
          spec: {
            tag, operationId: `list${childOp}`, summary: `List the ${relationName} of a ${entity.name}`,
            parameters: [idParameter(entity), ...listParameters(target)],
            responses: { 200: { description: `A page of ${target.slug}.`, schema: listOf(ref(targetNames.record)), headers: listHeaders } },
            errors: [400, 404],
          },
        });
      }
      if (method === 'POST' && target.operations.create) {
        out.push({
          path,
          spec: {
            tag, operationId: `create${childOp}`, summary: `Create a ${target.name} of a ${entity.name}`,
            description: relation.type === 'hasMany' ? `${relation.foreignKey} is set to the parent's id.` : `The new ${target.name} is linked to the ${entity.name} (${relation.foreignKey}).`,
            parameters: [idParameter(entity), idempotencyKey],
            requestBody: { schema: ref(targetNames.create) },
            responses: { 201: { description: `The created ${target.name}.`, schema: envelopeOf(ref(targetNames.record)) } },
            errors: [400, 404, 409, 422],
          },
        });
      }
    }
    return out;
  }
  return [];
}
