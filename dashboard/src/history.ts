/**
 * A record's history as the console shows it (docs/history.md): a revision's changes as rows of
 * field, before and after; who made it and how; what a trash entry restores; and the words of
 * the Undo toast after a bulk call. Pure: tested without a browser.
 */
import type { Schemas } from '@entity-record-api/client';

export type Revision = Schemas['Revision'];

export interface UndoResult {
  reverted: number;
  conflicts: string[];
}

/** An entry of GET /{entity}/deleted. */
export interface TrashEntry {
  id: string;
  deletedAt: string;
  revision: number;
}

/** A value of a change as text: absent (null) as a dash, objects and lists as JSON. */
export function valueText(value: unknown): string {
  if (value === undefined || value === null) return '—';
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export interface DiffRow {
  field: string;
  from: string;
  to: string;
}

/**
 * The rows of a revision's diff, the entity's fields first in the description's order (the
 * columns the user knows), then the rest (metadata, deletedAt) by name.
 */
export function diffRows(changes: Revision['changes'], order: readonly string[] = []): DiffRow[] {
  const rank = (field: string) => {
    const i = order.indexOf(field);
    return i === -1 ? order.length : i;
  };
  return Object.keys(changes)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((field) => ({ field, from: valueText(changes[field].from), to: valueText(changes[field].to) }));
}

/** Who made a revision, by type and id: `API key key_…`, `user usr_… (session)`, `user usr_… (identity provider, you)`, `system (migration)`. */
export function actorText(actor: Revision['actor'], me?: string): string {
  switch (actor.type) {
    case 'api_key':
      return `API key ${actor.id}`;
    case 'system':
      return `system (${actor.id})`;
    default: {
      const how = actor.type === 'oidc' ? 'identity provider' : 'session';
      return `user ${actor.id} (${how}${actor.id === me ? ', you' : ''})`;
    }
  }
}

const OPERATIONS: Record<Revision['operation'], string> = {
  create: 'Created',
  update: 'Updated',
  delete: 'Deleted',
  restore: 'Restored',
  migration: 'Migrated',
};

/** What a revision did, in a word, and whether it was part of a bulk call. */
export function operationText(revision: Pick<Revision, 'operation' | 'operationId'>): string {
  const word = OPERATIONS[revision.operation] ?? revision.operation;
  return revision.operationId ? `${word} (bulk operation ${revision.operationId})` : word;
}

/**
 * Whether "Restore this version" applies: the record stood after it (not a deletion), and it is
 * not already the record's current state (the newest revision of a live record).
 */
export function restorable(revision: Pick<Revision, 'operation' | 'revision'>, latest: number | undefined, deleted: boolean): boolean {
  if (revision.operation === 'delete') return false;
  return deleted || revision.revision !== latest;
}

/** The revision a trash entry is restored to: the one before its deletion. */
export const revisionBeforeDeletion = (entry: TrashEntry) => entry.revision - 1;

export type BulkVerb = 'Updated' | 'Deleted' | 'Imported';

/** The toast's text after a bulk call: `Updated 45 tasks`, `Deleted 1 task` (the slug singular for one). */
export function bulkText(verb: BulkVerb, count: number, slug: string, failed = 0): string {
  const noun = count === 1 ? singular(slug) : slug;
  return `${verb} ${count} ${noun}${failed ? ` (${failed} refused)` : ''}`;
}

function singular(slug: string): string {
  if (slug.endsWith('ies')) return `${slug.slice(0, -3)}y`;
  if (slug.endsWith('s')) return slug.slice(0, -1);
  return slug;
}

/** The sum of several undos (an import sent in batches is one bulk call per batch). */
export function sumUndo(results: UndoResult[]): UndoResult {
  return { reverted: results.reduce((n, r) => n + r.reverted, 0), conflicts: results.flatMap((r) => r.conflicts) };
}

/** What an undo did, in words: the records reverted and those left as they are. */
export function undoText(result: UndoResult): string {
  const reverted = `Undone: ${result.reverted} ${result.reverted === 1 ? 'record' : 'records'} reverted.`;
  if (!result.conflicts.length) return reverted;
  const n = result.conflicts.length;
  const shown = result.conflicts.slice(0, 5).join(', ');
  const more = n > 5 ? ` and ${n - 5} more` : '';
  return `${reverted} ${n} left as ${n === 1 ? 'it is' : 'they are'} (changed since by something else, or refused by a rule now): ${shown}${more}.`;
}
