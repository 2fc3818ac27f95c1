/**
 * A test-only private entity declared with write shards (loaded through ENTITIES_DIR by the write
 * shards tests): owner views, an enum and a free-text index, ids that carry their time (the record
 * stands in its tenant listing's shard).
 */
export default {
  name: 'ledgerEntry',
  slug: 'ledger',
  tableName: 'ledger',
  idFormat: { type: 'prefixed', prefix: 'led' },
  fields: {
    title: { type: 'string', required: true, maxLength: 200, searchable: true },
    kind: { type: 'enum', values: ['debit', 'credit', 'memo'], default: 'memo', indexed: true },
    account: { type: 'string', maxLength: 40, indexed: true },
    amount: { type: 'number' },
  },
  access: { public: false, shared: false },
  writeShards: 4,
};
