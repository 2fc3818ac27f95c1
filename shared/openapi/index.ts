/**
 * The deployment's OpenAPI document: built once per process from THE route table and the loaded
 * registry (the docs family awaits loadRegistry() at start).
 */
import { config } from '../config.js';
import { pluginRouteDefinition } from '../plugins/declarations.js';
import { allEntities } from '../registry/index.js';
import { routes, type Route } from '../routes.js';
import { buildOpenApiDocument, type OpenApiDocument, type RouteDetails } from './document.js';

export { buildOpenApiDocument, type DocumentSources, type OpenApiDocument } from './document.js';

let built: OpenApiDocument | undefined;

export function openApiDocument(): OpenApiDocument {
  built ??= buildOpenApiDocument({ routes, entities: allEntities(), version: config().version, routeDetails: pluginRouteDetails });
  return built;
}

/** A plugin route's own summary, words and schemas (its declaration file). */
function pluginRouteDetails(route: Route): RouteDetails | undefined {
  if (route.family !== 'plugins') return undefined;
  const declared = pluginRouteDefinition(route.method, route.path);
  return (
    declared && {
      summary: declared.summary,
      description: declared.description,
      operationId: declared.operationId,
      requestSchema: declared.body,
      example: declared.example,
      responseSchema: declared.response,
      status: declared.status,
    }
  );
}
