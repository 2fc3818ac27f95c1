/**
 * A bench-only entity (loaded through ENTITIES_DIR by the write-scale scenario, never shipped):
 * products as shipped, under another name, pinned at 8 write shards: the read units of its
 * LIST page 1 and of a cursor page at that count.
 */
import products from '../../shared/registry/entities/products.js';
import type { EntityDefinition } from '../../shared/registry/index.js';

export default {
  ...products,
  name: 'pageCost8',
  slug: 'page-cost-8',
  tableName: 'page_cost_8',
  writeShards: 8,
} satisfies EntityDefinition;
