/**
 * The GraphQL family: POST /api/v1/graphql, and GET for queries (shared/graphql/execute.ts).
 * graphql-js, the schema and the resolvers load on the first request that reaches them.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import { loadRegistry } from '../../shared/registry/index.js';
import { routeKey } from '../../shared/core-routes.js';

await loadRegistry();

export const GRAPHQL_PATH = '/api/v1/graphql';

export const handler = createApiHandler(async () => {
  const { runGraphQL } = await import('../../shared/graphql/execute.js');
  return {
    operations: {
      [routeKey('POST', GRAPHQL_PATH)]: runGraphQL,
      [routeKey('GET', GRAPHQL_PATH)]: runGraphQL,
    },
  };
});
