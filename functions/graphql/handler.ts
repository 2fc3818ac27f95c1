/**
 * The GraphQL family: POST /api/v1/graphql, and GET for queries (shared/graphql/execute.ts).
 * graphql-js, the schema and the resolvers load on the first request that reaches them.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import type { FamilyOperations } from '../../shared/http/types.js';
import { loadRegistry } from '../../shared/registry/index.js';

await loadRegistry();

export const handler = createApiHandler(async () => {
  const { runGraphQL } = await import('../../shared/graphql/execute.js');
  const operations: FamilyOperations<'graphql'> = { graphqlPost: runGraphQL, graphqlGet: runGraphQL };
  return { operations };
});
