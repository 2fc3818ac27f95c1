/** The import family: POST /api/v1/import/tasks and POST /api/v1/import/{entity} (operations loaded on first use). */
import { createApiHandler } from '../../shared/http/stack.js';
import { loadRegistry } from '../../shared/registry/index.js';

await loadRegistry();

export const handler = createApiHandler(async () => {
  const { importAuthorizeOptions, importOperations } = await import('../../shared/http/operations/import.js');
  return { operations: importOperations, options: importAuthorizeOptions };
});
