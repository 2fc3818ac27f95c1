/** The health family's route: GET /api/health (public, never counted). */
import type { RouteDocs } from '../route-types.js';
import { familyRoutes } from './declare.js';

export const healthRoutes = /* @__PURE__ */ familyRoutes('health', [
  {
    method: 'GET',
    path: '/api/health',
    operation: 'getHealth',
    auth: 'public',
    errors: [],
    summary: 'Health check',
    response: 'Health',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function healthDocs(): RouteDocs<(typeof healthRoutes)[number]> {
  return {
    getHealth: ({ json, ref }) => ({
      tag: 'Health',
      description: 'Whether the service and its database answer. Never cached, never rate-limited.',
      responses: {
        200: json(ref('Health'), 'Healthy.', { example: { status: 'ok', version: '1.0.0', timestamp: '2026-01-01T12:00:00.000Z' } }),
        503: json(ref('Health'), 'The database does not answer.'),
      },
      errors: [],
    }),
  };
}
