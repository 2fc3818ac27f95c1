/**
 * The entities family: /api/v1/{entity}, /api/v1/{entity}/{id}, /api/v1/{entity}/{id}/{child}.
 * The registry loads when this module loads (Lambda init, or the local runtime's first import):
 * a bad definition fails there with a message naming the entity and the problem. The operations
 * (and the AWS SDK under them) load on the first request that reaches them.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import { loadRegistry } from '../../shared/registry/index.js';

await loadRegistry();

export const handler = createApiHandler(async () => {
  const { entityOperations, entityStackOptions } = await import('../../shared/http/operations/entities.js');
  return { operations: entityOperations, options: entityStackOptions };
});
