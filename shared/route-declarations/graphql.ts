/** The GraphQL family's routes: each operation checks its own entity scope (shared/graphql/schema.ts). */
import type { QueryParameter, RouteDocs } from '../route-types.js';
import { STRING, V1, familyRoutes } from './declare.js';

const GRAPHQL = ['BAD_REQUEST', 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'QUERY_TOO_DEEP', 'QUERY_TOO_COMPLEX'] as const;
const GRAPHQL_QUERY: readonly QueryParameter[] = [
  { name: 'query', required: true, description: 'The GraphQL document.', schema: STRING, example: '{ tasks(limit: 5) { edges { node { id title } } } }' },
  { name: 'variables', description: 'A JSON object.', schema: STRING },
  { name: 'operationName', description: 'Which operation of the document to run.', schema: STRING },
];

export const graphqlRoutes = /* @__PURE__ */ familyRoutes('graphql', [
  {
    method: 'POST',
    path: `${V1}/graphql`,
    operation: 'graphqlPost',
    auth: 'required',
    errors: [...GRAPHQL],
    summary: 'GraphQL query or mutation',
    body: { $ref: '#/components/schemas/GraphQLRequest' },
    response: 'GraphQLResponse',
  },
  {
    method: 'GET',
    path: `${V1}/graphql`,
    operation: 'graphqlGet',
    auth: 'required',
    errors: [...GRAPHQL, 'METHOD_NOT_ALLOWED'],
    summary: 'GraphQL query (GET)',
    query: GRAPHQL_QUERY,
    response: 'GraphQLResponse',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function graphqlDocs(): RouteDocs<(typeof graphqlRoutes)[number]> {
  return {
    graphqlPost: ({ json, ref }) => ({
      tag: 'GraphQL',
      description: 'Same auth, scopes and row-level security as REST. Answers are GraphQL results, not the REST envelope.',
      requestBody: { example: { query: '{ tasks(limit: 5) { edges { node { id title status } } pageInfo { hasNextPage } } }' } },
      responses: { 200: json(ref('GraphQLResponse'), 'The result.'), 400: json(ref('GraphQLResponse'), 'The query does not parse or validate.') },
      errors: [],
    }),
    graphqlGet: ({ json, ref }) => ({
      tag: 'GraphQL',
      description: 'Queries only; mutations need POST.',
      responses: { 200: json(ref('GraphQLResponse'), 'The result.'), 400: json(ref('GraphQLResponse'), 'The query does not parse or validate.') },
      errors: [],
    }),
  };
}
