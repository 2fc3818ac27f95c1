/**
 * `npm run schemas`: writes shared/registry/validators.generated.ts, the ajv standalone validators
 * of every built-in entity's create and update body, so that no function compiles a schema at
 * cold start. Run it after changing a definition in shared/registry/entities/ (a unit test
 * fails while the file is out of date; until then the changed entity is compiled at run time).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generatedValidators } from '../shared/registry/generate.js';

const target = fileURLToPath(new URL('../shared/registry/validators.generated.ts', import.meta.url));
writeFileSync(target, await generatedValidators());
console.log(`wrote ${target}`);
