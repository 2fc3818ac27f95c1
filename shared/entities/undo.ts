/**
 * POST /api/v1/operations/{operationId}/undo: every record a bulk call (bulk update, bulk delete,
 * import, batch) wrote is put back as it stood before, unless something else changed it since: those are
 * listed as conflicts and left alone. The call is marked undone first, so a second undo reverts
 * nothing. Each record is reverted as a restore by the caller (docs/history.md): the entity's
 * update scope, and its delete scope to delete what an import created or bring back what a bulk
 * delete removed; row-level security as for any write.
 */
import { claimUndo, getRecord, readOperation, readRevision, readRevisions } from '../data/index.js';
import { NotFoundError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { findEntity } from '../registry/index.js';
import { loadLayouts } from '../migrations/index.js';
import { requireCaller } from './access.js';
import { restoreRecord } from './history.js';
import { preconditionsOfValue, recordEtag } from './preconditions.js';
import { mayDelete, removeStored } from './service.js';

export interface UndoResult {
  reverted: number;
  conflicts: string[];
}

export async function undoOperation(operationId: string, auth: AuthContext | undefined): Promise<UndoResult> {
  const caller = requireCaller(auth);
  const operation = /^op_[A-Za-z0-9]{1,64}$/.test(operationId) ? await readOperation(caller.tenantId, operationId) : undefined;
  if (!operation) throw new NotFoundError(`Operation '${operationId}' not found`);
  if (!(await claimUndo(caller.tenantId, operationId, new Date().toISOString()))) return { reverted: 0, conflicts: [] };
  const layouts = await loadLayouts();
  let reverted = 0;
  const conflicts: string[] = [];
  // A batch may write one record more than once: it goes back to before the first, if its last is still the latest.
  const spans = new Map<string, { slug: string; id: string; first: number; last: number }>();
  for (const { entity: slug, id, revision } of operation.records) {
    const span = spans.get(`${slug}/${id}`);
    spans.set(`${slug}/${id}`, { slug, id, first: Math.min(span?.first ?? revision, revision), last: Math.max(span?.last ?? revision, revision) });
  }
  for (const { slug, id, first, last } of spans.values()) {
    const entity = findEntity(slug);
    if (!entity) {
      conflicts.push(id);
      continue;
    }
    try {
      const layout = layouts.of(entity);
      const written = await readRevision(entity, caller.tenantId, id, first);
      const current = await getRecord(layout, id, caller.tenantId);
      const [latest] = (await readRevisions(entity, caller.tenantId, id, 1)).items;
      if (!written || latest?.revision !== last) {
        conflicts.push(id);
        continue;
      }
      if (written.operation === 'create') {
        if (!current || current.version !== last) throw new Error('changed');
        await removeStored(layouts, entity, id, mayDelete(entity, caller), preconditionsOfValue(recordEtag(current)));
      } else {
        await restoreRecord(entity, id, caller, { revision: first - 1 }, current && !current.deletedAt ? preconditionsOfValue(recordEtag(current)) : undefined);
      }
      reverted++;
    } catch {
      // Changed in between, refused by a rule or a scope: left as it is.
      conflicts.push(id);
    }
  }
  return { reverted, conflicts };
}
