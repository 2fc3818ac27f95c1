/** Products: public (anyone may read, writes stay in the tenant), shared, soft-deleted. */
import type { EntityDefinition } from '../types.js';

export default {
  name: 'product',
  slug: 'products',
  tableName: 'products',
  idFormat: { type: 'uuid' },
  fields: {
    name: { type: 'string', required: true, maxLength: 200, searchable: true },
    price: { type: 'number', required: true, validation: { min: 0 } },
    status: { type: 'enum', values: ['active', 'inactive'], default: 'active', indexed: true },
    category: { type: 'string', maxLength: 100, indexed: true },
    description: { type: 'string', maxLength: 10000, searchable: true },
  },
  aggregates: { sum: ['price'] },
  permissions: {
    create: ['products:write'],
    read: ['products:read'],
    update: ['products:write'],
    delete: ['products:delete'],
  },
  access: { public: true, shared: true },
  operations: { list: true, create: true, read: true, update: true, delete: true },
  softDelete: true,
} satisfies EntityDefinition;
