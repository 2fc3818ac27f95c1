/**
 * The GraphQL schema, generated from the entity registry (built once per process):
 *
 * For each entity (type name: its `name` in PascalCase, e.g. Task, Product):
 * - type <Type> { id: ID!, each field (string/datetime/date/uuid → String, number → Float,
 *   boolean → Boolean, enum → the GraphQL enum <Type><Field> of its values, or String when a
 *   value is not a GraphQL name; references and foreign keys → ID; non-null when required or
 *   defaulted), each belongsTo relation as an object beside its foreign key (`assignee: User` and
 *   `assigneeId: ID`), createdAt: String!, updatedAt: String!, deletedAt: String (soft-delete
 *   entities) }. So Task is SPEC.md's (id, title, description, status, priority, assignee,
 *   createdAt, updatedAt), with status and priority as enums (TaskStatus, TaskPriority: the same
 *   strings in JSON) and the stored assigneeId beside assignee. Filters take the same enums
 *   (`filter: {status: todo}`); create and update inputs take enum values as String.
 * - Query: <name>(id: ID!): <Type> (null when absent or not visible);
 *   <slug in camelCase>(page: Int, limit: Int, filter: <Type>Filter): <Type>Connection! with
 *   edges [{node}], pageInfo {hasNextPage, hasPreviousPage} and totalCount.
 *   <Type>Filter: equality on each field (AND), typed as the field is (an enum field by its
 *   enum), and `search` (the LIST `search`).
 *   <slug in camelCase>Aggregate(sum, avg, min, max, groupBy: [String!], interval: AggregateInterval,
 *   dateField, startDate, endDate: String, filter: <Type>Filter): <Type>Aggregate! {groups
 *   [{key, count, sum, avg, min, max}], source}: GET /api/v1/{entity}/aggregate's answer, its
 *   arguments read by the same parser (a field that cannot be aggregated that way is the same 400
 *   INVALID_REQUEST in extensions) and answered by the same service. `count` is always there.
 * - Mutation: create<Type>(input: Create<Type>Input!): <Type>!, update<Type>(id: ID!, input:
 *   Update<Type>Input!, ifMatch: String): <Type>!, delete<Type>(id: ID!, ifMatch: String): Boolean!
 *   (ifMatch: READ's ETag or `*`, as the If-Match header) — each only when the
 *   operation is enabled. Inputs: the writable fields (required ones non-null in Create) and
 *   manyToMany id lists (tagIds).
 * - type User { id: ID!, name: String, email: String } for relations to users.
 *
 * Resolvers call the entity service (shared/entities/service.ts), so scopes, row-level security,
 * validation, references, soft delete and change events are those of REST. Relations load
 * through the request's RelatedLoader (one BatchGetItem per level).
 */
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import { hasScope } from '../scopes.js';
import {
  aggregatableFields,
  aggregateQueryOf,
  aggregateRecords,
  createRecord,
  deleteRecord,
  listQueryOf,
  listRecords,
  preconditionsOfValue,
  readRecord,
  requirePermission,
  updateRecord,
} from '../entities/index.js';
import { InsufficientPermissionsError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { ApiRequest } from '../http/index.js';
import type { AuthContext } from '../caller.js';
import { allEntities, findEntity, linkKeys, writableFields, type FieldDefinition, type LoadedEntity } from '../registry/index.js';
import type { RelatedLoader } from './loaders.js';

export interface GraphQLContext {
  req: ApiRequest;
  auth: AuthContext | undefined;
  loader: RelatedLoader;
}

type Source = Record<string, unknown>;

export function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}

function camel(name: string): string {
  const p = pascal(name);
  return p[0].toLowerCase() + p.slice(1);
}

export interface EntityNames {
  type: string;
  one: string;
  many: string;
  create: string;
  update: string;
  remove: string;
  aggregate: string;
}

export function namesOf(entity: LoadedEntity): EntityNames {
  const type = pascal(entity.name);
  const one = camel(entity.name);
  let many = camel(entity.slug);
  if (many === one) many = `${one}List`;
  return { type, one, many, create: `create${type}`, update: `update${type}`, remove: `delete${type}`, aggregate: `${many}Aggregate` };
}

function scalarOf(field: FieldDefinition): GraphQLOutputType & GraphQLInputType {
  if (field.type === 'number') return GraphQLFloat;
  if (field.type === 'boolean') return GraphQLBoolean;
  return GraphQLString;
}

/** A GraphQL enum value name: a name that is not true, false or null. */
const ENUM_VALUE = /^[_A-Za-z][_0-9A-Za-z]*$/;

function enumerable(values: readonly string[] | undefined): values is readonly string[] {
  return Array.isArray(values) && values.length > 0 && values.every((v) => ENUM_VALUE.test(v) && v !== 'true' && v !== 'false' && v !== 'null');
}

/**
 * The GraphQL output types of an entity's fields: an enum field is a GraphQL enum `<Type><Field>`
 * whose values are the field's values (so its JSON is the same string); a field whose values are
 * not all GraphQL names (`in-progress`, `2x`) stays a String. Other fields map to their scalar.
 * Filters use these types too (one enum instance serves both: a schema holds one type per name).
 * Create and update inputs take enum values as String (`status: "todo"` keeps working, and a
 * value outside the enum is the service's 422 VALIDATION_FAILED with details, as in REST).
 */
function fieldTypes(entity: LoadedEntity, taken: ReadonlySet<string>): Map<string, GraphQLOutputType & GraphQLInputType> {
  const types = new Map<string, GraphQLOutputType & GraphQLInputType>();
  const type = namesOf(entity).type;
  for (const [name, field] of Object.entries(entity.fields)) {
    if (field.type !== 'enum' || !enumerable(field.values)) {
      types.set(name, scalarOf(field));
      continue;
    }
    let enumName = `${type}${pascal(name)}`;
    while (taken.has(enumName)) enumName = `${enumName}Enum`;
    types.set(name, new GraphQLEnumType({ name: enumName, values: Object.fromEntries(field.values.map((v) => [v, { value: v }])) }));
  }
  return types;
}

/** Each entity operation needs its own entity scope (like the REST route), then the definition's. */
function requireScope(entity: LoadedEntity, action: 'read' | 'write' | 'delete', permission: 'read' | 'create' | 'update' | 'delete', auth: AuthContext | undefined): void {
  if (!(action === 'read' && entity.access.public)) {
    if (!auth) throw new UnauthorizedError();
    const scope = `${entity.slug}:${action}`;
    if (!hasScope(auth.scopes, scope)) throw new InsufficientPermissionsError(scope);
  }
  requirePermission(entity, permission, auth);
}

/** The request as the service sees it, with these query parameters. */
const UserType = new GraphQLObjectType({
  name: 'User',
  description: 'A user of the caller’s tenant (id, name, e-mail only).',
  fields: { id: { type: new GraphQLNonNull(GraphQLID) }, name: { type: GraphQLString }, email: { type: GraphQLString } },
});

const PageInfoType = new GraphQLObjectType({
  name: 'PageInfo',
  fields: { hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean) }, hasPreviousPage: { type: new GraphQLNonNull(GraphQLBoolean) } },
});

const AggregateIntervalType = new GraphQLEnumType({
  name: 'AggregateInterval',
  description: 'A time bucket of `dateField`, in UTC: the day, the ISO week (its Monday) or the month (its first day)',
  values: { day: { value: 'day' }, week: { value: 'week' }, month: { value: 'month' } },
});

interface AggregateArgs {
  sum?: string[] | null;
  avg?: string[] | null;
  min?: string[] | null;
  max?: string[] | null;
  groupBy?: string[] | null;
  interval?: string | null;
  dateField?: string | null;
  startDate?: string | null;
  endDate?: string | null;
  filter?: Record<string, unknown> | null;
}

/** An object type of these fields, or none when there is no field (GraphQL refuses an empty object). */
function objectOf(name: string, fields: GraphQLFieldConfigMap<Source, GraphQLContext>): GraphQLObjectType | undefined {
  return Object.keys(fields).length ? new GraphQLObjectType({ name, fields }) : undefined;
}

function buildSchema(): GraphQLSchema {
  const entities = allEntities();
  const objectTypes = new Map<string, GraphQLObjectType>();
  // Every type name the schema gives otherwise: an enum's name never takes one of them.
  const taken = new Set<string>(['User', 'PageInfo', 'Query', 'Mutation', 'AggregateInterval']);
  for (const entity of entities) {
    const { type } = namesOf(entity);
    for (const name of [type, `${type}Edge`, `${type}Connection`, `${type}Filter`, `Create${type}Input`, `Update${type}Input`]) taken.add(name);
    for (const name of ['', 'Group', 'Key', 'Numbers', 'Values']) taken.add(`${type}Aggregate${name}`);
  }
  const typesOf = new Map(entities.map((e) => [e.slug, fieldTypes(e, taken)]));

  const objectType = (entity: LoadedEntity): GraphQLObjectType => {
    let type = objectTypes.get(entity.slug);
    if (type) return type;
    const belongsTo = Object.entries(entity.relations).filter(([, r]) => r.type === 'belongsTo');
    const foreignKeys = new Set(belongsTo.map(([, r]) => r.foreignKey));
    type = new GraphQLObjectType({
      name: namesOf(entity).type,
      fields: () => {
        const fields: GraphQLFieldConfigMap<Source, GraphQLContext> = { id: { type: new GraphQLNonNull(GraphQLID) } };
        const types = typesOf.get(entity.slug)!;
        for (const [name, field] of Object.entries(entity.fields)) {
          const nonNull = field.required === true || field.default !== undefined;
          // A belongsTo's foreign key (customerId) is the stored id, beside the relation object.
          const base = foreignKeys.has(name) || field.references ? GraphQLID : types.get(name)!;
          fields[name] = {
            type: nonNull ? new GraphQLNonNull(base) : base,
            resolve: (source) => source[name] ?? field.default ?? null,
          };
        }
        for (const [relationName, relation] of belongsTo) {
          const target = relation.entity === 'users' ? undefined : findEntity(relation.entity);
          if (relation.entity !== 'users' && !target) continue;
          fields[relationName] = {
            type: target ? objectType(target) : UserType,
            resolve: (source, _args, context) => {
              const id = source[relation.foreignKey];
              if (typeof id !== 'string' || !id) return null;
              if (target) requireScope(target, 'read', 'read', context.auth);
              return context.loader.load(relation.entity, id);
            },
          };
        }
        fields.createdAt = { type: new GraphQLNonNull(GraphQLString) };
        fields.updatedAt = { type: new GraphQLNonNull(GraphQLString) };
        if (entity.softDelete) fields.deletedAt = { type: GraphQLString };
        return fields;
      },
    });
    objectTypes.set(entity.slug, type);
    return type;
  };

  /**
   * `<many>Aggregate`: the groups GET /api/v1/{entity}/aggregate answers, typed per entity (the
   * key holds the groupable fields and the date fields a bucket may name; sum and avg the number
   * fields; min and max the number and date fields).
   */
  const aggregateField = (entity: LoadedEntity, filter: GraphQLInputObjectType): GraphQLFieldConfig<unknown, GraphQLContext, AggregateArgs> => {
    const { type } = namesOf(entity);
    const types = typesOf.get(entity.slug)!;
    const usable = aggregatableFields(entity);
    const keyType = (name: string) => (entity.fields[name]?.references || entity.fields[name]?.type === 'uuid' ? GraphQLID : (types.get(name) ?? GraphQLString));
    const key = new GraphQLObjectType({
      name: `${type}AggregateKey`,
      description: 'The group’s values: its groupBy fields and, with an interval, its bucket (YYYY-MM-DD) under the name of dateField; null for records without a value',
      fields: Object.fromEntries([...usable.group.map((n) => [n, { type: keyType(n) }]), ...usable.date.map((n) => [n, { type: GraphQLString }])]),
    });
    const numbers = objectOf(`${type}AggregateNumbers`, Object.fromEntries(usable.number.map((n) => [n, { type: GraphQLFloat }])));
    const values = objectOf(`${type}AggregateValues`, Object.fromEntries([...usable.number.map((n) => [n, { type: GraphQLFloat }]), ...usable.date.map((n) => [n, { type: GraphQLString }])]));
    const groupFields: GraphQLFieldConfigMap<Source, GraphQLContext> = {
      key: { type: new GraphQLNonNull(key) },
      count: { type: new GraphQLNonNull(GraphQLInt) },
    };
    if (numbers) Object.assign(groupFields, { sum: { type: numbers }, avg: { type: numbers } });
    if (values) Object.assign(groupFields, { min: { type: values }, max: { type: values } });
    const group = new GraphQLObjectType({ name: `${type}AggregateGroup`, fields: groupFields });
    const result = new GraphQLObjectType({
      name: `${type}Aggregate`,
      fields: {
        groups: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(group))), description: 'Sorted by key ascending, null first' },
        source: { type: new GraphQLNonNull(GraphQLString), description: 'How the answer was read: counters, index or scan' },
      },
    });
    const fieldList = (description: string) => ({ type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description });
    return {
      type: new GraphQLNonNull(result),
      description: `Count, sum, average, min and max of the ${entity.slug} the caller could list, by group (GET /api/v1/${entity.slug}/aggregate)`,
      args: {
        sum: fieldList('Number fields to sum'),
        avg: fieldList('Number fields to average'),
        min: fieldList('Number, date or date-time fields'),
        max: fieldList('Number, date or date-time fields'),
        groupBy: fieldList('Up to two fields: enum, boolean, uuid, reference, short string'),
        interval: { type: AggregateIntervalType },
        dateField: { type: GraphQLString, description: 'The date field interval buckets and startDate/endDate bound (createdAt by default)' },
        startDate: { type: GraphQLString },
        endDate: { type: GraphQLString },
        filter: { type: filter },
      },
      resolve: async (_root, args, context) => {
        requireScope(entity, 'read', 'read', context.auth);
        const { search, ...equal } = args.filter ?? {};
        const present = <T>(value: T | null | undefined): T | undefined => value ?? undefined;
        const aggregateQuery = aggregateQueryOf(entity, {
          count: true,
          sum: present(args.sum),
          avg: present(args.avg),
          min: present(args.min),
          max: present(args.max),
          groupBy: present(args.groupBy),
          interval: present(args.interval),
          dateField: present(args.dateField),
          startDate: present(args.startDate),
          endDate: present(args.endDate),
          filter: equal,
          search: typeof search === 'string' ? search : undefined,
        });
        const { data, meta } = await aggregateRecords(entity, context.auth, aggregateQuery);
        return { groups: data, source: meta.source };
      },
    };
  };

  const query: GraphQLFieldConfigMap<unknown, GraphQLContext> = {};
  const mutation: GraphQLFieldConfigMap<unknown, GraphQLContext> = {};

  for (const entity of entities) {
    const names = namesOf(entity);
    const type = objectType(entity);
    const edge = new GraphQLObjectType({ name: `${names.type}Edge`, fields: { node: { type: new GraphQLNonNull(type) } } });
    const connection = new GraphQLObjectType({
      name: `${names.type}Connection`,
      fields: {
        edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edge))) },
        pageInfo: { type: new GraphQLNonNull(PageInfoType) },
        totalCount: { type: new GraphQLNonNull(GraphQLInt) },
      },
    });
    const filterFields: GraphQLInputFieldConfigMap = {};
    const types = typesOf.get(entity.slug)!;
    for (const name of Object.keys(entity.fields)) filterFields[name] = { type: types.get(name)! };
    filterFields.search = { type: GraphQLString, description: 'Words that must all appear in the searchable fields' };
    const filter = new GraphQLInputObjectType({ name: `${names.type}Filter`, fields: filterFields });

    if (entity.operations.read) {
      query[names.one] = {
        type,
        args: { id: { type: new GraphQLNonNull(GraphQLID) } },
        resolve: async (_root, args: { id: string }, context) => {
          requireScope(entity, 'read', 'read', context.auth);
          try {
            return (await readRecord(entity, args.id, context.auth)).data;
          } catch (error) {
            if (error instanceof NotFoundError) return null;
            throw error;
          }
        },
      } satisfies GraphQLFieldConfig<unknown, GraphQLContext, { id: string }>;
    }
    if (entity.operations.list) {
      query[names.many] = {
        type: new GraphQLNonNull(connection),
        args: { page: { type: GraphQLInt }, limit: { type: GraphQLInt }, filter: { type: filter } },
        resolve: async (_root, args: { page?: number | null; limit?: number | null; filter?: Record<string, unknown> | null }, context) => {
          requireScope(entity, 'read', 'read', context.auth);
          const { search, ...equal } = args.filter ?? {};
          const listQuery = listQueryOf(entity, {
            page: args.page ?? undefined,
            limit: args.limit ?? undefined,
            filter: equal,
            search: typeof search === 'string' ? search : undefined,
          });
          const { data, pagination } = await listRecords(entity, context.auth, listQuery);
          const records = data as Source[];
          return {
            edges: records.map((node) => ({ node })),
            pageInfo: { hasNextPage: pagination.hasNext, hasPreviousPage: pagination.hasPrev },
            totalCount: pagination.total,
          };
        },
      };
    }

    if (entity.operations.list) query[names.aggregate] = aggregateField(entity, filter);

    const inputFields = (mode: 'create' | 'update'): GraphQLInputFieldConfigMap => {
      const fields: GraphQLInputFieldConfigMap = {};
      for (const [name, field] of writableFields(entity)) {
        const base = field.references ? GraphQLID : scalarOf(field);
        fields[name] = { type: mode === 'create' && field.required ? new GraphQLNonNull(base) : base };
      }
      for (const key of linkKeys(entity)) fields[key] = { type: new GraphQLList(new GraphQLNonNull(GraphQLID)) };
      return fields;
    };
    if (entity.operations.create) {
      const input = new GraphQLInputObjectType({ name: `Create${names.type}Input`, fields: inputFields('create') });
      mutation[names.create] = {
        type: new GraphQLNonNull(type),
        args: { input: { type: new GraphQLNonNull(input) } },
        resolve: (_root, args: { input: Source }, context) => {
          requireScope(entity, 'write', 'create', context.auth);
          return createRecord(entity, context.auth, { ...args.input });
        },
      };
    }
    if (entity.operations.update) {
      const input = new GraphQLInputObjectType({ name: `Update${names.type}Input`, fields: inputFields('update') });
      mutation[names.update] = {
        type: new GraphQLNonNull(type),
        args: { id: { type: new GraphQLNonNull(GraphQLID) }, input: { type: new GraphQLNonNull(input) }, ifMatch: { type: GraphQLString } },
        resolve: (_root, args: { id: string; input: Source; ifMatch?: string | null }, context) => {
          requireScope(entity, 'write', 'update', context.auth);
          return updateRecord(entity, args.id, context.auth, { ...args.input }, { preconditions: preconditionsOfValue(args.ifMatch) });
        },
      };
    }
    if (entity.operations.delete) {
      mutation[names.remove] = {
        type: new GraphQLNonNull(GraphQLBoolean),
        args: { id: { type: new GraphQLNonNull(GraphQLID) }, ifMatch: { type: GraphQLString } },
        resolve: async (_root, args: { id: string; ifMatch?: string | null }, context) => {
          requireScope(entity, 'delete', 'delete', context.auth);
          await deleteRecord(entity, args.id, context.auth, preconditionsOfValue(args.ifMatch));
          return true;
        },
      };
    }
  }

  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: query }),
    ...(Object.keys(mutation).length ? { mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutation }) } : {}),
  });
}

let schema: GraphQLSchema | undefined;

/** The schema of the loaded registry (built on first use). */
export function graphqlSchema(): GraphQLSchema {
  schema ??= buildSchema();
  return schema;
}
