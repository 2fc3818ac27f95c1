/**
 * A bench-only entity (loaded through ENTITIES_DIR by the write-scale scenario, never shipped):
 * products as shipped, under another name, with each listing partition's writes spread over 16
 * partition keys.
 */
import products from '../../shared/registry/entities/products.js';
import type { EntityDefinition } from '../../shared/registry/index.js';

export default {
  ...products,
  name: 'shardedProduct',
  slug: 'sharded-products',
  tableName: 'sharded_products',
  writeShards: 16,
} satisfies EntityDefinition;
