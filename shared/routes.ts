/**
 * THE route table: method + path template → operation family (one Lambda each).
 * infra/aws builds API Gateway resources from it; infra/local routes with it; the middleware
 * stack reads auth mode, scope and rate limit from it. Never a second list of routes.
 *
 * The API's own routes are in core-routes.ts (each family's declared in route-declarations/);
 * the plugins' (their declaration files, shared/plugins/declarations.ts) go in after GraphQL.
 */
import { afterPlugins, beforePlugins, preflightRoute, routeLookup, type Family, type Route, type RouteLookup } from './core-routes.js';
import { pluginRoutes } from './plugins/declarations.js';

export * from './core-routes.js';

export const routes: readonly Route[] = [...beforePlugins, ...pluginRoutes, ...afterPlugins];

export const families: readonly Family[] = [...new Set(routes.map((r) => r.family))];

/** Every route, the plugins' included: how the plugins family (and the local gateway) resolve a request. */
export const routeTable: RouteLookup = routeLookup(routes);

/** The route behind an API Gateway event's httpMethod + resource. */
export function findRoute(method: string, resource: string): Route | undefined {
  return routeTable.findRoute(method, resource);
}

/** Every path template, each with its methods: what API Gateway needs as resources. */
export function pathTemplates(): Map<string, Route[]> {
  const paths = new Map<string, Route[]>();
  for (const route of routes) {
    const list = paths.get(route.path) ?? [];
    list.push(route);
    paths.set(route.path, list);
  }
  return paths;
}

/** The family serving a path template (its first route's): where other methods on it go. */
export function familyOfPath(path: string): Family | undefined {
  return routes.find((r) => r.path === path)?.family;
}

export function preflightRoutes(): Route[] {
  const withOptions = new Set(routes.filter((r) => r.method === 'OPTIONS').map((r) => r.path));
  return [...pathTemplates().keys()].filter((p) => !withOptions.has(p)).map((p) => preflightRoute(routes, p)!);
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

interface CompiledPath {
  path: string;
  segments: string[];
}

const compiled: CompiledPath[] = [...pathTemplates().keys()].map((path) => ({ path, segments: path.split('/').slice(1) }));

function matchSegments(template: string[], actual: string[]): Record<string, string> | undefined {
  if (template.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const t = template[i];
    if (t.startsWith('{') && t.endsWith('}')) {
      if (!actual[i]) return undefined;
      params[t.slice(1, -1)] = actual[i];
    } else if (t !== actual[i]) {
      return undefined;
    }
  }
  return params;
}

/** Segment by segment, a static segment beats a parameter (API Gateway's precedence). */
function specificity(a: CompiledPath, b: CompiledPath): number {
  for (let i = 0; i < a.segments.length; i++) {
    const aParam = a.segments[i].startsWith('{');
    const bParam = b.segments[i].startsWith('{');
    if (aParam !== bParam) return aParam ? 1 : -1;
  }
  return 0;
}

/**
 * Resolves a concrete path as API Gateway would: the most specific template that matches the
 * path, then the method on it. `undefined` when no template matches; `route: undefined` when the
 * template exists but not with this method.
 */
export function matchPath(method: string, rawPath: string): { path: string; params: Record<string, string>; route?: Route } | undefined {
  // The reference page answers with or without a trailing slash (people type both). Elsewhere a
  // trailing slash stays unknown: /api/v1/files/%2e%2e, resolved by URL to /api/v1/, is a 404.
  const path = rawPath === '/api/docs/' ? '/api/docs' : rawPath;
  const actual = path.split('/').slice(1).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  const candidates = compiled
    .map((c) => ({ c, params: matchSegments(c.segments, actual) }))
    .filter((m): m is { c: CompiledPath; params: Record<string, string> } => m.params !== undefined)
    .sort((x, y) => specificity(x.c, y.c));
  const best = candidates[0];
  if (!best) return undefined;
  return { path: best.c.path, params: best.params, route: findRoute(method, best.c.path) };
}
