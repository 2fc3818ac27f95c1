/**
 * The entities family: /api/v1/{entity}, /api/v1/{entity}/{id}, /api/v1/{entity}/{id}/{child}.
 * The registry loads when this module loads (Lambda init, or the local runtime's first import):
 * a bad definition fails there with a message naming the entity and the problem.
 */
import { entityStackOptions, entityOperations } from '../../shared/entities/operations.js';
import { createApiHandler } from '../../shared/http/stack.js';
import { loadRegistry } from '../../shared/registry/index.js';

await loadRegistry();

export const handler = createApiHandler(entityOperations, entityStackOptions);
