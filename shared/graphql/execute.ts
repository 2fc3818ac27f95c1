/**
 * POST /api/v1/graphql `{query, variables?, operationName?}` and GET /api/v1/graphql?query=…
 * (&variables=<JSON>&operationName=…; queries only: a mutation over GET answers 405).
 *
 * Responses are GraphQL's own `{data, errors?}` (GraphQL-over-HTTP), not the success envelope:
 * - executed: 200 `{data, errors?}`; a field that fails (404, 403 INSUFFICIENT_PERMISSIONS, 422
 *   VALIDATION_FAILED, 409 ...) is null in data and has an error with `path` and
 *   `extensions: {code, status, details?}` — the code, status and details REST would answer;
 * - refused before execution: 400 `{errors: [{message, extensions: {code}}]}` with code
 *   GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED, BAD_REQUEST (no query, bad variables,
 *   unknown operation), QUERY_TOO_DEEP or QUERY_TOO_COMPLEX (shared/graphql/limits.ts); 405
 *   METHOD_NOT_ALLOWED for a mutation sent with GET.
 * Errors before GraphQL is reached (401 without credentials, 429, malformed JSON) keep the usual
 * error envelope `{success: false, error, code}`.
 */
import { execute, GraphQLError, parse, validate, type DocumentNode } from 'graphql';
import { loadLayouts } from '../migrations/index.js';
import { ApiError, toApiError } from '../errors.js';
import { jsonDepth, MAX_JSON_DEPTH } from '../json-depth.js';
import type { ApiRequest, Reply } from '../http/index.js';
import { logger } from '../logger.js';
import { allEntities } from '../registry/index.js';
import { MAX_COMPLEXITY, MAX_DEPTH, measure, operationOf } from './limits.js';
import { RelatedLoader } from './loaders.js';
import { graphqlSchema, namesOf, type GraphQLContext } from './schema.js';

export const MAX_QUERY_LENGTH = 20_000;

interface GraphQLParams {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

export interface FormattedError {
  message: string;
  locations?: readonly { line: number; column: number }[];
  path?: readonly (string | number)[];
  extensions: Record<string, unknown>;
}

function refuse(status: number, code: string, message: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>): Reply {
  return { status, raw: { errors: [{ message, extensions: { code, ...extra } }] }, ...(headers ? { headers } : {}) };
}

/** A GraphQL error as answered: ApiErrors keep their code, status and details; nothing internal leaks. */
export function formatError(error: GraphQLError, requestId: string): FormattedError {
  const base = { ...(error.locations ? { locations: error.locations } : {}), ...(error.path ? { path: error.path } : {}) };
  const original = error.originalError;
  if (!original || original instanceof GraphQLError) {
    return { message: error.message, ...base, extensions: { code: 'BAD_USER_INPUT' } };
  }
  if (!(original instanceof ApiError)) logger.error('graphql resolver error', { requestId, error: original });
  const api = toApiError(original);
  return { message: api.message, ...base, extensions: { code: api.code, status: api.status, ...(api.details ? { details: api.details } : {}) } };
}

function paramsOf(req: ApiRequest): GraphQLParams | Reply {
  if (req.method === 'GET') {
    let variables: unknown;
    if (req.query.variables) {
      if (jsonDepth(req.query.variables) > MAX_JSON_DEPTH) return refuse(400, 'BAD_REQUEST', `variables must not nest more than ${MAX_JSON_DEPTH} levels`);
      try {
        variables = JSON.parse(req.query.variables);
      } catch {
        return refuse(400, 'BAD_REQUEST', 'variables must be a JSON object');
      }
    }
    return { query: req.query.query, variables, operationName: req.query.operationName };
  }
  return (req.body ?? {}) as GraphQLParams;
}

let connections: Set<string> | undefined;
let aggregates: Set<string> | undefined;

export async function runGraphQL(req: ApiRequest): Promise<Reply> {
  const params = paramsOf(req);
  if ('status' in params) return params as Reply;
  const { query, variables, operationName } = params as GraphQLParams;
  if (typeof query !== 'string' || query.trim() === '') return refuse(400, 'BAD_REQUEST', 'A GraphQL query string is required (query)');
  if (query.length > MAX_QUERY_LENGTH) return refuse(400, 'BAD_REQUEST', `The query is longer than ${MAX_QUERY_LENGTH} characters`);
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return refuse(400, 'BAD_REQUEST', 'variables must be a JSON object');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return refuse(400, 'BAD_REQUEST', 'operationName must be a string');

  const schema = graphqlSchema();
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch (error) {
    return { status: 400, raw: { errors: [{ message: (error as GraphQLError).message, ...((error as GraphQLError).locations ? { locations: (error as GraphQLError).locations } : {}), extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] } };
  }
  const operation = operationOf(document, operationName as string | undefined);
  if (!operation) return refuse(400, 'BAD_REQUEST', operationName ? `No operation named '${String(operationName)}'` : 'Several operations: name the one to run (operationName)');
  connections ??= new Set(allEntities().map((e) => namesOf(e).many));
  aggregates ??= new Set(allEntities().map((e) => namesOf(e).aggregate));
  const vars = (variables ?? {}) as Record<string, unknown>;
  const cost = measure(document, operation, vars, connections, aggregates);
  if (cost.depth > MAX_DEPTH) return refuse(400, 'QUERY_TOO_DEEP', `The query is nested ${cost.depth} levels deep; at most ${MAX_DEPTH} are allowed`, { depth: cost.depth, maxDepth: MAX_DEPTH });
  const invalid = validate(schema, document);
  if (invalid.length) {
    return { status: 400, raw: { errors: invalid.map((e) => ({ message: e.message, ...(e.locations ? { locations: e.locations } : {}), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })) } };
  }
  if (req.method === 'GET' && operation.operation !== 'query') {
    return refuse(405, 'METHOD_NOT_ALLOWED', `A ${operation.operation} must be sent with POST`, {}, { Allow: 'POST' });
  }
  if (cost.complexity > MAX_COMPLEXITY) {
    return refuse(400, 'QUERY_TOO_COMPLEX', `The query's complexity is ${cost.complexity}; at most ${MAX_COMPLEXITY} is allowed (each field counts 1, times the limit of the connection it is under)`, {
      complexity: cost.complexity,
      maxComplexity: MAX_COMPLEXITY,
    });
  }

  // Related records are read with the layouts loaded now, once for the request (the resolvers'
  // services load theirs: the same value while it is fresh).
  const contextValue: GraphQLContext = { req, auth: req.auth, loader: new RelatedLoader(req.auth, await loadLayouts()) };
  const result = await execute({ schema, document, variableValues: vars, operationName: operationName as string | undefined, contextValue });
  const errors = result.errors?.map((e) => formatError(e, req.requestId));
  // No data at all: the variables did not coerce (a request error).
  if (result.data === undefined) return { status: 400, raw: { errors } };
  return { status: 200, raw: { data: result.data, ...(errors?.length ? { errors } : {}) } };
}
