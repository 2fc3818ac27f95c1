/**
 * The URLs the API hands out (pagination Link, Location, upload URLs): one of the API's own paths
 * behind the base path (stage, custom domain mapping) and origin the client used. How a request's
 * base path and origin are found is shared/http/urls.ts (`requestBase`).
 */
/** The path a client uses for one of the API's own paths (`/api/v1/tasks?page=2` → `/prod/api/v1/tasks?page=2`). */
export function apiPath(base: { basePath?: string }, ownPath: string): string {
  if (!ownPath.startsWith('/')) throw new Error(`apiPath: '${ownPath}' must start with '/'`);
  return `${base.basePath ?? ''}${ownPath}`;
}

/** The absolute URL of one of the API's own paths (for Location and anything handed to another client). */
export function apiUrl(base: { basePath?: string; origin?: string }, ownPath: string): string {
  return `${base.origin ?? ''}${apiPath(base, ownPath)}`;
}
