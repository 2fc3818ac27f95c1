/** The dashboard family's routes: the web console's static files (functions/dashboard), public and never rate-limited. */
import type { RouteDocs } from '../route-types.js';
import { STRING, familyRoutes } from './declare.js';

export const dashboardRoutes = /* @__PURE__ */ familyRoutes('dashboard', [
  {
    method: 'GET',
    path: '/dashboard',
    operation: 'getDashboard',
    auth: 'public',
    summary: 'The dashboard, a web console of the API',
  },
  {
    method: 'GET',
    path: '/dashboard/{asset}',
    operation: 'getDashboardAsset',
    auth: 'public',
    errors: ['NOT_FOUND'],
    summary: 'A script or style sheet of the dashboard (content-hashed name, cached for a year)',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function dashboardDocs(): RouteDocs<(typeof dashboardRoutes)[number]> {
  return {
    getDashboard: () => ({
      tag: 'Docs',
      responses: { 200: { description: 'The HTML page of the dashboard; it signs in with a session.', contentType: 'text/html', schema: STRING, headers: ['ETag'] } },
      errors: [],
    }),
    getDashboardAsset: () => ({
      tag: 'Docs',
      responses: { 200: { description: 'The asset (JavaScript or CSS).', contentType: ['text/javascript', 'text/css'], schema: STRING, headers: ['ETag'] } },
      errors: [404],
    }),
  };
}
