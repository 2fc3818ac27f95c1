/**
 * A bench-only entity (loaded through ENTITIES_DIR by the write-scale scenario, never shipped):
 * products as shipped, under another name, pinned at 2 write shards: the read units of its
 * LIST page 1 and of a cursor page at that count.
 */
import products from '../../shared/registry/entities/products.js';
import type { EntityDefinition } from '../../shared/registry/index.js';

export default {
  ...products,
  name: 'pageCost2',
  slug: 'page-cost-2',
  tableName: 'page_cost_2',
  writeShards: 2,
} satisfies EntityDefinition;
