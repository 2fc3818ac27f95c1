/**
 * How a family declares its routes: `familyRoutes('keys', [...])` gives each declaration its
 * family, and keeps each one's literal type (its operation's name, its body schema), from which
 * the compiler checks the family's operations map (FamilyOperations, shared/http/types.ts) and
 * types each operation's body.
 */
import type { Family, QueryParameter, RouteDeclaration } from '../route-types.js';

export function familyRoutes<const F extends Family, const R extends readonly RouteDeclaration[]>(family: F, routes: R): readonly (R[number] & { family: F })[] {
  return routes.map((route) => ({ ...route, family }));
}

/** Codes that go together: a JSON body, a listing query. */
export const BODY = ['INVALID_REQUEST', 'VALIDATION_FAILED'] as const;
export const LIST = ['INVALID_REQUEST', 'INVALID_FILTER', 'INVALID_SORT'] as const;

export const V1 = '/api/v1';

/** Schemas the descriptions share. */
export const STRING = { type: 'string' } as const;
export const OBJECT = { type: 'object', additionalProperties: true } as const;

/** The query of a paged listing (an API key's audit, a webhook's deliveries). */
export const PAGE_QUERY: readonly QueryParameter[] = [
  { name: 'limit', description: 'At most 100.', schema: { type: 'integer', minimum: 1, default: 100 } },
  { name: 'cursor', description: "From the previous page's Link.", schema: STRING },
];
