/** Customers: private to their creator, soft-deleted; their orders through orders.customerId. */
import type { EntityDefinition } from '../types.js';

export default {
  name: 'customer',
  slug: 'customers',
  tableName: 'customers',
  idFormat: { type: 'prefixed', prefix: 'cus' },
  fields: {
    name: { type: 'string', required: true, maxLength: 200, searchable: true },
    email: { type: 'string', maxLength: 254, validation: { pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' }, searchable: true },
    phone: { type: 'string', maxLength: 40 },
  },
  permissions: {
    create: ['customers:write'],
    read: ['customers:read'],
    update: ['customers:write'],
    delete: ['customers:delete'],
  },
  access: { public: false, shared: false },
  operations: { list: true, create: true, read: true, update: true, delete: true },
  softDelete: true,
  relations: {
    orders: { type: 'hasMany', entity: 'orders', foreignKey: 'customerId' },
  },
} satisfies EntityDefinition;
