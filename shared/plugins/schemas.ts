/**
 * The validators of the plugins' route schemas. `npm run schemas` writes validators.generated.ts:
 * an ajv standalone validator for every body schema, and the response schemas ajv compiled then
 * (responses are not validated at run time: their schema only has to be a valid JSON Schema, for
 * the API description). A schema is matched to its validator by its JSON text, so a declaration
 * changed since the file was written is never served by another schema's validator: its schema is
 * compiled by ajv (schema-compiler.ts), which is loaded only then.
 */
import type { LoadedDeclaration } from './declarations.js';
import type { SchemaValidator } from './schema-compiler.js';
import type { JsonSchema, PluginRouteDefinition } from './types.js';
import { precompiled, responseSchemas } from './validators.generated.js';

export type { SchemaValidator } from './schema-compiler.js';

/** The JSON text a schema is matched by: the declaration's own key order, as ajv reads it. */
export function schemaKey(schema: JsonSchema): string {
  return JSON.stringify(schema);
}

let bodies: Map<string, SchemaValidator> | undefined;
let responses: Set<string> | undefined;

/** The precompiled validator of this very schema, if `npm run schemas` wrote one. */
export function precompiledValidator(schema: JsonSchema): SchemaValidator | undefined {
  bodies ??= new Map(Object.values(precompiled as Record<string, { schema: string; validate: unknown }>).map((e) => [e.schema, e.validate as SchemaValidator]));
  return bodies.get(schemaKey(schema));
}

/** Whether ajv compiled this very schema when the precompiled module was written. */
export function isKnownValid(schema: JsonSchema): boolean {
  responses ??= new Set(responseSchemas);
  return responses.has(schemaKey(schema)) || precompiledValidator(schema) !== undefined;
}

/**
 * The body validator of every route that has a body schema, after checking that every schema of
 * the declarations is a valid JSON Schema: precompiled ones were when they were written, any
 * other is compiled by ajv here. Throws PluginError naming the file and the route.
 */
export async function routeBodyValidators(declarations: readonly LoadedDeclaration[]): Promise<Map<PluginRouteDefinition, SchemaValidator>> {
  const validators = new Map<PluginRouteDefinition, SchemaValidator>();
  let compile: typeof import('./schema-compiler.js').compilePluginSchema | undefined;
  for (const { definition, source } of declarations) {
    for (const route of definition.routes) {
      const at = `${route.method} ${route.path}`;
      if (route.body) {
        let validate = precompiledValidator(route.body);
        if (!validate) {
          compile ??= (await import('./schema-compiler.js')).compilePluginSchema;
          validate = compile(route.body, `${at} body`, source);
        }
        validators.set(route, validate);
      }
      if (route.response && !isKnownValid(route.response)) {
        compile ??= (await import('./schema-compiler.js')).compilePluginSchema;
        compile(route.response, `${at} response`, source);
      }
    }
  }
  return validators;
}
