/** Tags: shared in the tenant; linked to tasks many-to-many (tasks carry tagIds). */
import type { EntityDefinition } from '../types.js';

export default {
  name: 'tag',
  slug: 'tags',
  tableName: 'tags',
  idFormat: { type: 'prefixed', prefix: 'tag' },
  fields: {
    name: { type: 'string', required: true, maxLength: 50, searchable: true },
    color: { type: 'string', validation: { pattern: '^#[0-9a-fA-F]{6}$' } },
  },
  permissions: {
    create: ['tags:write'],
    read: ['tags:read'],
    update: ['tags:write'],
    delete: ['tags:delete'],
  },
  access: { public: false, shared: true },
  operations: { list: true, create: true, read: true, update: true, delete: true },
  softDelete: false,
} satisfies EntityDefinition;
