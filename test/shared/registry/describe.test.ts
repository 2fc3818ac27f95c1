import { beforeAll, describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../shared/http/types.js';
import { describeEntity } from '../../../shared/registry/describe.js';
import { loadDefinitions, type LoadedEntity } from '../../../shared/registry/index.js';

let entities: Record<string, LoadedEntity>;

beforeAll(async () => {
  entities = Object.fromEntries((await loadDefinitions()).map((e) => [e.slug, e]));
});

function caller(scopes: string[], type: AuthContext['type'] = 'api_key'): AuthContext {
  return { type, user: { id: 'usr_1', email: 'a@b.c', role: 'user' }, tenantId: 'ten_1', scopes };
}

describe('describeEntity', () => {
  it('describes tasks as SPEC.md lists: entity, methods, schema, relations, permissions, rateLimit', () => {
    const description = describeEntity(entities.tasks, caller(['tasks:read', 'tasks:write']));

    expect(description.entity).toBe('task');
    expect(description.methods).toEqual(['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS']);
    expect(description.schema.id).toEqual({ type: 'string', required: false, generated: true, primaryKey: true });
    expect(description.schema.title).toEqual({ type: 'string', required: true, generated: false, maxLength: 200 });
    expect(description.schema.status).toEqual({ type: 'enum', required: false, generated: false, values: ['todo', 'in_progress', 'completed'], default: 'todo' });
    expect(description.schema.createdAt).toEqual({ type: 'datetime', required: false, generated: true });
    expect(description.relations).toEqual({
      assignee: { type: 'belongsTo', entity: 'users', foreignKey: 'assigneeId' },
      comments: { type: 'hasMany', entity: 'comments', foreignKey: 'taskId' },
      tags: { type: 'manyToMany', entity: 'tags', foreignKey: 'tagIds' },
    });
    expect(description.permissions).toEqual({ read: true, write: true, delete: false });
    expect(description.rateLimit).toEqual({ limit: 1000, window: '1h' });
  });

  it('leaves out DELETE and the delete permission where the operation is off', () => {
    const description = describeEntity(entities.orders, caller(['*']));

    expect(description.methods).toEqual(['GET', 'POST', 'PATCH', 'OPTIONS']);
    expect(description.permissions).toEqual({ read: true, write: true, delete: false });
  });

  it('gives anonymous callers read on a public entity and the anonymous limit', () => {
    const description = describeEntity(entities.products, undefined);

    expect(description.permissions).toEqual({ read: true, write: false, delete: false });
    expect(description.rateLimit).toEqual({ limit: 300, window: '1h' });
    expect(description.schema.id.type).toBe('uuid');
    expect(description.schema.deletedAt).toEqual({ type: 'datetime', required: false, generated: true });
  });

  it('shows a session user the session limit and read/write/delete from the bare scopes', () => {
    const description = describeEntity(entities.customers, caller(['read', 'write', 'delete'], 'session'));

    expect(description.permissions).toEqual({ read: true, write: true, delete: true });
    expect(description.rateLimit).toEqual({ limit: 100, window: '1h' });
  });

  it("shows an admin's session the admins' session limit", () => {
    const admin: AuthContext = { ...caller(['*'], 'session'), user: { id: 'usr_2', email: 'admin@b.c', role: 'admin' } };

    expect(describeEntity(entities.customers, admin).rateLimit).toEqual({ limit: 5000, window: '1h' });
  });

  it('marks generated fields', () => {
    expect(describeEntity(entities.comments, undefined).schema.authorId).toMatchObject({ generated: true, required: false });
  });
});
