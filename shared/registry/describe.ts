/**
 * The entity description of SPEC.md, answered by OPTIONS /api/v1/{entity}: entity, methods,
 * schema (field descriptors), relations, the caller's permissions and the rate limit that
 * applies to the caller.
 */
import { hasScope } from '../scopes.js';
import { config, sessionLimit } from '../config.js';
import type { AuthContext } from '../caller.js';
import { linkKeys } from './schemas.js';
import { PROTECTED_FIELDS, type FieldDefinition, type LoadedEntity, type PermissionName } from './types.js';

export interface FieldDescriptor {
  type: string;
  required: boolean;
  generated: boolean;
  primaryKey?: boolean;
  maxLength?: number;
  values?: string[];
  default?: unknown;
  validation?: { min?: number; max?: number; pattern?: string };
  items?: { type: string };
  references?: string;
  /** No two live records hold the same value (409 UNIQUE_VIOLATION). */
  unique?: boolean;
}

export interface EntityDescription {
  entity: string;
  slug: string;
  methods: string[];
  schema: Record<string, FieldDescriptor>;
  relations: Record<string, { type: string; entity: string; foreignKey: string }>;
  permissions: { read: boolean; write: boolean; delete: boolean };
  rateLimit: { limit: number; window: string };
}

/** Whether the caller holds every scope the definition asks for this operation. */
export function allowed(entity: LoadedEntity, permission: PermissionName, auth: AuthContext | undefined): boolean {
  if (!auth) return false;
  return entity.permissions[permission].every((scope) => hasScope(auth.scopes, scope));
}

/** The HTTP methods the entity answers (on its collection or its records). */
export function methodsOf(entity: LoadedEntity): string[] {
  const ops = entity.operations;
  return [
    ...(ops.list || ops.read ? ['GET'] : []),
    ...(ops.create ? ['POST'] : []),
    ...(ops.update ? ['PATCH'] : []),
    ...(ops.delete ? ['DELETE'] : []),
    'OPTIONS',
  ];
}

function descriptor(field: FieldDefinition): FieldDescriptor {
  const d: FieldDescriptor = { type: field.type, required: field.required === true, generated: Boolean(field.generated) };
  if (field.maxLength !== undefined) d.maxLength = field.maxLength;
  if (field.values) d.values = [...field.values];
  if (field.default !== undefined) d.default = field.default;
  if (field.validation) d.validation = { ...field.validation };
  if (field.references) d.references = field.references;
  if (field.unique) d.unique = true;
  return d;
}

const WINDOW_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** '1h' → 3600 (definitions are validated to `^\d+[smhd]$` at load). */
export function windowSeconds(text: string): number {
  return Number(text.slice(0, -1)) * WINDOW_UNITS[text.slice(-1)];
}

function windowText(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** The entity's own limit, else the caller's general one (key, session user or anonymous IP). */
export function rateLimitFor(entity: LoadedEntity, auth: AuthContext | undefined): { limit: number; window: string } {
  if (entity.rateLimit) return { ...entity.rateLimit };
  const { rateLimits } = config();
  const limit = !auth ? rateLimits.anonymousPerHour : auth.type !== 'session' ? rateLimits.apiKeyPerHour : sessionLimit(rateLimits, auth.user.role);
  return { limit, window: windowText(rateLimits.windowSeconds) };
}

export function describeEntity(entity: LoadedEntity, auth: AuthContext | undefined): EntityDescription {
  const schema: Record<string, FieldDescriptor> = {
    id: { type: entity.idFormat.type === 'uuid' ? 'uuid' : 'string', required: false, generated: true, primaryKey: true },
  };
  for (const [name, field] of Object.entries(entity.fields)) {
    if ((PROTECTED_FIELDS as readonly string[]).includes(name)) continue;
    schema[name] = descriptor(field);
  }
  for (const key of linkKeys(entity)) schema[key] = { type: 'array', items: { type: 'string' }, required: false, generated: false };
  schema.createdAt = { type: 'datetime', required: false, generated: true };
  schema.updatedAt = { type: 'datetime', required: false, generated: true };
  if (entity.softDelete) schema.deletedAt = { type: 'datetime', required: false, generated: true };

  const ops = entity.operations;
  const read = (ops.list || ops.read) && (entity.access.public || allowed(entity, 'read', auth));
  const write = (ops.create && allowed(entity, 'create', auth)) || (ops.update && allowed(entity, 'update', auth));
  const del = ops.delete && allowed(entity, 'delete', auth);
  return {
    entity: entity.name,
    slug: entity.slug,
    methods: methodsOf(entity),
    schema,
    relations: Object.fromEntries(Object.entries(entity.relations).map(([name, r]) => [name, { type: r.type, entity: r.entity, foreignKey: r.foreignKey }])),
    permissions: { read, write, delete: del },
    rateLimit: rateLimitFor(entity, auth),
  };
}
