/**
 * ajv for the plugins' route schemas: the options every plugin schema is compiled with, at run
 * time for a schema that `npm run schemas` has not precompiled (a plugin changed since, or read
 * from PLUGIN_DIR) and when the precompiled module is written. Loaded only when one of those is
 * needed, so a cold start whose schemas are all precompiled never evaluates ajv.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { PluginError } from './validate.js';
import type { JsonSchema } from './types.js';

/** The formats a plugin schema may use. */
export const PLUGIN_FORMATS = ['date-time', 'uuid', 'email', 'uri'] as const;

/** Every error at once, the schema's defaults filled in. */
export const PLUGIN_AJV_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true, useDefaults: true } as const;

const ajv = new Ajv(PLUGIN_AJV_OPTIONS);
addFormats.default(ajv, [...PLUGIN_FORMATS]);

/** A validator compiled by ajv; `errors` are set after a failed call. */
export type SchemaValidator = ((data: unknown) => boolean) & { errors?: import('ajv').ErrorObject[] | null };

/** Compiles a plugin route's schema, or throws the PluginError naming the file and the route. */
export function compilePluginSchema(schema: JsonSchema, at: string, source: string): SchemaValidator {
  try {
    return ajv.compile(schema) as SchemaValidator;
  } catch (error) {
    throw new PluginError(`Plugin ${source} is invalid: ${at} is not a valid JSON Schema (${(error as Error).message})`);
  }
}
