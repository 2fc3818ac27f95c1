/**
 * The deployment's OpenAPI document: built once per process from THE route table and the loaded
 * registry (the docs family awaits loadRegistry() at start).
 */
import { config } from '../config.js';
import { allEntities } from '../registry/index.js';
import { routes } from '../routes.js';
import { buildOpenApiDocument, type OpenApiDocument } from './document.js';

export { buildOpenApiDocument, type DocumentSources, type OpenApiDocument } from './document.js';

let built: OpenApiDocument | undefined;

export function openApiDocument(): OpenApiDocument {
  built ??= buildOpenApiDocument({ routes, entities: allEntities(), version: config().version });
  return built;
}
