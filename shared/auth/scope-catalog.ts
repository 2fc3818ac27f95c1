/**
 * Which scopes a key may be given, and in which vocabulary:
 *
 * - the `/keys` family: the bare words read, write, delete (that action on everything);
 * - the `/api-keys` family: `<resource>:<action>`, `<resource>:*` and `*` (admins only, checked
 *   by key management), plus the bare words.
 *
 * A resource is a registered entity or one of the system resources the contract names
 * (uploads, webhooks, ai), or a resource a plugin's route scopes name. Anything else is refused
 * (422 VALIDATION_FAILED).
 */
import { logger } from '../logger.js';
import { pluginScopeResources } from '../plugins/declarations.js';
import { loadRegistry } from '../registry/index.js';
import { ACTIONS } from '../scopes.js';

export type ScopeFamily = 'keys' | 'api-keys';

/** Resources that are not entities but take scopes (CONTRACT.md "Scopes of the system endpoints"). */
export const SYSTEM_RESOURCES = ['uploads', 'webhooks', 'ai'] as const;

/** Used only when the registry cannot be loaded (logged): CONTRACT.md's built-in entities. */
const BUILT_IN_ENTITIES = ['tasks', 'products', 'comments', 'tags', 'orders', 'customers'];

let entityOverride: (() => readonly string[]) | undefined;

/** Lets a test supply the entity slugs instead of the registry (undefined: the registry again). */
export function setEntitySource(source: (() => readonly string[]) | undefined): void {
  entityOverride = source;
}

/** Every resource a scope may name: the registry's entity slugs and the system resources. */
export async function knownResources(): Promise<Set<string>> {
  let entities: readonly string[];
  if (entityOverride) entities = entityOverride();
  else {
    try {
      entities = [...(await loadRegistry()).keys()];
    } catch (error) {
      logger.error('entity registry unavailable; validating scopes against the built-in entities', { error: (error as Error).message });
      entities = BUILT_IN_ENTITIES;
    }
  }
  return new Set([...entities, ...SYSTEM_RESOURCES, ...pluginScopeResources()]);
}

const RESOURCE_PATTERN = /^[a-z][a-z0-9-]*$/;
const BARE = new Set<string>(ACTIONS);

/** Why a scope is not acceptable in this family, or undefined when it is. */
export function scopeProblem(scope: unknown, family: ScopeFamily, resources: ReadonlySet<string>): string | undefined {
  if (typeof scope !== 'string' || scope === '') return 'must be a non-empty string';
  if (BARE.has(scope)) return undefined;
  if (family === 'keys') return `unknown scope '${scope}'; use read, write or delete`;
  if (scope === '*') return undefined;
  const [resource, action, extra] = scope.split(':');
  if (extra !== undefined || action === undefined || !RESOURCE_PATTERN.test(resource)) {
    return `unknown scope '${scope}'; use <entity>:<read|write|delete|*>, read, write, delete or *`;
  }
  if (!resources.has(resource)) return `unknown entity '${resource}' in scope '${scope}'`;
  if (action !== '*' && !BARE.has(action)) return `unknown action '${action}' in scope '${scope}'; use read, write, delete or *`;
  return undefined;
}
