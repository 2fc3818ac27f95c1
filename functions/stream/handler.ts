/**
 * The stream family: GET /api/v1/stream/tasks and /api/v1/stream/{entity}, as a streamed
 * response. The registry loads with the module; the operations (and the AWS SDK under them)
 * on the first request that reaches them.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import { loadRegistry } from '../../shared/registry/index.js';

await loadRegistry();

export const handler = createApiHandler(
  async () => {
    const { streamAuthorizeOptions, streamOperations } = await import('../../shared/http/operations/stream.js');
    return { operations: streamOperations, options: streamAuthorizeOptions };
  },
  { streaming: true },
);
