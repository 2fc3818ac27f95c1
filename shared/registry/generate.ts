/** The source of validators.generated.ts for the built-in definitions (bin/schemas.ts, and the test that it is current). */
import { loadDefinitions } from './index.js';
import { standaloneModule } from './schema-compiler.js';
import { bodySchema, validatorName, type Schema } from './schemas.js';

export async function generatedValidators(): Promise<string> {
  const schemas = new Map<string, Schema>();
  for (const entity of await loadDefinitions()) {
    for (const mode of ['create', 'update'] as const) schemas.set(validatorName(entity, mode), bodySchema(entity, mode));
  }
  return standaloneModule(schemas);
}
