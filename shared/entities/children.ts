/**
 * The child collections /api/v1/{entity}/{id}/{child}: the hasMany children of a record (listed
 * on the child's indexed partition of the parent's id) and the manyToMany targets it links (the
 * ids it stores). The parent is read, and the children listed or created, with ONE layout value,
 * loaded once the caller may ask (service.ts says why).
 */
import { getRecord, recordTables, revisionPut, updateTransaction, writeContextOf, type StoredRecord } from '../data/index.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { findEntity, type LoadedEntity, type RelationDefinition } from '../registry/index.js';
import { loadLayouts, type LiveLayouts } from '../migrations/index.js';
import { changeableOr404, requireCaller, requireOperation, requirePermission, visibleOr404 } from './access.js';
import { after, changeEvent } from './changes.js';
import { paginationOf } from './list.js';
import { present, type PublicRecord } from './present.js';
import type { ListQuery } from './query.js';
import { insertRecord, listPage, mayCreate, WRITE_ATTEMPTS, type ListResult } from './service.js';

/** The relation behind /{entity}/{id}/{child}: by relation name, else by target slug. */
function childRelation(entity: LoadedEntity, child: string): { name: string; relation: RelationDefinition; target: LoadedEntity } {
  const entry =
    Object.entries(entity.relations).find(([name]) => name === child) ?? Object.entries(entity.relations).find(([, r]) => r.entity === child);
  const target = entry && entry[1].type !== 'belongsTo' ? findEntity(entry[1].entity) : undefined;
  if (!entry || !target) throw new NotFoundError(`${entity.slug} has no child collection '${child}'`);
  return { name: entry[0], relation: entry[1], target };
}

/** The parent's read checks: the operation, and the definition's scope. */
function mayReadParent(entity: LoadedEntity, auth: AuthContext | undefined): void {
  requireOperation(entity, 'read');
  requirePermission(entity, 'read', auth);
}

async function visibleParent(layouts: LiveLayouts, entity: LoadedEntity, id: string, auth: AuthContext | undefined): Promise<StoredRecord> {
  return visibleOr404(entity, await getRecord(layouts.of(entity), id, auth?.tenantId), id, auth);
}

/** The entity a child collection lists (404 when `entity` has no such collection): what its query is parsed against. */
export function childEntity(entity: LoadedEntity, child: string): LoadedEntity {
  return childRelation(entity, child).target;
}

/** A page of a child collection; `query` is parsed against its entity (childEntity). */
export async function listChildren(entity: LoadedEntity, id: string, child: string, auth: AuthContext | undefined, query: ListQuery): Promise<ListResult> {
  const { relation, target } = childRelation(entity, child);
  requireOperation(target, 'list');
  requirePermission(target, 'read', auth);
  mayReadParent(entity, auth);
  const layouts = await loadLayouts();
  const parent = await visibleParent(layouts, entity, id, auth);
  if (relation.type === 'hasMany') {
    if (!target.access.public && !auth) return { data: [], pagination: paginationOf(query.spec.page, query.spec.limit, 0, null) };
    return listPage(layouts, target, auth, query, { field: relation.foreignKey, value: parent.id });
  }
  // manyToMany: the ids stored on the parent (at most 100): ONE BatchGetItem, then filter/sort/page.
  return listPage(layouts, target, auth, query, undefined, (parent.data[relation.foreignKey] as string[] | undefined) ?? []);
}

/** A new record in a child collection (a hasMany child, or a manyToMany target linked to the parent). */
export async function createChild(entity: LoadedEntity, id: string, child: string, auth: AuthContext | undefined, payload: unknown): Promise<PublicRecord> {
  const { relation, target } = childRelation(entity, child);
  const caller = requireCaller(auth);
  mayReadParent(entity, caller);
  const layouts = await loadLayouts();
  const parent = await visibleParent(layouts, entity, id, caller);
  if (relation.type === 'hasMany') {
    const created = await insertRecord(layouts, target, mayCreate(target, caller), payload, { forced: { [relation.foreignKey]: parent.id }, checked: [relation.foreignKey] });
    return present(target, created);
  }
  // manyToMany: a new target record linked to the parent, in the same transaction.
  requireOperation(entity, 'update');
  requirePermission(entity, 'update', caller);
  changeableOr404(entity, parent, id, caller);
  const links = (parent.data[relation.foreignKey] as string[] | undefined) ?? [];
  if (links.length >= 100) throw new BadRequestError(`A ${entity.name} links at most 100 ${target.slug}`, { [relation.foreignKey]: 'at most 100 ids' });
  const layout = layouts.of(entity);
  for (let attempt = 1; ; attempt++) {
    const current = attempt === 1 ? parent : changeableOr404(entity, await getRecord(layout, id, caller.tenantId), id, caller);
    try {
      const created = await insertRecord(layouts, target, mayCreate(target, caller), payload, {
        alongside: (record) => {
          const next: StoredRecord = {
            ...current,
            data: { ...current.data, [relation.foreignKey]: [...((current.data[relation.foreignKey] as string[] | undefined) ?? []), record.id] },
            updatedAt: after(current.updatedAt),
            version: current.version + 1,
          };
          const tables = recordTables();
          return [...updateTransaction(layout, current, next, changeEvent(layout, 'updated', next, next.updatedAt), tables), ...revisionPut(entity, tables.history, current, next, writeContextOf(caller, 'update'))];
        },
      });
      return present(target, created);
    } catch (error) {
      // The new record's condition is first; a conflict on the parent shows as a cancelled transaction.
      if (!isParentConflict(error) || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}

function isParentConflict(error: unknown): boolean {
  const e = error as { name?: string; CancellationReasons?: { Code?: string }[] };
  return e.name === 'TransactionCanceledException' && (e.CancellationReasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed');
}
