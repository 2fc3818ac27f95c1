/**
 * The docs family: the OpenAPI document (GET /api/v1/openapi.json) and the reference page that
 * renders it (GET /api/docs and its assets). Public and cached; ETag and 304 come from the envelope.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import { openApiDocument } from '../../shared/openapi/index.js';
import { PAGE_CSP, docsAsset, docsPage } from '../../shared/openapi/page.js';
import { loadRegistry } from '../../shared/registry/index.js';
import { routeKey } from '../../shared/core-routes.js';
import { apiPath } from '../../shared/http/urls.js';

await loadRegistry();

const CACHE = 'public, max-age=300';

export const handler = createApiHandler({
  [routeKey('GET', '/api/v1/openapi.json')]: async () => ({ raw: openApiDocument(), headers: { 'Cache-Control': CACHE } }),
  [routeKey('GET', '/api/docs')]: async (req) => {
    const page = docsPage(apiPath(req, '/api/docs'));
    return { text: page.body, headers: { 'Content-Type': page.contentType, 'Cache-Control': CACHE, 'Content-Security-Policy': PAGE_CSP } };
  },
  [routeKey('GET', '/api/docs/{asset}')]: async (req) => {
    const asset = docsAsset(req.params.asset);
    return { text: asset.body, headers: { 'Content-Type': asset.contentType, 'Cache-Control': CACHE } };
  },
});
