/**
 * The registry area's front door: the loaded entity definitions (load.ts), their types, the
 * schemas and checks a record is written with, and the entity description of OPTIONS. Everything
 * else under shared/registry/ is the area's own. The ajv compiler (schema-compiler.ts) is a
 * narrow entry of its own: only the generators and the plugins' compiler load it.
 */
export {
  allEntities,
  ENTITIES_DIR_ENV,
  ENTITY_FILES_ENV,
  entitiesDirectory,
  entityFileNames,
  findEntity,
  isRegistryLoaded,
  loadDefinitions,
  loadRegistry,
  useDefinitions,
  type LoadOptions,
} from './load.js';
export { allowed, describeEntity, methodsOf, rateLimitFor, windowSeconds, type EntityDescription, type FieldDescriptor } from './describe.js';
export {
  bodySchema,
  checkCreate,
  checkUpdate,
  isCalendarDate,
  linkKeys,
  mergedProblems,
  METADATA_MAX_CHARS,
  unstorable,
  unvalidatedReferences,
  writableFields,
  type Schema,
  type SchemaError,
  type Validator,
  type WriteInput,
} from './schemas.js';
export {
  autoShards,
  summedFields,
  dayCountedFields,
  MAX_WRITE_SHARDS,
  writeShardsOf,
  historyDaysOf,
  DEFAULT_HISTORY_DAYS,
  PROTECTED_FIELDS,
  type EntityDefinition,
  type FieldDefinition,
  type FieldType,
  type LoadedEntity,
  type OperationName,
  type PermissionName,
  type RelationDefinition,
} from './types.js';
export { RegistryError, RESERVED_SLUGS, validateDefinition, validateRegistry } from './validate.js';
