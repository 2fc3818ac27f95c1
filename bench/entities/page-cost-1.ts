/**
 * A bench-only entity (loaded through ENTITIES_DIR by the write-scale scenario, never shipped):
 * products as shipped, under another name, pinned at 1 write shard: the read units of its
 * LIST page 1 and of a cursor page at that count.
 */
import products from '../../shared/registry/entities/products.js';
import type { EntityDefinition } from '../../shared/registry/index.js';

export default {
  ...products,
  name: 'pageCost1',
  slug: 'page-cost-1',
  tableName: 'page_cost_1',
  writeShards: 1,
} satisfies EntityDefinition;
