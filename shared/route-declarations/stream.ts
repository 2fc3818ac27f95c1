/** The stream family's routes: a streamed response (STREAMING_FAMILIES); the static tasks path wins over the template. */
import type { RouteDocs } from '../route-types.js';
import { STRING, V1, familyRoutes } from './declare.js';

export const streamRoutes = /* @__PURE__ */ familyRoutes('stream', [
  {
    method: 'GET',
    path: `${V1}/stream/tasks`,
    operation: 'streamTasks',
    auth: 'required',
    scope: 'tasks:read',
    errors: ['INVALID_REQUEST', 'TOO_MANY_STREAMS'],
    summary: 'Task change events (SSE)',
  },
  {
    method: 'GET',
    path: `${V1}/stream/{entity}`,
    operation: 'streamEntity',
    auth: 'required',
    scope: '{entity}:read',
    errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'TOO_MANY_STREAMS'],
    summary: 'Change events of {entity} (SSE)',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function streamDocs(): RouteDocs<(typeof streamRoutes)[number]> {
  return {
    streamTasks: () => ({
      tag: 'Stream',
      description:
        'Server-sent events: `{type: connected}` first, then task.created / task.updated (`task`) and task.deleted (`taskId`). Reconnect with Last-Event-ID to receive what was missed. Needs `tasks:read`.',
      parameters: [{ name: 'Last-Event-ID', in: 'header', required: false, description: 'The last `id:` received.', schema: STRING }],
      responses: { 200: { description: 'An event stream.', contentType: 'text/event-stream', schema: STRING } },
      errors: [],
    }),
  };
}
