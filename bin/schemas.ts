/**
 * `npm run schemas`: writes the ajv standalone validators, so that no function compiles a schema
 * at cold start or on its first request:
 * - shared/registry/validators.generated.ts: every built-in entity's create and update body. Run
 *   it after changing a definition in shared/registry/entities/ (a unit test fails while the file
 *   is out of date; until then the changed entity is compiled at run time);
 * - shared/auth/validators.generated.ts: the auth family's bodies (shared/auth/body-schemas.ts;
 *   a unit test fails while the file is out of date);
 * - shared/plugins/validators.generated.ts: the body schemas of every plugin route (plugins/), and
 *   the response schemas checked. Run it after changing a plugin's schemas (a unit test fails
 *   while the file is out of date; until then the changed schema is compiled at start-up);
 * - shared/http/bodies/<family>.generated.ts: the request bodies the core routes of the keys,
 *   webhooks and upload families declare (shared/route-declarations/; a unit test fails while a file is
 *   out of date).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generatedAuthValidators } from '../shared/auth/generate.js';
import { generatedBodyValidators, VALIDATED_FAMILIES } from '../shared/http/bodies/generate.js';
import { generatedPluginValidators } from '../shared/plugins/generate.js';
import { generatedValidators } from '../shared/registry/generate.js';

const targets: [string, () => string | Promise<string>][] = [
  ['../shared/registry/validators.generated.ts', generatedValidators],
  ['../shared/auth/validators.generated.ts', generatedAuthValidators],
  ['../shared/plugins/validators.generated.ts', () => generatedPluginValidators()],
  ...VALIDATED_FAMILIES.map((family): [string, () => string] => [`../shared/http/bodies/${family}.generated.ts`, () => generatedBodyValidators(family)]),
];
for (const [relative, generate] of targets) {
  const target = fileURLToPath(new URL(relative, import.meta.url));
  writeFileSync(target, await generate());
  console.log(`wrote ${target}`);
}
