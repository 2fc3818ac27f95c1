/**
 * A test-only public entity (loaded through ENTITIES_DIR by the servers of the field-rules tests):
 * its unique values are unique across every tenant; hard delete.
 */
export default {
  name: 'listing',
  slug: 'listings',
  tableName: 'listings',
  idFormat: { type: 'uuid' },
  fields: {
    sku: { type: 'string', required: true, maxLength: 64, unique: true },
    title: { type: 'string', maxLength: 200 },
  },
  access: { public: true, shared: true },
};
