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
import {
  batchGet,
  foundAt,
  fromItem,
  listingPartitionFor,
  queryPartition,
  type BatchRequest,
  type StoredRecord,
} from '../data/index.js';
import type { LiveLayouts } from '../migrations/index.js';
import { BadRequestError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { findEntity, type LoadedEntity, type RelationDefinition } from '../registry/index.js';
import { canSee, requirePermission, viewerOf } from './access.js';
import { pick, present, type PublicRecord } from './present.js';
import { relatedKeys } from './references.js';

export const MAX_INCLUDED_CHILDREN = 100;

export interface Include {
  name: string;
  relation: RelationDefinition;
  fields?: string[];
  /** include=a.b: relations of the included records (nested with a dot). */
  nested?: Include[];
}

function list(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(',').map((s) => s.trim()).filter(Boolean))];
}

function relationsOf(slug: string): Record<string, RelationDefinition> {
  return slug === 'users' ? {} : (findEntity(slug)?.relations ?? {});
}

function buildIncludes(owner: string, relations: Record<string, RelationDefinition>, paths: string[], query: Record<string, string>, prefix: string): Include[] {
  const groups = new Map<string, string[]>();
  for (const path of paths) {
    const [head, ...rest] = path.split('.');
    const group = groups.get(head) ?? [];
    if (rest.length) group.push(rest.join('.'));
    groups.set(head, group);
  }
  const unknown = [...groups.keys()].filter((n) => n === '' || !Object.prototype.hasOwnProperty.call(relations, n));
  if (unknown.length) {
    const known = Object.keys(relations);
    const names = unknown.map((n) => `${prefix}${n}`).join(', ');
    throw new BadRequestError(`Unknown relation(s) of ${owner}: ${names}`, {
      include: `unknown relation(s): ${names}; known${prefix ? ` under ${prefix.slice(0, -1)}` : ''}: ${known.join(', ') || 'none'}`,
    });
  }
  return [...groups].map(([name, rest]) => {
    const relation = relations[name];
    const fields = query[`includeFields[${prefix}${name}]`];
    const nested = rest.length ? buildIncludes(relation.entity, relationsOf(relation.entity), rest, query, `${prefix}${name}.`) : undefined;
    return { name, relation, ...(fields !== undefined ? { fields: list(fields) } : {}), ...(nested ? { nested } : {}) };
  });
}

/**
 * `include` (relation names, nested with a dot: assignee.team, comments.author) and
 * `includeFields[<relation path>]` → the relations to embed; 400 for an unknown relation at any
 * level. `extra` adds relation names (the `child` parameter).
 */
export function parseIncludes(entity: LoadedEntity, query: Record<string, string>, extra: string[] = []): Include[] {
  const names = [...new Set([...list(query.include), ...extra])];
  if (names.length === 0) return [];
  return buildIncludes(entity.slug, entity.relations, names, query, '');
}

function idsOf(record: StoredRecord, relation: RelationDefinition): string[] {
  const value = record.data[relation.foreignKey];
  if (relation.type === 'manyToMany') return Array.isArray(value) ? (value as string[]) : [];
  return typeof value === 'string' && value ? [value] : [];
}

/** Adds the included relations to each presented record (same order as `records`), read with the request's layouts. */
export async function attachRelations(
  layouts: LiveLayouts,
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
        const read = relatedKeys(layouts, inc.relation.entity, id, auth?.tenantId);
        if (read) requests.push(read);
      }
    }
  }
  const children = includes.filter((i) => i.relation.type === 'hasMany');
  const [found, childLists] = await Promise.all([
    requests.length ? batchGet(requests) : Promise.resolve(new Map<string, Record<string, unknown>>()),
    Promise.all(children.map((inc) => Promise.all(records.map((r) => childrenOf(layouts, inc.relation, r, auth))))),
  ]);

  const resolve = (target: string, id: string): { stored?: StoredRecord; out: Record<string, unknown> } | undefined => {
    const read = relatedKeys(layouts, target, id, auth?.tenantId);
    const item = read && foundAt(found, read.table, read.keys, target);
    if (!item) return undefined;
    if (target === 'users') {
      if (!auth || item.tenantId !== auth.tenantId) return undefined;
      return { out: { id: item.id, name: item.name, email: item.email } };
    }
    const targetEntity = findEntity(target)!;
    const stored = fromItem(layouts.of(targetEntity), item);
    return canSee(targetEntity, stored, auth) ? { stored, out: present(targetEntity, stored) } : undefined;
  };

  // Included records per relation, for the nested level.
  const nestedOf = new Map<Include, { stored: StoredRecord[]; out: PublicRecord[] }>();
  const collect = (inc: Include, stored: StoredRecord | undefined, out: Record<string, unknown>) => {
    if (!inc.nested || !stored) return;
    const entry = nestedOf.get(inc) ?? { stored: [], out: [] };
    entry.stored.push(stored);
    entry.out.push(out as PublicRecord);
    nestedOf.set(inc, entry);
  };

  records.forEach((record, i) => {
    const out = presented[i];
    for (const inc of lookups) {
      const related = idsOf(record, inc.relation)
        .map((id) => resolve(inc.relation.entity, id))
        .filter((r): r is { stored?: StoredRecord; out: Record<string, unknown> } => r !== undefined)
        .map((r) => {
          const picked = pick(r.out, inc.fields);
          collect(inc, r.stored, picked);
          return picked;
        });
      out[inc.name] = inc.relation.type === 'belongsTo' ? (related[0] ?? null) : related;
    }
    children.forEach((inc, c) => {
      const child = findEntity(inc.relation.entity)!;
      out[inc.name] = childLists[c][i].map((r) => {
        const picked = pick(present(child, r), inc.fields);
        collect(inc, r, picked);
        return picked;
      });
    });
  });

  for (const [inc, entry] of nestedOf) {
    await attachRelations(layouts, findEntity(inc.relation.entity)!, entry.stored, entry.out, inc.nested ?? [], auth);
  }
}

/** The children of one parent the caller may see: one Query on the child's indexed partition. */
async function childrenOf(layouts: LiveLayouts, relation: RelationDefinition, parent: StoredRecord, auth: AuthContext | undefined): Promise<StoredRecord[]> {
  const child = findEntity(relation.entity)!;
  if (!child.access.public && !auth) return [];
  const partition = listingPartitionFor(child, viewerOf(auth), { field: relation.foreignKey, value: parent.id });
  const records = await queryPartition(layouts.of(child), partition, MAX_INCLUDED_CHILDREN);
  return records.filter((r) => canSee(child, r, auth));
}
