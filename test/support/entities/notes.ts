/**
 * A test-only private entity (loaded through ENTITIES_DIR by the servers of the field-rules
 * tests): each user sees only their own notes, yet a unique value is unique in the whole tenant.
 */
export default {
  name: 'note',
  slug: 'notes',
  tableName: 'notes',
  idFormat: { type: 'prefixed', prefix: 'not' },
  fields: {
    ref: { type: 'string', maxLength: 40, unique: true },
  },
  access: { public: false, shared: false },
};
