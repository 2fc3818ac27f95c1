/**
 * The plugins area's front door: the plugin declarations (loaded once per process, with the routes
 * they add to the route table and the scopes they name), their route validators, and the types a
 * declaration is written with.
 */
export {
  assertPluginDeclarations,
  customPluginDir,
  HANDLERS_SUFFIX,
  PluginError,
  pluginDeclarations,
  pluginOperation,
  pluginRouteDefinition,
  pluginRoutes,
  pluginScopeResources,
} from './declarations.js';
export { routeBodyValidators, type SchemaValidator } from './schemas.js';
export type { PluginDefinition, PluginRouteDefinition } from './types.js';
