/** The dashboard family's routes: the web console's static files (functions/dashboard), public and never rate-limited. */
import { STRING, familyRoutes } from './declare.js';

export const dashboardRoutes = /* @__PURE__ */ familyRoutes('dashboard', [
  {
    method: 'GET',
    path: '/dashboard',
    operation: 'getDashboard',
    auth: 'public',
    summary: 'The dashboard, a web console of the API',
    openapi: () => ({
      tag: 'Docs',
      responses: { 200: { description: 'The HTML page of the dashboard; it signs in with a session.', contentType: 'text/html', schema: STRING, headers: ['ETag'] } },
      errors: [],
    }),
  },
  {
    method: 'GET',
    path: '/dashboard/{asset}',
    operation: 'getDashboardAsset',
    auth: 'public',
    errors: ['NOT_FOUND'],
    summary: 'A script or style sheet of the dashboard (content-hashed name, cached for a year)',
    openapi: () => ({
      tag: 'Docs',
      responses: { 200: { description: 'The asset (JavaScript or CSS).', contentType: ['text/javascript', 'text/css'], schema: STRING, headers: ['ETag'] } },
      errors: [404],
    }),
  },
]);
