/** Tasks: the worked entity of SPEC.md. Private to their creator (admins see the tenant's). */
import type { EntityDefinition } from '../types.js';

export default {
  name: 'task',
  slug: 'tasks',
  tableName: 'tasks',
  idFormat: { type: 'prefixed', prefix: 'tsk' },
  fields: {
    title: { type: 'string', required: true, maxLength: 200, searchable: true },
    description: { type: 'string', validation: { max: 10000 }, searchable: true },
    status: { type: 'enum', values: ['todo', 'in_progress', 'completed'], default: 'todo', indexed: true },
    priority: { type: 'enum', values: ['low', 'medium', 'high'], default: 'medium', indexed: true },
    assigneeId: { type: 'string', maxLength: 64, references: 'users', indexed: true },
  },
  permissions: {
    create: ['tasks:write'],
    read: ['tasks:read'],
    update: ['tasks:write'],
    delete: ['tasks:delete'],
  },
  access: { public: false, shared: false },
  operations: { list: true, create: true, read: true, update: true, delete: true },
  softDelete: false,
  relations: {
    assignee: { type: 'belongsTo', entity: 'users', foreignKey: 'assigneeId' },
    comments: { type: 'hasMany', entity: 'comments', foreignKey: 'taskId' },
    tags: { type: 'manyToMany', entity: 'tags', foreignKey: 'tagIds' },
  },
} satisfies EntityDefinition;
