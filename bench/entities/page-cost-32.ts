/**
 * A bench-only entity (loaded through ENTITIES_DIR by the write-scale scenario, never shipped):
 * products as shipped, under another name, pinned at 32 write shards: the read units of its
 * LIST page 1 and of a cursor page at that count.
 */
import products from '../../shared/registry/entities/products.js';
import type { EntityDefinition } from '../../shared/registry/index.js';

export default {
  ...products,
  name: 'pageCost32',
  slug: 'page-cost-32',
  tableName: 'page_cost_32',
  writeShards: 32,
} satisfies EntityDefinition;
