/**
 * The docs family: the OpenAPI document (GET /api/v1/openapi.json) and the reference page that
 * renders it (GET /api/docs and its assets). Public and cached; ETag and 304 come from the envelope.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import { openApiDocument } from '../../shared/openapi/index.js';
import { PAGE_CSP, docsAsset, docsPage } from '../../shared/openapi/page.js';
import { loadRegistry } from '../../shared/registry/index.js';
import type { FamilyOperations } from '../../shared/http/types.js';
import { apiPath } from '../../shared/http/urls.js';

await loadRegistry();

const CACHE = 'public, max-age=300';

const operations: FamilyOperations<'docs'> = {
  getOpenApiDocument: async () => ({ raw: openApiDocument(), headers: { 'Cache-Control': CACHE } }),
  getDocsPage: async (req) => {
    const page = docsPage(apiPath(req, '/api/docs'));
    return { text: page.body, headers: { 'Content-Type': page.contentType, 'Cache-Control': CACHE, 'Content-Security-Policy': PAGE_CSP } };
  },
  getDocsAsset: async (req) => {
    const asset = docsAsset(req.params.asset);
    return { text: asset.body, headers: { 'Content-Type': asset.contentType, 'Cache-Control': CACHE } };
  },
};

export const handler = createApiHandler(operations);
