/**
 * A plugin is plain data, like an entity definition: `plugins/<name>.plugin.ts` declares its
 * routes (`export default definePlugin({...})`), and `plugins/<name>.handlers.ts` exports the
 * functions those routes name. Only the declaration reaches the route table (and so every
 * family's bundle); the handler module is loaded by the `plugins` family alone.
 */
import type { ErrorCode } from '../errors.js';
import type { HttpMethod } from '../route-types.js';

/** required – a session or an API key; optional – credentials used when present; none – public. */
export type PluginAuth = 'required' | 'optional' | 'none';

/** A JSON Schema (draft 2020-12 subset that ajv compiles). */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface PluginRouteDefinition {
  /** Full path template under /api/v1, API Gateway syntax for parameters: /api/v1/ai/credits/{userId}. */
  path: string;
  method: Exclude<HttpMethod, 'OPTIONS'>;
  /** Name of the function exported by `<name>.handlers.ts` that serves the route. */
  handler: string;
  auth: PluginAuth;
  /** Every scope the caller needs (none: any authenticated caller). */
  scopes?: readonly string[];
  /** A limit of the route's own per caller, counted besides the general limit; window like 30s, 15m, 1h, 1d. */
  rateLimit?: { limit: number; window: string };
  /** JSON Schema of the request body: checked (and its defaults applied) before the handler runs. */
  body?: JsonSchema;
  /** JSON Schema of the response's `data`, for the API description. */
  response?: JsonSchema;
  /** One line for the API description. */
  summary?: string;
  /** More words for the API description. */
  description?: string;
  /** The operationId in the API description (default: one made of the method and the path). */
  operationId?: string;
  /** An example request body for the API description. */
  example?: unknown;
  /** The status a success answers, for the API description (default: 201 for POST, else 200). */
  status?: number;
  /** Codes of the error catalogue (shared/errors.ts) the handler may answer, for the API description. */
  errors?: readonly ErrorCode[];
}

export interface PluginDefinition {
  /** Lower-case name, the file's base name: `ai` for plugins/ai.plugin.ts. */
  name: string;
  description?: string;
  routes: readonly PluginRouteDefinition[];
}

/**
 * Types a declaration file's default export; the value is returned unchanged, its literal type
 * kept, so that PluginHandlers (shared/http/types.ts) can type each handler's body from its
 * route's schema.
 */
export function definePlugin<const T extends PluginDefinition>(definition: T): T {
  return definition;
}
