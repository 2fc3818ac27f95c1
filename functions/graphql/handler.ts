/** The GraphQL family: POST /api/v1/graphql, and GET for queries (shared/graphql/execute.ts). */
import { runGraphQL } from '../../shared/graphql/execute.js';
import { createApiHandler } from '../../shared/http/stack.js';
import { loadRegistry } from '../../shared/registry/index.js';
import { routeKey } from '../../shared/routes.js';

await loadRegistry();

export const GRAPHQL_PATH = '/api/v1/graphql';

export const handler = createApiHandler({
  [routeKey('POST', GRAPHQL_PATH)]: runGraphQL,
  [routeKey('GET', GRAPHQL_PATH)]: runGraphQL,
});
