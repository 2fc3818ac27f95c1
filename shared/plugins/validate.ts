/**
 * Declaration checks, run when the plugins load: a declaration with a problem stops start-up
 * (npm start, a Lambda cold start, cdk synth) with one line naming the file and every problem.
 */
import { catalogueEntry } from '../errors.js';
import type { PluginDefinition, PluginRouteDefinition } from './types.js';

export class PluginError extends Error {
  readonly problems: string[];
  constructor(message: string, problems: string[] = []) {
    super(message);
    this.name = 'PluginError';
    this.problems = problems;
  }
}

const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'];
const AUTH = ['required', 'optional', 'none'];
const NAME = /^[a-z][a-z0-9-]{0,39}$/;
const HANDLER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const SEGMENT = /^([a-z0-9][a-z0-9._-]*|\{[A-Za-z][A-Za-z0-9]*\})$/;
const SCOPE = /^(\*|read|write|delete|[a-z][a-z0-9-]*:(read|write|delete|\*))$/;
const WINDOW = /^([1-9][0-9]{0,5})(s|m|h|d)$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
const DEFINITION_KEYS = new Set(['name', 'description', 'routes']);
const ROUTE_KEYS = new Set(['path', 'method', 'handler', 'auth', 'scopes', 'rateLimit', 'body', 'response', 'summary', 'description', 'operationId', 'example', 'status', 'errors']);
export const PLUGIN_PATH_PREFIX = '/api/v1/';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Seconds of a window such as 30s, 15m, 1h, 1d; undefined when it is not one. */
export function windowSeconds(window: unknown): number | undefined {
  const match = typeof window === 'string' ? WINDOW.exec(window) : null;
  return match ? Number(match[1]) * UNIT_SECONDS[match[2]] : undefined;
}

function checkRoute(route: unknown, at: string, problems: string[]): void {
  if (!isObject(route)) {
    problems.push(`${at}: must be an object`);
    return;
  }
  for (const key of Object.keys(route)) if (!ROUTE_KEYS.has(key)) problems.push(`${at}: unknown key '${key}'`);
  const { path, method, handler, auth, scopes, rateLimit, body, response, errors, description, operationId, status } = route;
  if (typeof path !== 'string' || !path.startsWith(PLUGIN_PATH_PREFIX)) {
    problems.push(`${at}.path: must be a string starting with ${PLUGIN_PATH_PREFIX}`);
  } else {
    const segments = path.slice(PLUGIN_PATH_PREFIX.length).split('/');
    if (segments.some((s) => !SEGMENT.test(s))) problems.push(`${at}.path: segments are lower-case letters, digits, . _ - or a {parameter}`);
    else if (segments[0].startsWith('{')) problems.push(`${at}.path: the first segment after ${PLUGIN_PATH_PREFIX} must be fixed text, not a parameter`);
  }
  if (typeof method !== 'string' || !METHODS.includes(method)) problems.push(`${at}.method: must be one of ${METHODS.join(', ')}`);
  if (typeof handler !== 'string' || !HANDLER.test(handler)) problems.push(`${at}.handler: must name an exported function of the plugin's handlers module`);
  if (typeof auth !== 'string' || !AUTH.includes(auth)) problems.push(`${at}.auth: must be one of ${AUTH.join(', ')}`);
  if (scopes !== undefined) {
    if (!Array.isArray(scopes)) problems.push(`${at}.scopes: must be an array of scopes`);
    else for (const scope of scopes) if (typeof scope !== 'string' || !SCOPE.test(scope)) problems.push(`${at}.scopes: '${String(scope)}' is not a scope (<resource>:<read|write|delete|*>, read, write, delete or *)`);
    if (Array.isArray(scopes) && scopes.length > 0 && auth === 'none') problems.push(`${at}.scopes: a route with auth 'none' cannot require scopes`);
  }
  if (rateLimit !== undefined) {
    if (!isObject(rateLimit)) problems.push(`${at}.rateLimit: must be {limit, window}`);
    else {
      if (typeof rateLimit.limit !== 'number' || !Number.isInteger(rateLimit.limit) || rateLimit.limit < 0) problems.push(`${at}.rateLimit.limit: must be a non-negative integer (0 turns it off)`);
      if (windowSeconds(rateLimit.window) === undefined) problems.push(`${at}.rateLimit.window: must be a number and a unit s, m, h or d (e.g. 1h)`);
      for (const key of Object.keys(rateLimit)) if (key !== 'limit' && key !== 'window') problems.push(`${at}.rateLimit: unknown key '${key}'`);
    }
  }
  if (body !== undefined) {
    if (!isObject(body)) problems.push(`${at}.body: must be a JSON Schema object`);
    else if (method === 'GET') problems.push(`${at}.body: a GET route has no body`);
  }
  if (response !== undefined && !isObject(response)) problems.push(`${at}.response: must be a JSON Schema object`);
  if (description !== undefined && typeof description !== 'string') problems.push(`${at}.description: must be a string`);
  if (operationId !== undefined && (typeof operationId !== 'string' || !HANDLER.test(operationId))) problems.push(`${at}.operationId: must be a name of letters and digits`);
  if (status !== undefined && (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 299)) problems.push(`${at}.status: must be a success status (200 to 299)`);
  if (errors !== undefined) {
    if (!Array.isArray(errors)) problems.push(`${at}.errors: must be an array of error codes`);
    else for (const code of errors) if (typeof code !== 'string' || !catalogueEntry(code)) problems.push(`${at}.errors: '${String(code)}' is not a code of shared/errors.ts`);
  }
}

/** Problems of one declaration on its own (schemas are compiled by the plugins family). */
export function definitionProblems(definition: unknown, fileName: string): string[] {
  const problems: string[] = [];
  if (!isObject(definition)) return ['the default export must be a plugin object (export default definePlugin({...}))'];
  for (const key of Object.keys(definition)) if (!DEFINITION_KEYS.has(key)) problems.push(`unknown key '${key}'`);
  const { name, routes } = definition as Partial<PluginDefinition>;
  if (typeof name !== 'string' || !NAME.test(name)) problems.push('name: must be lower-case letters, digits or -, starting with a letter');
  else if (name !== fileName) problems.push(`name: '${name}' must match the file name '${fileName}'`);
  if (!Array.isArray(routes) || routes.length === 0) problems.push('routes: must be a non-empty array');
  else {
    routes.forEach((route, i) => checkRoute(route, `routes[${i}]`, problems));
    const seen = new Set<string>();
    for (const route of routes as PluginRouteDefinition[]) {
      const key = `${route?.method} ${route?.path}`;
      if (seen.has(key)) problems.push(`routes: ${key} is declared twice`);
      seen.add(key);
    }
  }
  return problems;
}
