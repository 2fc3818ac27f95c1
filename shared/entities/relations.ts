/**
 * Relations on READ (and LIST): `include=assignee,comments,tags` embeds related records under the
 * relation's name; `includeFields[<relation>]=a,b` keeps only those fields (id always).
 *
 * Reads are batched, never one request per related record:
 * - belongsTo and manyToMany targets of every record: ONE BatchGetItem for all relations together
 *   (identity table for users, records table for entities; 100 keys per call);
 * - hasMany: ONE Query per parent record on the child's indexed partition
 *   (`…#<foreignKey>=<parent id>`, the caller's view), at most 100 children each.
 * Related records the caller may not see are left out (belongsTo gives null). A user embeds as
 * {id, name, email} and only for callers of the user's tenant.
 */
import { userKey } from '../data/identity.js';
import { batchGet, batchKey, queryPartition, type BatchRequest } from '../data/records.js';
import { fromItem, listingPartitionFor, recordKey, type Key, type StoredRecord } from '../data/records-keys.js';
import { BadRequestError } from '../errors.js';
import type { AuthContext } from '../http/types.js';
import { findEntity } from '../registry/index.js';
import type { LoadedEntity, RelationDefinition } from '../registry/types.js';
import { canSee, requirePermission, viewerOf } from './access.js';
import { pick, present, type PublicRecord } from './present.js';

export const MAX_INCLUDED_CHILDREN = 100;

export interface Include {
  name: string;
  relation: RelationDefinition;
  fields?: string[];
}

function list(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(',').map((s) => s.trim()).filter(Boolean))];
}

/** `include` and `includeFields[<relation>]` → the relations to embed; 400 for an unknown relation. */
export function parseIncludes(entity: LoadedEntity, query: Record<string, string>): Include[] {
  const names = list(query.include);
  const known = Object.keys(entity.relations);
  const unknown = names.filter((n) => !entity.relations[n]);
  if (unknown.length) {
    throw new BadRequestError(`Unknown relation(s) of ${entity.slug}: ${unknown.join(', ')}`, {
      include: `unknown relation(s): ${unknown.join(', ')}; known: ${known.join(', ') || 'none'}`,
    });
  }
  return names.map((name) => {
    const fields = query[`includeFields[${name}]`];
    return { name, relation: entity.relations[name], ...(fields !== undefined ? { fields: list(fields) } : {}) };
  });
}

function targetKey(target: string, id: string): { table: 'records' | 'identity'; key: Key } {
  if (target === 'users') return { table: 'identity', key: userKey(id) };
  return { table: 'records', key: recordKey(findEntity(target)!, id) };
}

function idsOf(record: StoredRecord, relation: RelationDefinition): string[] {
  const value = record.data[relation.foreignKey];
  if (relation.type === 'manyToMany') return Array.isArray(value) ? (value as string[]) : [];
  return typeof value === 'string' && value ? [value] : [];
}

/** Adds the included relations to each presented record (same order as `records`). */
export async function attachRelations(
  entity: LoadedEntity,
  records: StoredRecord[],
  presented: PublicRecord[],
  includes: Include[],
  auth: AuthContext | undefined,
): Promise<void> {
  if (includes.length === 0 || records.length === 0) return;
  for (const inc of includes) {
    if (inc.relation.entity !== 'users') requirePermission(findEntity(inc.relation.entity)!, 'read', auth);
  }
  const lookups = includes.filter((i) => i.relation.type !== 'hasMany');
  const requests: BatchRequest[] = [];
  for (const inc of lookups) {
    for (const record of records) {
      for (const id of idsOf(record, inc.relation)) {
        const { table, key } = targetKey(inc.relation.entity, id);
        requests.push({ table, keys: [key] });
      }
    }
  }
  const children = includes.filter((i) => i.relation.type === 'hasMany');
  const [found, childLists] = await Promise.all([
    requests.length ? batchGet(requests) : Promise.resolve(new Map<string, Record<string, unknown>>()),
    Promise.all(children.map((inc) => Promise.all(records.map((r) => childrenOf(inc.relation, r, auth))))),
  ]);

  const resolve = (target: string, id: string): Record<string, unknown> | undefined => {
    const { table, key } = targetKey(target, id);
    const item = found.get(batchKey(table, key));
    if (!item) return undefined;
    if (target === 'users') {
      if (!auth || item.tenantId !== auth.tenantId) return undefined;
      return { id: item.id, name: item.name, email: item.email };
    }
    const targetEntity = findEntity(target)!;
    const stored = fromItem(item);
    return canSee(targetEntity, stored, auth) ? present(targetEntity, stored) : undefined;
  };

  records.forEach((record, i) => {
    const out = presented[i];
    for (const inc of lookups) {
      const related = idsOf(record, inc.relation)
        .map((id) => resolve(inc.relation.entity, id))
        .filter((r): r is Record<string, unknown> => r !== undefined)
        .map((r) => pick(r, inc.fields));
      out[inc.name] = inc.relation.type === 'belongsTo' ? (related[0] ?? null) : related;
    }
    children.forEach((inc, c) => {
      const child = findEntity(inc.relation.entity)!;
      out[inc.name] = childLists[c][i].map((r) => pick(present(child, r), inc.fields));
    });
  });
}

/** The children of one parent the caller may see: one Query on the child's indexed partition. */
async function childrenOf(relation: RelationDefinition, parent: StoredRecord, auth: AuthContext | undefined): Promise<StoredRecord[]> {
  const child = findEntity(relation.entity)!;
  if (!child.access.public && !auth) return [];
  const partition = listingPartitionFor(child, viewerOf(auth), { field: relation.foreignKey, value: parent.id });
  const records = await queryPartition(partition, MAX_INCLUDED_CHILDREN);
  return records.filter((r) => canSee(child, r, auth));
}
