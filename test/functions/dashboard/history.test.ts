/**
 * A record's history as the console shows it (dashboard/src/history.ts): a revision's diff rows,
 * who made it, which versions can be restored, a trash entry's revision, and the words of the
 * Undo toast and of what an undo did.
 */
import { describe, expect, it } from 'vitest';
import { actorText, bulkText, diffRows, operationText, restorable, revisionBeforeDeletion, sumUndo, undoText, valueText } from '../../../dashboard/src/history.js';

describe('diff rows', () => {
  it('shows absent values as a dash, lists and objects as JSON, the entity fields first in their order', () => {
    const rows = diffRows(
      {
        metadata: { from: null, to: { a: 1 } },
        status: { from: 'todo', to: 'completed' },
        title: { from: 'Draft', to: 'Final' },
        tagIds: { from: [], to: ['tag_1'] },
        description: { from: '', to: null },
      },
      ['id', 'title', 'description', 'status', 'tagIds'],
    );

    expect(rows).toEqual([
      { field: 'title', from: 'Draft', to: 'Final' },
      { field: 'description', from: '""', to: '—' },
      { field: 'status', from: 'todo', to: 'completed' },
      { field: 'tagIds', from: '[]', to: '["tag_1"]' },
      { field: 'metadata', from: '—', to: '{"a":1}' },
    ]);
  });

  it('writes numbers and booleans as they are', () => {
    expect([valueText(0), valueText(false), valueText(12.5), valueText(undefined)]).toEqual(['0', 'false', '12.5', '—']);
  });
});

describe('who and what', () => {
  it('names the actor by type and id, and the caller as you', () => {
    expect(actorText({ type: 'api_key', id: 'key_1' }, 'usr_1')).toBe('API key key_1');
    expect(actorText({ type: 'session', id: 'usr_1' }, 'usr_1')).toBe('user usr_1 (session, you)');
    expect(actorText({ type: 'session', id: 'usr_3' }, 'usr_1')).toBe('user usr_3 (session)');
    expect(actorText({ type: 'oidc', id: 'usr_2' }, 'usr_1')).toBe('user usr_2 (identity provider)');
    expect(actorText({ type: 'system', id: 'migration' })).toBe('system (migration)');
  });

  it('says what a revision did, and the bulk call it belonged to', () => {
    expect(operationText({ operation: 'update', operationId: null })).toBe('Updated');
    expect(operationText({ operation: 'delete', operationId: 'op_1' })).toBe('Deleted (bulk operation op_1)');
  });
});

describe('restore', () => {
  it('offers every version of a live record but its current one, never a deletion', () => {
    expect(restorable({ operation: 'update', revision: 3 }, 3, false)).toBe(false);
    expect(restorable({ operation: 'update', revision: 2 }, 3, false)).toBe(true);
    expect(restorable({ operation: 'create', revision: 1 }, 3, false)).toBe(true);
    expect(restorable({ operation: 'delete', revision: 4 }, 4, true)).toBe(false);
    expect(restorable({ operation: 'update', revision: 3 }, 4, true)).toBe(true);
  });

  it('restores a trash entry to the revision before its deletion', () => {
    expect(revisionBeforeDeletion({ id: 'tsk_1', deletedAt: '2026-11-28T10:00:00.000Z', revision: 5 })).toBe(4);
  });
});

describe('the Undo toast', () => {
  it('counts the records of the entity, singular for one, with the refused ones', () => {
    expect(bulkText('Updated', 45, 'tasks')).toBe('Updated 45 tasks');
    expect(bulkText('Deleted', 1, 'tasks')).toBe('Deleted 1 task');
    expect(bulkText('Imported', 1, 'categories', 2)).toBe('Imported 1 category (2 refused)');
  });

  it('sums the undos of an import sent in batches and says what was left as it is', () => {
    const result = sumUndo([
      { reverted: 100, conflicts: [] },
      { reverted: 43, conflicts: ['tsk_a', 'tsk_b'] },
    ]);

    expect(result).toEqual({ reverted: 143, conflicts: ['tsk_a', 'tsk_b'] });
    expect(undoText({ reverted: 1, conflicts: [] })).toBe('Undone: 1 record reverted.');
    expect(undoText(result)).toBe('Undone: 143 records reverted. 2 left as they are (changed since by something else, or refused by a rule now): tsk_a, tsk_b.');
    expect(undoText({ reverted: 0, conflicts: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] })).toContain('a, b, c, d, e and 2 more.');
  });
});
