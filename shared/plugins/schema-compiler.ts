/**
 * ajv for the plugins' route schemas: the options every plugin schema is compiled with, at run
 * time for a schema that `npm run schemas` has not precompiled (a plugin changed since, or read
 * from PLUGIN_DIR) and when the precompiled module is written. Loaded only when one of those is
 * needed, so a cold start whose schemas are all precompiled never evaluates ajv.
 */
import { createAjv, type FormatName } from '../registry/schema-compiler.js';
import type { Validator } from '../registry/index.js';
import { PluginError } from './validate.js';
import type { JsonSchema } from './types.js';

/** The formats a plugin schema may use. */
export const PLUGIN_FORMATS: readonly FormatName[] = ['date-time', 'uuid', 'email', 'uri'];

/** Plugin bodies get their schema's defaults filled in (entity bodies do not). */
export const PLUGIN_USE_DEFAULTS = true;

const ajv = createAjv(false, PLUGIN_FORMATS, PLUGIN_USE_DEFAULTS);

/** A compiled plugin body validator: the registry's Validator, `errors` set after a failed call. */
export type SchemaValidator = Validator;

/** Compiles a plugin route's schema, or throws the PluginError naming the file and the route. */
export function compilePluginSchema(schema: JsonSchema, at: string, source: string): SchemaValidator {
  try {
    return ajv.compile(schema) as SchemaValidator;
  } catch (error) {
    throw new PluginError(`Plugin ${source} is invalid: ${at} is not a valid JSON Schema (${(error as Error).message})`);
  }
}
