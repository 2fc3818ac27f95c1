/**
 * A bulk call as one operation (bulk update, bulk delete, import, batch; docs/history.md): its
 * writes carry its `operationId` in their revisions and append what they committed to its journal
 * (shared/caller.ts), which is kept for its undo (undo.ts) once the call is done. A bulk call
 * inside a batch is an operation of its own, and its writes are the batch's too.
 */
import type { AuthContext, JournalEntry } from '../caller.js';
import { saveOperation } from '../data/index.js';
import { newId } from '../ids.js';
import { findEntity, historyDaysOf, type LoadedEntity } from '../registry/index.js';

export interface Operation {
  operationId: string;
  /** The caller as the operation's writes see it. */
  auth: AuthContext;
  /** Keeps what the operation wrote for its undo (writes of entities that keep no history left out). */
  finish(): Promise<void>;
}

export function startOperation(caller: AuthContext): Operation {
  const operationId = newId('op');
  const journal: JournalEntry[] = [];
  return {
    operationId,
    auth: { ...caller, operationId, journal },
    finish: async () => {
      caller.journal?.push(...journal);
      const entities = new Map<string, LoadedEntity>();
      for (const { entity } of journal) {
        const found = findEntity(entity);
        if (found && historyDaysOf(found) > 0) entities.set(entity, found);
      }
      const records = journal.filter((w) => entities.has(w.entity));
      if (records.length) await saveOperation([...entities.values()], { operationId, tenantId: caller.tenantId, records });
    },
  };
}
