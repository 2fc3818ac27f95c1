/** Orders: private to their creator; never deleted (DELETE answers 405). */
import type { EntityDefinition } from '../types.js';

export default {
  name: 'order',
  slug: 'orders',
  tableName: 'orders',
  idFormat: { type: 'prefixed', prefix: 'ord' },
  fields: {
    customerId: { type: 'string', maxLength: 64, indexed: true },
    status: { type: 'enum', values: ['pending', 'paid', 'shipped', 'cancelled'], default: 'pending', indexed: true },
    total: { type: 'number', validation: { min: 0 } },
  },
  aggregates: { sum: ['total'] },
  permissions: {
    create: ['orders:write'],
    read: ['orders:read'],
    update: ['orders:write'],
    delete: ['orders:delete'],
  },
  access: { public: false, shared: false },
  operations: { list: true, create: true, read: true, update: true, delete: false },
  softDelete: false,
  relations: {
    customer: { type: 'belongsTo', entity: 'customers', foreignKey: 'customerId' },
  },
} satisfies EntityDefinition;
