/** A loaded entity for the pure query tests (no registry I/O). */
import type { LoadedEntity } from '../../../shared/registry/types.js';

export const tasks: LoadedEntity = {
  name: 'task',
  slug: 'tasks',
  tableName: 'tasks',
  idFormat: { type: 'prefixed', prefix: 'tsk' },
  fields: {
    title: { type: 'string', required: true, searchable: true },
    description: { type: 'string', searchable: true },
    status: { type: 'enum', values: ['todo', 'in_progress', 'completed'], indexed: true },
    priority: { type: 'enum', values: ['low', 'medium', 'high'], indexed: true },
    assigneeId: { type: 'string', indexed: true },
    estimate: { type: 'number' },
    done: { type: 'boolean' },
    dueAt: { type: 'datetime' },
    secretKey: { type: 'string' },
    internal: { type: 'string', sortable: false },
  },
  permissions: { create: [], read: [], update: [], delete: [] },
  access: { public: false, shared: false },
  operations: { list: true, create: true, read: true, update: true, delete: true },
  softDelete: false,
  relations: {},
  source: 'test',
};
