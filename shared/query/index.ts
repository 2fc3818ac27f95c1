/**
 * The query area's front door: a list's query string parsed against an entity (parameters,
 * fields, filters, sort), the plan that reads it, and its cursors. Used by the entity service's
 * listing and by the OpenAPI document (which names the parameters).
 */
export { decodeQueryCursor, encodeQueryCursor, type QueryCursor } from './cursor.js';
export { buildFilterExpression } from './expression.js';
export { searchableFields, valueAt } from './fields.js';
export { matchesAll, matchesSearch, OPERATORS } from './filter.js';
export {
  booleanParam,
  DEFAULT_LIMIT,
  list,
  MAX_IDS,
  MAX_LIMIT,
  parseFields,
  parseListQuery,
  parsePagination,
  refuseUnknownParameters,
  RESERVED_PARAMETERS,
  type QuerySpec,
} from './params.js';
export { planQuery, type ListPlan } from './plan.js';
export { comparePositions, compareText, compareValues, isDefaultOrder, positionOf, type Position } from './sort.js';
