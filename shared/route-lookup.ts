/**
 * How a request's route is found among routes: by method and path template, with CORS
 * preflights for paths without an OPTIONS route. Apart from the route table, so that a family
 * that serves its own few routes (the health check, shared/http/public-stack.ts) loads none of
 * the others' declarations.
 */
import type { Route } from './route-types.js';

export function routeKey(method: string, path: string): string {
  return `${method} ${path}`;
}

/** Routes and the route behind an API Gateway event's httpMethod + resource. */
export interface RouteLookup {
  readonly routes: readonly Route[];
  findRoute(method: string, resource: string): Route | undefined;
}

/**
 * The lookup of `routes`. Paths without an OPTIONS route still answer CORS preflights: the
 * request goes to the family of the path's first route, and the cors middleware answers it
 * before authentication.
 */
export function routeLookup(routes: readonly Route[]): RouteLookup {
  const byKey = new Map(routes.map((r) => [routeKey(r.method, r.path), r]));
  return {
    routes,
    findRoute(method, resource) {
      return byKey.get(routeKey(method, resource)) ?? (method === 'OPTIONS' ? preflightRoute(routes, resource) : undefined);
    },
  };
}

/** The preflight (OPTIONS) route of `path`: public, served by the family of the path's first route. */
export function preflightRoute(routes: readonly Route[], path: string): Route | undefined {
  const first = routes.find((r) => r.path === path);
  return first && { method: 'OPTIONS', path, operation: 'preflight', family: first.family, auth: 'public' };
}
