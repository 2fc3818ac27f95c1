/**
 * A bench-only entity (loaded through ENTITIES_DIR by the write-scale scenario, never shipped):
 * products as shipped, under another name, with each listing partition's writes spread over 16
 * partition keys. A plain object, not typed as an EntityDefinition, so that it still compiles
 * while the registry does not know `writeShards` (the scenario then skips it).
 */
export default {
  name: 'shardedProduct',
  slug: 'sharded-products',
  tableName: 'sharded_products',
  idFormat: { type: 'uuid' },
  fields: {
    name: { type: 'string', required: true, maxLength: 200, searchable: true },
    price: { type: 'number', required: true, validation: { min: 0 } },
    status: { type: 'enum', values: ['active', 'inactive'], default: 'active', indexed: true },
    category: { type: 'string', maxLength: 100, indexed: true },
    description: { type: 'string', maxLength: 10000, searchable: true },
  },
  permissions: {
    create: ['sharded-products:write'],
    read: ['sharded-products:read'],
    update: ['sharded-products:write'],
    delete: ['sharded-products:delete'],
  },
  access: { public: true, shared: true },
  operations: { list: true, create: true, read: true, update: true, delete: true },
  softDelete: true,
  writeShards: 16,
};
