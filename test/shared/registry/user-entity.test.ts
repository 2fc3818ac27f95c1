/**
 * A user's own entity never breaks the project: an extra definition with every field type (and
 * the variants that change generated code: required, unique, indexed, a reference, an enum whose
 * values are not GraphQL names) registers beside the built-in ones, and the surfaces generated
 * from the registry (OPTIONS, the OpenAPI document, the GraphQL schema) build with it. The
 * precompiled-validator side is shared/registry/precompiled.test.ts; nothing is written to
 * shared/registry/entities/.
 */
import { validateSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlSchema } from '../../../shared/graphql/schema.js';
import { openApiDocument } from '../../../shared/openapi/index.js';
import { describeEntity } from '../../../shared/registry/describe.js';
import { entitiesDirectory, entityFileNames, findEntity, useDefinitions } from '../../../shared/registry/index.js';
import { checkCreate } from '../../../shared/registry/schemas.js';
import { FIELD_TYPES, type FieldDefinition } from '../../../shared/registry/types.js';

function gadget(): Record<string, unknown> {
  const fields: Record<string, FieldDefinition> = {};
  for (const type of FIELD_TYPES) {
    const base: FieldDefinition = type === 'enum' ? { type, values: ['small', 'large'] } : { type };
    fields[`${type}Field`] = base;
    fields[`${type}Required`] = { ...base, required: true };
    if (type !== 'boolean') fields[`${type}Unique`] = { ...base, unique: true };
    if (['string', 'number', 'enum', 'uuid', 'date', 'boolean'].includes(type)) fields[`${type}Indexed`] = { ...base, indexed: true };
  }
  fields.stage = { type: 'enum', values: ['in-progress', '2nd', 'done'] };
  fields.customerId = { type: 'string', maxLength: 64, references: 'customers' };
  return {
    name: 'gadget',
    slug: 'gadgets',
    tableName: 'gadgets',
    idFormat: { type: 'prefixed', prefix: 'gad' },
    fields,
    access: { public: false, shared: true },
    softDelete: true,
    relations: { customer: { type: 'belongsTo', entity: 'customers', foreignKey: 'customerId' } },
  };
}

beforeAll(async () => {
  const dir = entitiesDirectory()!;
  const builtIn = await Promise.all(entityFileNames(dir).map(async (name) => ((await import(`${dir}${name}.ts`)) as { default: unknown }).default));
  useDefinitions([...builtIn, gadget()]);
});

describe('an extra entity with every field type', () => {
  it('registers beside the built-in entities', () => {
    expect(findEntity('gadgets')).toBeDefined();
    expect(findEntity('tasks')).toBeDefined();
  });

  it('validates a create body of every type', () => {
    const entity = findEntity('gadgets')!;
    const body = {
      stringRequired: 'x',
      numberRequired: 1,
      enumRequired: 'small',
      datetimeRequired: '2026-01-01T10:00:00+02:00',
      dateRequired: '2024-02-29',
      booleanRequired: false,
      uuidRequired: '6f1c1e2a-0b7e-4c55-9d1e-3f3b2a1c0d9e',
    };

    expect(checkCreate(entity, body).data).toMatchObject({ ...body, datetimeRequired: '2026-01-01T08:00:00.000Z' });
  });

  it('is described by OPTIONS', () => {
    const schema = describeEntity(findEntity('gadgets')!, undefined).schema;

    for (const type of FIELD_TYPES) expect(schema[`${type}Field`].type).toBe(type);
    expect(schema.stringUnique.unique).toBe(true);
  });

  it('appears in the OpenAPI document', () => {
    const document = openApiDocument() as unknown as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, { properties: Record<string, { format?: string; description?: string }> }> };
    };

    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/api/v1/gadgets', '/api/v1/gadgets/{id}']));
    const properties = document.components.schemas.Gadget.properties;
    expect(properties.dateRequired.format).toBe('date');
    expect(properties.datetimeRequired.format).toBe('date-time');
    expect(properties.stringUnique.description).toContain('409 UNIQUE_VIOLATION');
  });

  it('gives a valid GraphQL schema: enums as enums (or String when a value is not a GraphQL name), the foreign key beside its relation', () => {
    const schema = graphqlSchema();

    expect(validateSchema(schema)).toEqual([]);
    const fields = (schema.getType('Gadget') as unknown as { getFields(): Record<string, { type: { toString(): string } }> }).getFields();
    expect(String(fields.enumField.type)).toBe('GadgetEnumField');
    expect(String(fields.stage.type)).toBe('String');
    expect(String(fields.customerId.type)).toBe('ID');
    expect(String(fields.customer.type)).toBe('Customer');
    expect(String(fields.dateRequired.type)).toBe('String!');
    const input = (schema.getType('CreateGadgetInput') as unknown as { getFields(): Record<string, { type: { toString(): string } }> }).getFields();
    expect(String(input.enumField.type)).toBe('String');
  });
});
