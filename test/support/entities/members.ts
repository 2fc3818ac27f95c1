/**
 * A test-only entity (loaded through ENTITIES_DIR by the servers of the field-rules tests, never
 * part of the registry otherwise): unique values scoped to the tenant, date fields, soft delete.
 */
export default {
  name: 'member',
  slug: 'members',
  tableName: 'members',
  idFormat: { type: 'prefixed', prefix: 'mem' },
  fields: {
    name: { type: 'string', required: true, maxLength: 100 },
    email: { type: 'string', maxLength: 254, unique: true },
    badge: { type: 'number', unique: true },
    joinedOn: { type: 'date' },
    renewsOn: { type: 'date', indexed: true },
    level: { type: 'enum', values: ['bronze', 'silver', 'gold'] },
  },
  access: { public: false, shared: true },
  softDelete: true,
};
