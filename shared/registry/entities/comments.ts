/** Comments on tasks: a child collection of tasks through taskId; the author is the caller. */
import type { EntityDefinition } from '../types.js';

export default {
  name: 'comment',
  slug: 'comments',
  tableName: 'comments',
  idFormat: { type: 'prefixed', prefix: 'cmt' },
  fields: {
    taskId: { type: 'string', required: true, maxLength: 64, references: 'tasks', indexed: true },
    body: { type: 'string', required: true, maxLength: 5000, searchable: true },
    authorId: { type: 'string', generated: 'caller' },
  },
  permissions: {
    create: ['comments:write'],
    read: ['comments:read'],
    update: ['comments:write'],
    delete: ['comments:delete'],
  },
  access: { public: false, shared: false },
  operations: { list: true, create: true, read: true, update: true, delete: true },
  softDelete: false,
  relations: {
    task: { type: 'belongsTo', entity: 'tasks', foreignKey: 'taskId' },
    author: { type: 'belongsTo', entity: 'users', foreignKey: 'authorId' },
  },
} satisfies EntityDefinition;
