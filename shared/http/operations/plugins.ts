/**
 * What the plugins family runs: every declared route bound to its handler (the function of
 * `plugins/<name>.handlers.ts` the route names), behind the same middleware stack as the core
 * families. Before the handler: the route's scopes beyond the first (the stack checks the first)
 * and the body against the route's JSON Schema (422 VALIDATION_FAILED naming each field, the
 * schema's defaults filled in), by the validator `npm run schemas` precompiled for it (ajv
 * compiles only a schema it does not know, schemas.ts). Imported only by
 * functions/plugins/handler.ts and the local start-up check, so no other bundle carries plugin
 * handler code.
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { hasScope } from '../../scopes.js';
import { InsufficientPermissionsError, ValidationError } from '../../errors.js';
import {
  assertPluginDeclarations,
  customPluginDir,
  HANDLERS_SUFFIX,
  pluginDeclarations,
  pluginOperation,
  PluginError,
  routeBodyValidators,
  type PluginRouteDefinition,
  type SchemaValidator,
} from '../../plugins/index.js';
import { loadRegistry, type SchemaError } from '../../registry/index.js';
import { routeTable, routes } from '../../routes.js';
import type { Operations, StackOptions } from '../stack.js';
import type { ApiRequest, Operation } from '../types.js';

async function importHandlers(name: string): Promise<Record<string, unknown>> {
  const dir = customPluginDir();
  if (dir) return import(pathToFileURL(join(dir, `${name}${HANDLERS_SUFFIX}`)).href);
  // A glob import: esbuild bundles every handlers module into this (the plugins) bundle only.
  return import(`../../../plugins/${name}.handlers.ts`);
}

/** A field name for each ajv error, as the core validation names them. */
export function schemaErrorDetails(errors: readonly SchemaError[]): Record<string, string> {
  const details: Record<string, string> = {};
  for (const error of errors) {
    const path = error.instancePath.split('/').slice(1).join('.');
    let field = path || 'body';
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      field = path ? `${path}.${missing}` : missing;
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      field = path ? `${path}.${extra}` : extra;
      message = 'is not a known field';
    } else if (error.keyword === 'enum') {
      message = `must be one of ${((error.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
    }
    details[field] ??= message;
  }
  return details;
}

function bind(route: PluginRouteDefinition, handler: Operation, checkBody: SchemaValidator | undefined): Operation {
  const extraScopes = (route.scopes ?? []).slice(1);
  return async function pluginOperation(req: ApiRequest) {
    if (req.auth) for (const scope of extraScopes) if (!hasScope(req.auth.scopes, scope)) throw new InsufficientPermissionsError(scope);
    if (checkBody) {
      const body = req.body ?? {};
      if (!checkBody(body)) throw new ValidationError(schemaErrorDetails(checkBody.errors ?? []));
      req.body = body;
    }
    return handler(req);
  };
}

/**
 * Every plugin route bound to its handler. Throws PluginError naming the file for any problem:
 * a bad declaration, a clash with a core route or an entity, a handler that is not exported,
 * a schema that is not a valid JSON Schema.
 */
export async function loadPluginOperations(): Promise<Operations> {
  assertPluginDeclarations(routes);
  const slugs = new Set((await loadRegistry()).keys());
  // Precompiled validators (npm run schemas); ajv compiles only a schema they do not know.
  const bodyValidators = await routeBodyValidators(pluginDeclarations);
  const operations: Record<string, Operation> = {};
  for (const { definition, source } of pluginDeclarations) {
    const handlersSource = source.replace(/\.plugin\.ts$/, HANDLERS_SUFFIX);
    let module: Record<string, unknown>;
    try {
      module = await importHandlers(definition.name);
    } catch (error) {
      throw new PluginError(`Plugin ${source}: its handlers module ${handlersSource} could not be loaded: ${(error as Error).message}`);
    }
    for (const route of definition.routes) {
      const first = route.path.split('/')[3];
      if (slugs.has(first)) throw new PluginError(`Plugin ${source} is invalid: ${route.path} is under the entity '${first}'`);
      const handler = module[route.handler];
      if (typeof handler !== 'function') {
        throw new PluginError(`Plugin ${source} is invalid: ${route.method} ${route.path} names handler '${route.handler}', which ${handlersSource} does not export as a function`);
      }
      operations[pluginOperation(definition, route)] = bind(route, handler as Operation, bodyValidators.get(route));
    }
  }
  return operations;
}

/** Plugin routes with auth 'optional' serve anonymous callers; the handler sees req.auth undefined. */
export const pluginStackOptions: StackOptions = {
  routes: routeTable,
  isPublicRead: (req) => req.route.auth === 'optional',
};
