/**
 * Plugin route schemas: precompiled by `npm run schemas` (shared/plugins/validators.generated.ts),
 * matched to a declaration by the schema's JSON, and compiled by ajv only when no precompiled
 * validator matches (a schema changed since the file was written).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { pluginDeclarations, type LoadedDeclaration } from '../../../shared/plugins/declarations.js';
import { generatedPluginValidators } from '../../../shared/plugins/generate.js';
import { schemaErrorDetails } from '../../../shared/http/operations/plugins.js';
import { compilePluginSchema } from '../../../shared/plugins/schema-compiler.js';
import { isKnownValid, precompiledValidator, routeBodyValidators, type SchemaValidator } from '../../../shared/plugins/schemas.js';
import type { PluginRouteDefinition } from '../../../shared/plugins/types.js';

const routesWith = (key: 'body' | 'response') =>
  pluginDeclarations.flatMap(({ definition }) => definition.routes.filter((r) => r[key] !== undefined));

function declaration(routes: Partial<PluginRouteDefinition>[], source = 'plugins/weather.plugin.ts'): LoadedDeclaration {
  return {
    source,
    definition: { name: 'weather', routes: routes.map((r, i) => ({ method: 'POST', path: `/api/v1/weather/${i}`, handler: 'go', auth: 'required', ...r })) as PluginRouteDefinition[] },
  };
}

/** Runs a validator on a copy of the body: what it returns, the body after defaults, the 422 details. */
function outcome(validate: SchemaValidator, body: unknown) {
  const copy = structuredClone(body);
  const valid = validate(copy);
  return { valid, body: copy, errors: valid ? null : validate.errors, details: valid ? null : schemaErrorDetails(validate.errors ?? []) };
}

const greetings = pluginDeclarations.find((d) => d.definition.name === 'greetings')!;
const greetBody = greetings.definition.routes.find((r) => r.handler === 'greet')!.body!;

describe('precompiled plugin validators (ajv standalone)', () => {
  it('are current with the plugin declarations (else: npm run schemas)', () => {
    const file = readFileSync(path.join(PROJECT_ROOT, 'shared/plugins/validators.generated.ts'), 'utf8');

    expect(file === generatedPluginValidators(), 'shared/plugins/validators.generated.ts is out of date: run npm run schemas').toBe(true);
  });

  it('cover every body and response schema of plugins/, so start-up compiles nothing', async () => {
    const bodies = routesWith('body');
    expect(bodies.length).toBeGreaterThan(0);
    for (const route of bodies) expect(precompiledValidator(route.body!), `${route.method} ${route.path}`).toBeDefined();
    for (const route of routesWith('response')) expect(isKnownValid(route.response!), `${route.method} ${route.path}`).toBe(true);

    const validators = await routeBodyValidators(pluginDeclarations);

    for (const route of bodies) expect(validators.get(route)).toBe(precompiledValidator(route.body!));
  });

  it('give the same answers as ajv compiling the schema: errors, 422 details and defaults', () => {
    const bodies: unknown[] = [
      {},
      undefined,
      [],
      'text',
      { name: '', excited: 'yes', extra: 1 },
      { name: 'x'.repeat(51) },
      { name: 'Ada' },
      { prompt: '', maxTokens: 5.5, temperature: 2, model: 'huge', stray: true },
      { prompt: 'hi' },
      { amount: 0, reason: 'r'.repeat(201) },
      { amount: 1e7, reason: 7 },
    ];
    for (const route of routesWith('body')) {
      const precompiled = precompiledValidator(route.body!)!;
      const compiled = compilePluginSchema(structuredClone(route.body!), 'test', 'test');
      for (const body of bodies) expect(outcome(precompiled, body), `${route.method} ${route.path} ${JSON.stringify(body)}`).toEqual(outcome(compiled, body));
    }
    expect(outcome(precompiledValidator(greetBody)!, { name: '', extra: 1 }).details).toEqual({
      name: 'must NOT have fewer than 1 characters',
      extra: 'is not a known field',
    });
    expect(outcome(precompiledValidator(greetBody)!, { name: 'Ada' }).body).toEqual({ name: 'Ada', excited: false });
  });
});

describe('plugin schemas without a precompiled validator', () => {
  it('are never matched to another schema’s validator: a changed schema has none', () => {
    const changed = { ...greetBody, properties: { ...(greetBody.properties as object), name: { type: 'string', minLength: 1, maxLength: 5 } } };

    expect(precompiledValidator(changed)).toBeUndefined();
    expect(isKnownValid({ type: 'object', properties: { other: { type: 'string' } } })).toBe(false);
  });

  it('are compiled by ajv at start-up and validate as declared', async () => {
    const changed = { ...greetBody, properties: { ...(greetBody.properties as object), name: { type: 'string', minLength: 1, maxLength: 5 } } };
    const weather = declaration([{ body: changed, response: { type: 'object', properties: { city: { type: 'string' } } } }]);

    const validate = (await routeBodyValidators([weather])).get(weather.definition.routes[0])!;

    expect(validate).not.toBe(precompiledValidator(greetBody));
    expect(outcome(validate, { name: 'Adelaide' }).details).toEqual({ name: 'must NOT have more than 5 characters' });
    expect(outcome(validate, { name: 'Ada' })).toMatchObject({ valid: true, body: { name: 'Ada', excited: false } });
  });

  it('stop start-up with the message naming the file, the route and the problem (body or response)', async () => {
    const badBody = declaration([{ body: { type: 'object', properties: { n: { type: 'strin' } } } }]);
    const badResponse = declaration([{ method: 'GET', path: '/api/v1/weather/now', response: { type: 'object', requird: ['x'] } }]);

    await expect(routeBodyValidators([badBody])).rejects.toThrow(
      /^Plugin plugins\/weather\.plugin\.ts is invalid: POST \/api\/v1\/weather\/0 body is not a valid JSON Schema \(schema is invalid: data\/properties\/n\/type must be equal to one of the allowed values/,
    );
    await expect(routeBodyValidators([badResponse])).rejects.toThrow(
      'Plugin plugins/weather.plugin.ts is invalid: GET /api/v1/weather/now response is not a valid JSON Schema (strict mode: unknown keyword: "requird")',
    );
    expect(() => generatedPluginValidators([badResponse])).toThrow('GET /api/v1/weather/now response is not a valid JSON Schema');
  });
});
