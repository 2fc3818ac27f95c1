/**
 * The entity definition: plain data, one file per entity under shared/registry/entities/
 * (`export default {...} satisfies EntityDefinition`). Checked by validateDefinition when the
 * registry loads; nothing else in the code names an entity.
 */
import type { IdFormat } from '../record-ids.js';

export const FIELD_TYPES = ['string', 'number', 'enum', 'datetime', 'date', 'boolean', 'uuid'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const RELATION_TYPES = ['belongsTo', 'hasMany', 'manyToMany'] as const;
export type RelationType = (typeof RELATION_TYPES)[number];

export const OPERATIONS = ['list', 'create', 'read', 'update', 'delete'] as const;
export type OperationName = (typeof OPERATIONS)[number];

export type PermissionName = 'create' | 'read' | 'update' | 'delete';

/** Relation targets that are not registry entities (they live in the identity table). */
export const BUILT_IN_TARGETS = ['users'] as const;

/** Fields that never leave the service, whatever a definition says. */
export const PROTECTED_FIELDS = ['password', 'passwordHash', 'apiKeyHash', 'secretKey'] as const;

/**
 * Attributes every record has (or the service manages): a definition may not declare them as
 * fields, and a request body that sends them has them ignored.
 */
export const SYSTEM_ATTRIBUTES = ['id', 'createdAt', 'updatedAt', 'deletedAt', 'ownerId', 'owner', 'tenantId'] as const;

/** Body keys that are not entity fields but are accepted on create/update. */
export const RECORD_EXTRAS = ['metadata', 'metas'] as const;

export interface FieldValidation {
  /** number: minimum value; string: minimum length. */
  min?: number;
  /** number: maximum value; string: maximum length. */
  max?: number;
  /** string: a regular expression the whole value must match (anchor it yourself). */
  pattern?: string;
}

export interface FieldDefinition {
  type: FieldType;
  required?: boolean;
  /** string: maximum length. */
  maxLength?: number;
  /** enum: the allowed values. */
  values?: readonly string[];
  /** Written on create when the body leaves the field out. */
  default?: string | number | boolean;
  validation?: FieldValidation;
  /** Taking part in `search` (text fields). */
  searchable?: boolean;
  /** Equality on this field is served by a listing partition of its own (see shared/data/listings.ts). */
  indexed?: boolean;
  /** May be used in `sort` (every non-protected field is sortable unless this is false). */
  sortable?: boolean;
  /**
   * Set by the service, never by the body: `'caller'` writes the caller's user id on create
   * (comments.authorId). A generated field in a body is ignored.
   */
  generated?: boolean | 'caller';
  /**
   * No two live records of the entity in a tenant (in every tenant, for a public entity) hold the
   * same value: a create or update that would is 409 UNIQUE_VIOLATION (shared/data/unique-keys.ts).
   * Null and absent values are not compared.
   */
  unique?: boolean;
  /** The value must be the id of a record of this entity visible to the caller, or of a user of the caller's tenant ('users'). */
  references?: string;
}

export interface RelationDefinition {
  type: RelationType;
  /** Target entity slug (or 'users'). */
  entity: string;
  /**
   * belongsTo: the field of this entity holding the target's id. hasMany: the field of the
   * target entity holding this record's id (it must be indexed). manyToMany: the array of
   * target ids stored on this record (accepted in bodies as string[]).
   */
  foreignKey: string;
}

export interface EntityDefinition {
  /** Entity name (singular): OPTIONS `entity`, event types `<name>.created`. */
  name: string;
  /** URL path segment: /api/v1/<slug>. */
  slug: string;
  /** Logical table: the prefix of every key of this entity in the records table. */
  tableName: string;
  idFormat: IdFormat;
  fields: Record<string, FieldDefinition>;
  permissions?: Partial<Record<PermissionName, readonly string[]>>;
  access: { public: boolean; shared: boolean };
  operations?: Partial<Record<OperationName, boolean>>;
  softDelete?: boolean;
  relations?: Record<string, RelationDefinition>;
  /** Shown by OPTIONS; when absent the caller's general limit is shown. */
  rateLimit?: { limit: number; window: string };
  /**
   * Partition keys each listing partition's writes (copies, counters) and the change events spread
   * over, a record always on the same one (chosen by its id). A number from 1 to MAX_WRITE_SHARDS
   * pins it; `'auto'` (the default) lets the write-shards controller choose it, whatever the
   * access mode: it starts on 1 and is doubled while its busiest listing key's write rate stays
   * high (a public entity's global listing; a private or shared one's busiest tenant listing),
   * halved after a long quiet spell (shared/migrations/shard-control.ts; docs/capacity.md). A page
   * 1 reads every shard (N Queries).
   */
  writeShards?: number | 'auto';
  /** Revisions kept per record write: `{ days }` (default 30), or false for none (docs/history.md). */
  history?: false | { days: number };
  /**
   * Aggregates kept by every write beside the counts: `sum` names number fields whose sum (and
   * number of values, for the average) each listing's counters keep, so an aggregate's `sum` and
   * `avg` of them are read from counters; `days` names date fields (and createdAt, updatedAt)
   * whose records are counted per UTC day, so a count per day, week or month of them is read from
   * counters too (default: createdAt; `[]` counts none) (docs/aggregates.md).
   */
  aggregates?: { sum?: readonly string[]; days?: readonly string[] };
}

/** The number fields whose sums the entity's counters keep (its `aggregates.sum`). */
export function summedFields(entity: Pick<EntityDefinition, 'aggregates'>): readonly string[] {
  return entity.aggregates?.sum ?? [];
}

/** The date fields counted per day when an entity does not say (`aggregates.days`). */
export const DEFAULT_DAY_FIELDS: readonly string[] = ['createdAt'];

/** Date fields whose records the entity's counters count per UTC day (its `aggregates.days`; default createdAt). */
export function dayCountedFields(entity: Pick<EntityDefinition, 'aggregates'>): readonly string[] {
  return entity.aggregates?.days ?? DEFAULT_DAY_FIELDS;
}

/** Largest write-shard count: a page 1 reads that many partition keys. */
export const MAX_WRITE_SHARDS = 32;

/** Whether the controller chooses the entity's write shards: `'auto'` (or none declared), whatever its access mode. */
export function autoShards(entity: Pick<EntityDefinition, 'writeShards'>): boolean {
  return entity.writeShards === undefined || entity.writeShards === 'auto';
}

/**
 * The entity's write shards: the number it pins; for an auto entity the count recorded in the
 * database (`current`: its migration target's), 1 for one seen for the first time.
 */
export function writeShardsOf(entity: Pick<EntityDefinition, 'writeShards' | 'access'>, current?: number): number {
  if (typeof entity.writeShards === 'number') return entity.writeShards;
  return autoShards(entity) ? (current ?? 1) : 1;
}

/** Days a revision is kept; 30 by default; 0 when the entity keeps no history. */
export const DEFAULT_HISTORY_DAYS = 30;
export function historyDaysOf(entity: Pick<EntityDefinition, 'history'>): number {
  if (entity.history === false) return 0;
  return entity.history?.days ?? DEFAULT_HISTORY_DAYS;
}

/** A definition after loading: defaults filled in, frozen. */
export interface LoadedEntity extends EntityDefinition {
  permissions: Record<PermissionName, readonly string[]>;
  operations: Record<OperationName, boolean>;
  softDelete: boolean;
  relations: Record<string, RelationDefinition>;
  /** The file it came from, for messages. */
  source: string;
}
