/** The batch family's route: up to 20 sub-requests, each through its own family's stack. */
import type { RouteDocs } from '../route-types.js';
import { BODY, V1, familyRoutes } from './declare.js';

export const batchRoutes = /* @__PURE__ */ familyRoutes('batch', [
  // The outer request needs a caller; each sub-request needs its own scope.
  {
    method: 'POST',
    path: `${V1}/batch`,
    operation: 'runBatch',
    auth: 'required',
    errors: [...BODY],
    summary: 'Run up to 20 requests',
    body: { $ref: '#/components/schemas/BatchRequest' },
    response: 'BatchResponse',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function batchDocs(): RouteDocs<(typeof batchRoutes)[number]> {
  return {
    runBatch: ({ json, ref }) => ({
      tag: 'Batch',
      description:
        'Sub-requests run in order, each authorised as the caller and counted against its rate limit; a failing one does not stop the others. The answer is always 200.',
      requestBody: {
        example: { requests: [{ id: 'a', method: 'POST', path: '/tasks', body: { title: 'Write the report' } }, { id: 'b', method: 'GET', path: '/tasks?limit=5' }] },
      },
      responses: { 200: json(ref('BatchResponse'), "Each sub-request's status and body.") },
      errors: [400, 422],
    }),
  };
}
