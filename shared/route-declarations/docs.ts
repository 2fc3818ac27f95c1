/** The docs family's routes: the OpenAPI document and its reference page (shared/openapi), public and never rate-limited. */
import type { RouteDocs } from '../route-types.js';
import { OBJECT, STRING, V1, familyRoutes } from './declare.js';

const ASSET = { description: 'The asset (JavaScript or CSS).', contentType: ['text/javascript', 'text/css'], schema: STRING, headers: ['ETag'] } as const;

export const docsRoutes = /* @__PURE__ */ familyRoutes('docs', [
  {
    method: 'GET',
    path: `${V1}/openapi.json`,
    operation: 'getOpenApiDocument',
    auth: 'public',
    summary: 'This document',
  },
  {
    method: 'GET',
    path: '/api/docs',
    operation: 'getDocsPage',
    auth: 'public',
    summary: 'The API reference page',
  },
  {
    method: 'GET',
    path: '/api/docs/{asset}',
    operation: 'getDocsAsset',
    auth: 'public',
    errors: ['NOT_FOUND'],
    summary: 'A script or style sheet of the reference page',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function docsDocs(): RouteDocs<(typeof docsRoutes)[number]> {
  return {
    getOpenApiDocument: ({ json }) => ({
      tag: 'Docs',
      description: 'The OpenAPI 3.1 description of the API, generated from the route table and the entity registry.',
      responses: {
        200: json({ type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: STRING, info: OBJECT, paths: OBJECT } }, 'The OpenAPI document.', { headers: ['ETag'] }),
        304: { description: 'Not modified (If-None-Match).' },
      },
      errors: [],
    }),
    getDocsPage: () => ({
      tag: 'Docs',
      responses: { 200: { description: 'An HTML page that renders this document, with "try it".', contentType: 'text/html', schema: STRING, headers: ['ETag'] } },
      errors: [],
    }),
    getDocsAsset: () => ({ tag: 'Docs', responses: { 200: ASSET }, errors: [404] }),
  };
}
