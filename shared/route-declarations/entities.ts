/**
 * The entities family's routes: the API's index, then the registered entities, after every static
 * path of the other families, as SPEC.md orders them. Reads are 'optional' so that public entities
 * answer anonymous callers (the family decides: shared/http/operations/entities.ts isPublicRead /
 * scopeApplies); writes need a caller. The API description of the {entity} routes is each
 * entity's own (shared/openapi/entities.ts).
 */
import type { QueryParameter, RouteDocs } from '../route-types.js';
import { BODY, LIST, STRING, V1, familyRoutes } from './declare.js';

/** The aggregate's own parameters (each entity's examples: shared/openapi/entities.ts); LIST's filters (filter, field=value, search, startDate, endDate, dateField) are each entity's there too. */
const AGGREGATE_QUERY: readonly QueryParameter[] = [
  { name: 'count', description: "Count the records of each group (`count`, `count=` or `count=*`); implied when no other function is asked.", schema: STRING },
  { name: 'sum', description: 'Comma-separated number fields to sum (0 for a group without values).', schema: STRING },
  { name: 'avg', description: 'Comma-separated number fields to average (null for a group without values).', schema: STRING },
  { name: 'min', description: 'Comma-separated number, date or date-time fields: their smallest value per group.', schema: STRING },
  { name: 'max', description: 'Comma-separated number, date or date-time fields: their largest value per group.', schema: STRING },
  { name: 'groupBy', description: 'Up to two fields to group by (enum, boolean, reference, strings of at most 200 characters).', schema: STRING },
  { name: 'interval', description: 'Group by the UTC day, ISO week (its Monday) or month (its first day) of `dateField`.', schema: { type: 'string', enum: ['day', 'week', 'month'] } },
];

export const entitiesRoutes = /* @__PURE__ */ familyRoutes('entities', [
  // The API's index: the entities the caller may use, with their paths and links (shared/http/operations/api-index.ts).
  {
    method: 'GET',
    path: V1,
    operation: 'getApiIndex',
    auth: 'optional',
    summary: 'The entities you may use',
    response: 'ApiIndex',
  },
  { method: 'GET', path: `${V1}/{entity}`, operation: 'list', auth: 'optional', scope: '{entity}:read', errors: [...LIST, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'List records' },
  { method: 'POST', path: `${V1}/{entity}`, operation: 'create', auth: 'required', scope: '{entity}:write', errors: [...BODY, 'UNIQUE_VIOLATION', 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Create a record' },
  { method: 'OPTIONS', path: `${V1}/{entity}`, operation: 'describe', auth: 'optional', errors: ['ENTITY_NOT_FOUND'], summary: 'Describe an entity' },
  // Bulk update and delete: shared/entities/bulk.ts.
  { method: 'PATCH', path: `${V1}/{entity}`, operation: 'bulkUpdate', auth: 'required', scope: '{entity}:write', errors: [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Update many records' },
  { method: 'DELETE', path: `${V1}/{entity}`, operation: 'bulkDelete', auth: 'required', scope: '{entity}:delete', errors: [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Delete many records' },
  // Aggregates over what the caller could list (shared/entities/aggregate.ts); a static segment wins over {id}.
  {
    method: 'GET',
    path: `${V1}/{entity}/aggregate`,
    operation: 'aggregate',
    auth: 'optional',
    scope: '{entity}:read',
    errors: [...LIST, 'AGGREGATE_TOO_LARGE', 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'],
    summary: 'Count, sum, average, min and max of records, by group',
    query: AGGREGATE_QUERY,
  },
  { method: 'GET', path: `${V1}/{entity}/deleted`, operation: 'listDeleted', auth: 'required', scope: '{entity}:read', errors: ['INVALID_REQUEST', 'VALIDATION_FAILED', 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'List the deleted records that can be restored' },
  { method: 'GET', path: `${V1}/{entity}/{id}`, operation: 'read', auth: 'optional', scope: '{entity}:read', errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Read a record' },
  {
    method: 'PATCH',
    path: `${V1}/{entity}/{id}`,
    operation: 'update',
    auth: 'required',
    scope: '{entity}:write',
    errors: [...BODY, 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT', 'UNIQUE_VIOLATION', 'PRECONDITION_FAILED'],
    summary: 'Update a record',
  },
  {
    method: 'DELETE',
    path: `${V1}/{entity}/{id}`,
    operation: 'delete',
    auth: 'required',
    scope: '{entity}:delete',
    errors: ['INVALID_REQUEST', 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT', 'PRECONDITION_FAILED'],
    summary: 'Delete a record',
  },
  // History (shared/entities/history.ts): static segments, so they win over {child}.
  { method: 'GET', path: `${V1}/{entity}/{id}/revisions`, operation: 'listRevisions', auth: 'optional', scope: '{entity}:read', errors: ['INVALID_REQUEST', 'VALIDATION_FAILED', 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: "List a record's revisions" },
  { method: 'GET', path: `${V1}/{entity}/{id}/revisions/{revision}`, operation: 'readRevision', auth: 'optional', scope: '{entity}:read', errors: ['VALIDATION_FAILED', 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'], summary: 'Read a record as it stood after a revision' },
  {
    method: 'POST',
    path: `${V1}/{entity}/{id}/restore`,
    operation: 'restoreRecord',
    auth: 'required',
    scope: '{entity}:write',
    errors: [...BODY, 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT', 'UNIQUE_VIOLATION', 'PRECONDITION_FAILED'],
    summary: 'Restore a record to a revision',
  },
  {
    method: 'POST',
    path: `${V1}/operations/{operationId}/undo`,
    operation: 'undoOperation',
    auth: 'required',
    errors: ['INVALID_REQUEST', 'NOT_FOUND'],
    summary: 'Undo a bulk update, bulk delete or import',
  },
  // Child collections: the parent needs read; the child's own scopes are checked by the family.
  { method: 'GET', path: `${V1}/{entity}/{id}/{child}`, operation: 'listChildren', auth: 'optional', scope: '{entity}:read', errors: [...LIST, 'ENTITY_NOT_FOUND', 'NOT_FOUND'], summary: 'List the records of a relation' },
  { method: 'POST', path: `${V1}/{entity}/{id}/{child}`, operation: 'createChild', auth: 'required', scope: '{entity}:read', errors: [...BODY, 'ENTITY_NOT_FOUND', 'NOT_FOUND', 'UNIQUE_VIOLATION'], summary: 'Create a record of a relation' },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function entitiesDocs(): RouteDocs<(typeof entitiesRoutes)[number]> {
  return {
    getApiIndex: ({ json, envelopeOf, ref }) => ({
      tag: 'Docs',
      description:
        "Where to start: the entities the caller may use (only public ones without credentials), each with its path, the operations open to the caller and links to its OPTIONS description and its section of this reference; then links to the API's other parts.",
      responses: {
        200: json(envelopeOf(ref('ApiIndex'), { message: true }), 'The index.', {
          example: {
            success: true,
            data: {
              name: 'Entity Record API',
              version: 'v1',
              entities: [{ name: 'task', slug: 'tasks', path: '/api/v1/tasks', operations: ['list', 'read', 'create', 'update', 'delete'], public: false, links: { options: '/api/v1/tasks', docs: '/api/docs#/tasks' } }],
              links: { docs: '/api/docs', openapi: '/api/v1/openapi.json' },
            },
          },
        }),
      },
      errors: [],
    }),
    undoOperation: ({ json, envelopeOf }) => ({
      tag: 'History',
      description:
        'Reverts every record a bulk update, bulk delete or import (its answer\'s `operationId`) wrote, each put back as it stood before as a restore by the caller (update scope; delete scope to remove an imported record or bring back a deleted one). A record changed since by anything else is listed in `conflicts` and left alone. A second undo reverts nothing. Another tenant\'s operation, or an expired one, is 404.',
      responses: {
        200: json(
          envelopeOf({ type: 'object', required: ['reverted', 'conflicts'], properties: { reverted: { type: 'integer' }, conflicts: { type: 'array', items: { type: 'string' } } } }),
          'What was reverted, and the ids left alone.',
          { example: { success: true, data: { reverted: 44, conflicts: ['tsk_0VcFmPHIhdvqnRPSgiRWRH'] } } },
        ),
      },
      errors: [],
    }),
  };
}
