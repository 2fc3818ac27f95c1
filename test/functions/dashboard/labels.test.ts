/**
 * Names instead of ids (dashboard/src/labels.ts): which columns hold references, the LIST's
 * include that embeds them, a record's label, and what a batched look-up asks for.
 */
import { describe, expect, it } from 'vitest';
import type { EntityDescription } from '../../../dashboard/src/form.js';
import { includeOf, LabelBook, labelOf, referencesOf } from '../../../dashboard/src/labels.js';

const tasks = {
  entity: 'task',
  slug: 'tasks',
  methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
  schema: {
    id: { type: 'string', primaryKey: true, generated: true },
    title: { type: 'string', required: true },
    assigneeId: { type: 'string', references: 'users' },
    projectId: { type: 'string', references: 'projects' },
    tagIds: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'datetime', generated: true },
  },
  relations: {
    assignee: { type: 'belongsTo', entity: 'users', foreignKey: 'assigneeId' },
    comments: { type: 'hasMany', entity: 'comments', foreignKey: 'taskId' },
    tags: { type: 'manyToMany', entity: 'tags', foreignKey: 'tagIds' },
  },
  permissions: { read: true, write: true, delete: true },
} as EntityDescription;

describe('references', () => {
  it('finds the id columns: relations (embedded by include) and references without one', () => {
    const refs = referencesOf(tasks);

    expect(refs).toEqual([
      { column: 'assigneeId', entity: 'users', relation: 'assignee', many: false },
      { column: 'tagIds', entity: 'tags', relation: 'tags', many: true },
      { column: 'projectId', entity: 'projects', many: false },
    ]);
    expect(includeOf(refs)).toBe('assignee,tags');
  });

  it("labels a record by name, title or email, else its first other text", () => {
    expect(labelOf({ id: 'a', title: 'Write', name: 'Ada' })).toBe('Ada');
    expect(labelOf({ id: 'a', email: 'ada@example.com' })).toBe('ada@example.com');
    expect(labelOf({ id: 'a', ownerId: 'usr_1', createdAt: '2026-01-01T00:00:00Z', body: 'Hello' })).toBe('Hello');
    expect(labelOf({ id: 'a', total: 3 })).toBeUndefined();
  });

  it('learns the embedded records, and asks only for the ids it has not seen', () => {
    const book = new LabelBook();
    const rows = [
      { id: 't1', assigneeId: 'usr_1', tagIds: ['tag_1', 'tag_2'], projectId: 'prj_1', assignee: { id: 'usr_1', name: 'Ada' }, tags: [{ id: 'tag_1', name: 'urgent' }] },
      { id: 't2', assigneeId: 'usr_2', tagIds: ['tag_2'], projectId: 'prj_1' },
    ];
    const refs = referencesOf(tasks);

    book.learnEmbedded(refs, rows);

    expect(book.label('users', 'usr_1')).toBe('Ada');
    expect(book.label('tags', 'tag_1')).toBe('urgent');
    expect(book.missing(refs, rows)).toEqual(new Map([['users', ['usr_2']], ['tags', ['tag_2']], ['projects', ['prj_1']]]));
    book.forget('projects', ['prj_1']);
    expect(book.missing(refs, rows).has('projects')).toBe(false);
    expect(book.label('projects', 'prj_1')).toBeUndefined();
  });
});
