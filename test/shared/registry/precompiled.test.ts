import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { loadDefinitions } from '../../../shared/registry/index.js';
import { generatedValidators } from '../../../shared/registry/generate.js';
import { standaloneModule } from '../../../shared/registry/schema-compiler.js';
import { bodySchema, compileSchemas, isPrecompiled } from '../../../shared/registry/schemas.js';
import { FIELD_TYPES, type FieldDefinition } from '../../../shared/registry/types.js';
import { validateDefinition } from '../../../shared/registry/index.js';
import { precompiled } from '../../../shared/registry/validators.generated.js';

describe('precompiled validators (ajv standalone)', () => {
  it('are current with the entity definitions (else: npm run schemas)', async () => {
    const file = readFileSync(path.join(PROJECT_ROOT, 'shared/registry/validators.generated.ts'), 'utf8');

    expect(file === (await generatedValidators()), 'shared/registry/validators.generated.ts is out of date: run npm run schemas').toBe(true);
  });

  it('serve every built-in entity, so loading the registry compiles nothing', async () => {
    const entities = await loadDefinitions();

    for (const entity of entities) {
      expect(isPrecompiled(entity), entity.slug).toBe(true);
      expect(compileSchemas(entity).create).toBe(precompiled[`${entity.slug}:create` as keyof typeof precompiled].validate);
    }
  });

  it('of an entity with every field type import nothing but ajv’s run-time helpers (no ajv-formats at a cold start)', () => {
    // A user's own entity: every type, plus the variants that change a schema (required, unique, indexed).
    const fields: Record<string, FieldDefinition> = {};
    for (const type of FIELD_TYPES) {
      const base: FieldDefinition = type === 'enum' ? { type, values: ['a', 'b'] } : { type };
      fields[`${type}Field`] = base;
      fields[`${type}Required`] = { ...base, required: true };
      if (type !== 'boolean') fields[`${type}Unique`] = { ...base, unique: true };
    }
    const entity = validateDefinition({ name: 'gadget', slug: 'gadgets', tableName: 'gadgets', idFormat: { type: 'uuid' }, fields, access: { public: false, shared: true } });

    const source = standaloneModule(new Map((['create', 'update'] as const).map((mode) => [`gadgets:${mode}`, bodySchema(entity, mode)])));

    const imports = [...source.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports.filter((i) => !i.startsWith('ajv/dist/runtime/')), 'modules the precompiled validators would load at cold start').toEqual([]);
  });

  it('turn the run-time helpers and formats ajv requires into imports that load', async () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: { at: { type: 'string', format: 'date-time' }, id: { type: 'string', format: 'uuid' }, name: { type: 'string', maxLength: 3 } },
    };
    const source = standaloneModule(new Map([['x:create', schema]]));
    expect(source).not.toContain('require(');
    // Inside the project, so that ajv's run-time modules resolve as they do for the real file.
    const dir = mkdtempSync(path.join(PROJECT_ROOT, 'node_modules', '.standalone-'));
    try {
      writeFileSync(path.join(dir, 'v.mjs'), source);
      const { precompiled: table } = (await import(pathToFileURL(path.join(dir, 'v.mjs')).href)) as {
        precompiled: Record<string, { schema: string; validate: ((d: unknown) => boolean) & { errors?: { keyword: string }[] } }>;
      };
      const { validate } = table['x:create'];

      expect(validate({ at: '2026-01-02T03:04:05Z', id: '0b3e5c1e-6a3b-4c2d-9e8f-1a2b3c4d5e6f', name: 'abc' })).toBe(true);
      expect(validate({ at: 'yesterday', id: 'nope', name: 'abcd' })).toBe(false);
      expect(validate.errors!.map((e) => e.keyword).sort()).toEqual(['format', 'format', 'maxLength']);
      expect(JSON.parse(table['x:create'].schema)).toEqual(schema);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
