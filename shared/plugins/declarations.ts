/**
 * The plugin declarations (`plugins/<name>.plugin.ts`, plain data), loaded once per process
 * before the route table is built, and the routes they add to it.
 *
 * Where the files come from, as for the entity registry:
 * - from source (`npm start`, tests, `cdk synth`): the plugins/ directory is read, or the
 *   directory PLUGIN_DIR names;
 * - in a Lambda bundle there is no directory: esbuild bundles every declaration file through the
 *   glob import below (declarations only: they are data, and never import handler code), and the
 *   names come from PLUGIN_FILES, which the CDK stack sets from `pluginFileNames()` at synth.
 *
 * A declaration with a problem does not throw here (this module is evaluated while the route
 * table loads, where a throw would end the process with a stack trace): its routes are left out
 * and `assertPluginDeclarations()` reports it in one line — start-up (infra/local), the plugins
 * family's cold start and `cdk synth` call it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Route } from '../route-types.js';
import type { PluginDefinition, PluginRouteDefinition } from './types.js';
import { PluginError, definitionProblems, windowSeconds } from './validate.js';

export { PluginError } from './validate.js';

export const PLUGIN_FILES_ENV = 'PLUGIN_FILES';
export const PLUGIN_DIR_ENV = 'PLUGIN_DIR';
export const DECLARATION_SUFFIX = '.plugin.ts';
export const HANDLERS_SUFFIX = '.handlers.ts';

export interface LoadedDeclaration {
  definition: PluginDefinition;
  /** Where it came from, for messages: plugins/ai.plugin.ts. */
  source: string;
}

/** The repository's plugins/ directory, when running from source. */
export function pluginsDirectory(): string | undefined {
  try {
    const dir = fileURLToPath(new URL('../../plugins/', import.meta.url));
    return existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Plugin names of a directory: every `<name>.plugin.ts` (not starting with _ or .). */
export function pluginFileNames(dir: string | undefined = process.env[PLUGIN_DIR_ENV] || pluginsDirectory()): string[] {
  if (!dir || !existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(DECLARATION_SUFFIX) && !/^[_.]/.test(f))
    .map((f) => f.slice(0, -DECLARATION_SUFFIX.length))
    .sort();
}

/** The directory plugins are read from when it is not the repository's own (tests, users). */
export function customPluginDir(): string | undefined {
  return process.env[PLUGIN_FILES_ENV] === undefined ? process.env[PLUGIN_DIR_ENV] || undefined : undefined;
}

export function declarationSource(name: string): string {
  const dir = customPluginDir();
  return dir ? join(dir, `${name}${DECLARATION_SUFFIX}`) : `plugins/${name}${DECLARATION_SUFFIX}`;
}

async function importDeclaration(name: string): Promise<unknown> {
  const dir = customPluginDir();
  if (dir) return import(pathToFileURL(join(dir, `${name}${DECLARATION_SUFFIX}`)).href);
  // A glob import: esbuild bundles every declaration file and picks one by name at run time.
  return import(`../../plugins/${name}.plugin.ts`);
}

function listedNames(): string[] {
  const listed = process.env[PLUGIN_FILES_ENV];
  if (listed !== undefined) return listed.split(',').map((s) => s.trim()).filter(Boolean);
  return pluginFileNames();
}

async function loadDeclarations(): Promise<{ declarations: LoadedDeclaration[]; error?: PluginError }> {
  const declarations: LoadedDeclaration[] = [];
  for (const name of listedNames()) {
    const source = declarationSource(name);
    let module: { default?: unknown };
    try {
      module = (await importDeclaration(name)) as { default?: unknown };
    } catch (error) {
      return { declarations, error: new PluginError(`Plugin ${source} could not be loaded: ${(error as Error).message}`) };
    }
    const problems = definitionProblems(module.default, name);
    if (problems.length > 0) {
      return { declarations, error: new PluginError(`Plugin ${source} is invalid: ${problems.join('; ')}`, problems) };
    }
    declarations.push({ definition: module.default as PluginDefinition, source });
  }
  return { declarations };
}

const loaded = await loadDeclarations();

/** The valid declarations, in file-name order (all of them, unless `pluginLoadError()` is set). */
export const pluginDeclarations: readonly LoadedDeclaration[] = loaded.error ? [] : loaded.declarations;

export function pluginLoadError(): PluginError | undefined {
  return loaded.error;
}

const AUTH_MODES = { required: 'required', optional: 'optional', none: 'public' } as const;

/** A plugin route's operation name: handlers are named within their plugin, and the plugins family serves every plugin's. */
export function pluginOperation(plugin: Pick<PluginDefinition, 'name'>, route: Pick<PluginRouteDefinition, 'handler'>): string {
  return `${plugin.name}.${route.handler}`;
}

/** One declared route as a route-table entry of the `plugins` family. */
export function toRoute(plugin: PluginDefinition, route: PluginRouteDefinition): Route {
  const limit = route.rateLimit;
  return {
    method: route.method,
    path: route.path,
    operation: pluginOperation(plugin, route),
    family: 'plugins',
    auth: AUTH_MODES[route.auth],
    // The first scope goes through the stack's scope check; the plugins family checks the others.
    ...(route.scopes?.length ? { scope: route.scopes[0] } : {}),
    ...(limit ? { rateLimit: { name: `plugin:${plugin.name}.${route.handler}`, limit: limit.limit, windowSeconds: windowSeconds(limit.window)! } } : {}),
    plugin: plugin.name,
    ...(route.errors?.length ? { errors: route.errors } : {}),
    ...(route.summary ? { summary: route.summary } : {}),
    ...(route.body ? { body: route.body } : {}),
  };
}

/** The routes every plugin adds to the route table. */
export const pluginRoutes: readonly Route[] = pluginDeclarations.flatMap(({ definition }) => definition.routes.map((r) => toRoute(definition, r)));

/**
 * Throws the first problem of the declarations, or a route that takes a core route's place
 * (same method and path, or a path under a core route's first segment).
 */
export function assertPluginDeclarations(coreRoutes: readonly Route[]): void {
  if (loaded.error) throw loaded.error;
  const core = coreRoutes.filter((r) => r.family !== 'plugins');
  const coreKeys = new Set(core.map((r) => `${r.method} ${r.path}`));
  const coreSegments = new Set(core.map((r) => r.path.split('/')[3]).filter((s) => s && !s.startsWith('{')));
  const seen = new Map<string, string>();
  for (const { definition, source } of pluginDeclarations) {
    for (const route of definition.routes) {
      const key = `${route.method} ${route.path}`;
      if (coreKeys.has(key)) throw new PluginError(`Plugin ${source} is invalid: ${key} is a core route`);
      const first = route.path.split('/')[3];
      if (coreSegments.has(first)) throw new PluginError(`Plugin ${source} is invalid: ${route.path} is under /api/v1/${first}, which belongs to the core API`);
      const other = seen.get(key);
      if (other) throw new PluginError(`Plugin ${source} is invalid: ${key} is also declared by ${other}`);
      seen.set(key, source);
    }
  }
}

/** Resources named by plugin scopes (`greetings` of greetings:write), which API keys may then be given. */
export function pluginScopeResources(): string[] {
  const resources = new Set<string>();
  for (const { definition } of pluginDeclarations) {
    for (const route of definition.routes) for (const scope of route.scopes ?? []) if (scope.includes(':')) resources.add(scope.split(':')[0]);
  }
  return [...resources];
}

/** The declaration of a plugin route (its body and response schemas, summary), for the API description. */
export function pluginRouteDefinition(method: string, path: string): PluginRouteDefinition | undefined {
  for (const { definition } of pluginDeclarations) {
    const route = definition.routes.find((r) => r.method === method && r.path === path);
    if (route) return route;
  }
  return undefined;
}
