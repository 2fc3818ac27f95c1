/** The stream family: GET /api/v1/stream/tasks and /api/v1/stream/{entity}, as a streamed response. */
import { createApiHandler } from '../../shared/http/stack.js';
import { loadRegistry } from '../../shared/registry/index.js';
import { streamAuthorizeOptions, streamOperations } from '../../shared/stream/operations.js';

await loadRegistry();

export const handler = createApiHandler(streamOperations, { ...streamAuthorizeOptions, streaming: true });
