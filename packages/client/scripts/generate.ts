/**
 * Regenerates src/schema.generated.ts from the API's own OpenAPI document (built from the route table and
 * the entity registry, as the running API serves it). Run after changing routes or entities:
 * `npm run client:generate` at the repository root.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateSchemaSource } from './schema-source.js';

const target = fileURLToPath(new URL('../src/schema.generated.ts', import.meta.url));
writeFileSync(target, await generateSchemaSource());
console.log(`wrote ${target}`);
