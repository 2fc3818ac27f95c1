/**
 * Custom overrides: a plugin replaces one operation of one entity with its own handler. They are
 * resolved after the core paths (static routes win in shared/routes.ts) and before the registry,
 * as SPEC.md orders them; an override may also serve a slug the registry does not have.
 * The route's scope (`<entity>:read|write|delete`) is still checked by the middleware stack;
 * anything else (definition permissions, row-level security) is the override's own business.
 *
 *   registerOverride({ entity: 'tasks', operation: 'list', handler: async (req, ctx) => ({ data: [] }) });
 */
import type { LoadedEntity } from '../../registry/index.js';
import type { ApiRequest, Reply } from '../types.js';

export const OVERRIDABLE = ['list', 'create', 'read', 'update', 'delete', 'options', 'listChild', 'createChild'] as const;
export type OverridableOperation = (typeof OVERRIDABLE)[number];

export interface OverrideContext {
  /** The registered definition, when the slug is also in the registry. */
  entity?: LoadedEntity;
}

export interface EntityOverride {
  entity: string;
  operation: OverridableOperation;
  handler: (req: ApiRequest, context: OverrideContext) => Promise<Reply>;
  /** Reads (list, read, options, listChild) without credentials. */
  public?: boolean;
}

const overrides = new Map<string, EntityOverride>();

function keyOf(entity: string, operation: OverridableOperation): string {
  return `${entity} ${operation}`;
}

/** Registers (or replaces) the override of one operation of one entity; returns a function removing it. */
export function registerOverride(override: EntityOverride): () => void {
  if (!(OVERRIDABLE as readonly string[]).includes(override.operation)) {
    throw new Error(`Unknown operation '${override.operation}' (one of ${OVERRIDABLE.join(', ')})`);
  }
  if (!/^[a-z][a-z0-9-]*$/.test(override.entity)) throw new Error(`Override entity '${override.entity}' is not a slug`);
  const key = keyOf(override.entity, override.operation);
  overrides.set(key, override);
  return () => {
    if (overrides.get(key) === override) overrides.delete(key);
  };
}

export function findOverride(entity: string, operation: OverridableOperation): EntityOverride | undefined {
  return overrides.get(keyOf(entity, operation));
}

export function hasOverrides(entity: string): boolean {
  return OVERRIDABLE.some((op) => overrides.has(keyOf(entity, op)));
}
