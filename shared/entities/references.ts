/**
 * Reference checks on write: a field with `references` must name a user of the caller's tenant
 * ('users') or a record of that entity the caller can see; a manyToMany list (tagIds) must name
 * records of the target the caller can see. All checked with ONE BatchGetItem (across the
 * identity and records tables); every failing field is reported at once (422).
 */
import { batchGet, foundAt, fromItem, recordKeys, userKey, type BatchRequest, type Key } from '../data/index.js';
import type { LiveLayouts } from '../migrations/index.js';
import { ValidationError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { findEntity, type LoadedEntity } from '../registry/index.js';
import { canSee } from './access.js';

export interface Check {
  field: string;
  target: string;
  ids: string[];
}

/** The reference checks a set of values needs (only fields present in `data`, minus `skip`). */
export function referenceChecks(entity: LoadedEntity, data: Record<string, unknown>, skip: readonly string[] = []): Check[] {
  const checks: Check[] = [];
  for (const [name, field] of Object.entries(entity.fields)) {
    if (!field.references || skip.includes(name)) continue;
    const value = data[name];
    if (typeof value === 'string') checks.push({ field: name, target: field.references, ids: [value] });
  }
  for (const relation of Object.values(entity.relations)) {
    if (relation.type !== 'manyToMany' || skip.includes(relation.foreignKey)) continue;
    const value = data[relation.foreignKey];
    if (Array.isArray(value) && value.length) checks.push({ field: relation.foreignKey, target: relation.entity, ids: value as string[] });
  }
  return checks;
}

/**
 * Where record `id` of `target` is read as a caller of `tenantId` (none when anonymous) may find
 * it: a user in the identity table, an entity's record at its keys (recordKeys: more than one
 * while its write shards change); undefined for no such entity. References, included relations
 * and GraphQL's related records all read through it.
 */
export function relatedKeys(layouts: LiveLayouts, target: string, id: string, tenantId: string | undefined): { table: 'records' | 'identity'; keys: Key[] } | undefined {
  if (target === 'users') return { table: 'identity', keys: [userKey(id)] };
  const entity = findEntity(target);
  return entity ? { table: 'records', keys: recordKeys(layouts.of(entity), id, tenantId) } : undefined;
}

/** The reads every check needs (records of the caller's tenant), for one BatchGetItem. */
export function referenceReads(layouts: LiveLayouts, checks: readonly Check[], auth: AuthContext): BatchRequest[] {
  const requests: BatchRequest[] = [];
  for (const check of checks) {
    for (const id of check.ids) {
      const k = relatedKeys(layouts, check.target, id, auth.tenantId);
      if (k) requests.push({ table: k.table, keys: k.keys });
    }
  }
  return requests;
}

/** What is wrong with one check, given what the batch read found; undefined when it holds. */
export function referenceProblem(layouts: LiveLayouts, check: Check, data: Record<string, unknown>, found: Map<string, Record<string, unknown>>, auth: AuthContext): string | undefined {
  const missing = check.ids.filter((id) => {
    const k = relatedKeys(layouts, check.target, id, auth.tenantId);
    const item = k && foundAt(found, k.table, k.keys, check.target);
    if (!item) return true;
    if (check.target === 'users') return item.tenantId !== auth.tenantId;
    const target = findEntity(check.target)!;
    return !canSee(target, fromItem(layouts.of(target), item), auth);
  });
  if (missing.length === 0) return undefined;
  const unknown = `(unknown: ${missing.join(', ')})`;
  if (check.target === 'users') return `must be the id of a user of your tenant ${unknown}`;
  if (check.ids.length === 1 && !Array.isArray(data[check.field])) return `must be the id of an existing ${check.target} record you can see ${unknown}`;
  return `must be ids of ${check.target} records you can see ${unknown}`;
}

export async function checkReferences(layouts: LiveLayouts, entity: LoadedEntity, data: Record<string, unknown>, auth: AuthContext, skip: readonly string[] = []): Promise<void> {
  const checks = referenceChecks(entity, data, skip);
  if (checks.length === 0) return;
  const found = await batchGet(referenceReads(layouts, checks, auth));
  const details: Record<string, string> = {};
  for (const check of checks) {
    const problem = referenceProblem(layouts, check, data, found, auth);
    if (problem) details[check.field] = problem;
  }
  if (Object.keys(details).length) throw new ValidationError(details);
}
