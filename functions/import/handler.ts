/** The import family: POST /api/v1/import/tasks and POST /api/v1/import/{entity}. */
import { createApiHandler } from '../../shared/http/stack.js';
import { importAuthorizeOptions, importOperations } from '../../shared/import/operations.js';
import { loadRegistry } from '../../shared/registry/index.js';

await loadRegistry();

export const handler = createApiHandler(importOperations, importAuthorizeOptions);
