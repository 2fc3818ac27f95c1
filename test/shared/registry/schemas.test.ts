import { beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/errors.js';
import { loadDefinitions, validateDefinition, type LoadedEntity } from '../../../shared/registry/index.js';
import { bodySchema, checkCreate, checkUpdate, isCalendarDate, isDateTime, mergedProblems, METADATA_MAX_CHARS } from '../../../shared/registry/schemas.js';

let entities: Record<string, LoadedEntity>;

beforeAll(async () => {
  entities = Object.fromEntries((await loadDefinitions()).map((e) => [e.slug, e]));
});

function detailsOf(run: () => unknown): Record<string, unknown> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).status).toBe(422);
    return (error as ValidationError).details!;
  }
  throw new Error('expected a validation error');
}

describe('checkCreate', () => {
  it('applies defaults for the fields left out', () => {
    const input = checkCreate(entities.tasks, { title: 'Write the spec' });

    expect(input.data).toEqual({ title: 'Write the spec', status: 'todo', priority: 'medium' });
    expect(checkCreate(entities.orders, {}).data).toEqual({ status: 'pending' });
  });

  it('reports every failing field at once, keyed by field', () => {
    const details = detailsOf(() =>
      checkCreate(entities.tasks, { description: 'x'.repeat(10_001), status: 'done', priority: 7, assigneeId: 42, colour: 'red', extra: true }),
    );

    expect(details).toEqual({
      title: 'is required',
      description: 'must be at most 10000 characters',
      status: 'must be one of: todo, in_progress, completed',
      priority: 'must be one of: low, medium, high',
      assigneeId: 'must be a string',
      colour: 'is not a field of tasks',
      extra: 'is not a field of tasks',
    });
  });

  it('enforces maxLength, min, pattern and type', () => {
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 't'.repeat(201) }))).toEqual({ title: 'must be at most 200 characters' });
    expect(detailsOf(() => checkCreate(entities.products, { name: 'Lamp', price: -1 }))).toEqual({ price: 'must be greater than or equal to 0' });
    expect(detailsOf(() => checkCreate(entities.products, { name: 'Lamp', price: '3' }))).toEqual({ price: 'must be a number' });
    expect(detailsOf(() => checkCreate(entities.tags, { name: 'red', color: 'red' }))).toEqual({ color: 'must match the pattern ^#[0-9a-fA-F]{6}$' });
    expect(detailsOf(() => checkCreate(entities.customers, { name: 'Ada', email: 'not-an-email' }))).toHaveProperty('email');
    expect(detailsOf(() => checkCreate(entities.comments, { taskId: 'tsk_1', body: 'b'.repeat(5001) }))).toEqual({ body: 'must be at most 5000 characters' });
    expect(detailsOf(() => checkCreate(entities.tags, { name: 'n'.repeat(51) }))).toEqual({ name: 'must be at most 50 characters' });
    expect(detailsOf(() => checkCreate(entities.tasks, { title: '' }))).toEqual({ title: 'must not be empty' });
  });

  it('ignores generated attributes sent in the body', () => {
    const input = checkCreate(entities.comments, {
      taskId: 'tsk_1',
      body: 'hi',
      id: 'cmt_mine',
      createdAt: '2000-01-01T00:00:00Z',
      updatedAt: 'x',
      deletedAt: 'y',
      ownerId: 'usr_x',
      owner: 'usr_x',
      tenantId: 'ten_x',
      authorId: 'usr_someone_else',
    });

    expect(input.data).toEqual({ taskId: 'tsk_1', body: 'hi' });
  });

  it('treats null as left out on create', () => {
    expect(checkCreate(entities.tasks, { title: 'x', description: null, status: null }).data).toEqual({ title: 'x', status: 'todo', priority: 'medium' });
  });

  it('accepts a manyToMany id list, metadata and metas beside the fields', () => {
    const input = checkCreate(entities.tasks, { title: 'x', tagIds: ['tag_1', 'tag_2'], metadata: { a: { b: 1 } }, metas: { source: 'import' } });

    expect(input.data.tagIds).toEqual(['tag_1', 'tag_2']);
    expect(input.metadata).toEqual({ a: { b: 1 } });
    expect(input.metas).toEqual({ source: 'import' });
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 'x', tagIds: 'tag_1' }))).toEqual({ tagIds: 'must be an array' });
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 'x', tagIds: ['a', 'a'] }))).toEqual({ tagIds: 'must not repeat an item' });
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 'x', metas: { a: 1 } }))).toEqual({ metas: 'must be a string' });
  });

  it('limits metadata to 10,000 serialized characters and drops __proto__ and constructor keys', () => {
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 'x', metadata: { blob: 'x'.repeat(METADATA_MAX_CHARS) } }))).toHaveProperty('metadata');
    const input = checkCreate(entities.tasks, JSON.parse('{"title":"x","metadata":{"__proto__":{"polluted":1},"a":{"constructor":{"x":1},"b":2}}}'));

    expect(input.metadata).toEqual({ a: { b: 2 } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('stores datetimes as ISO 8601 UTC and checks uuid and boolean types', () => {
    const events = validateDefinition({
      name: 'event',
      slug: 'events',
      tableName: 'events',
      idFormat: { type: 'uuid' },
      fields: { at: { type: 'datetime', required: true }, venueId: { type: 'uuid' }, open: { type: 'boolean' } },
      access: { public: false, shared: true },
    });

    expect(checkCreate(events, { at: '2026-01-02T03:04:05+02:00' }).data).toEqual({ at: '2026-01-02T01:04:05.000Z' });
    expect(detailsOf(() => checkCreate(events, { at: 'tomorrow', venueId: 'v1', open: 'yes' }))).toEqual({
      at: 'must be an ISO 8601 date-time',
      venueId: 'must be a UUID',
      open: 'must be a boolean',
    });
    expect(detailsOf(() => checkCreate(events, { at: '2024-12-31T23:59:60Z' }))).toEqual({ at: 'must be an ISO 8601 date-time' });
  });
});

describe('checkUpdate', () => {
  it('accepts a partial body and no required fields', () => {
    expect(checkUpdate(entities.tasks, { status: 'completed' })).toEqual({ data: { status: 'completed' }, unset: [] });
  });

  it('clears optional fields sent as null and refuses null for required ones', () => {
    expect(checkUpdate(entities.tasks, { assigneeId: null, description: null }).unset).toEqual(['assigneeId', 'description']);
    expect(detailsOf(() => checkUpdate(entities.tasks, { title: null }))).toEqual({ title: 'must be a string' });
  });

  it('refuses unknown fields and bad values like create', () => {
    expect(detailsOf(() => checkUpdate(entities.tasks, { status: 'nope', owner_email: 'x' }))).toEqual({
      status: 'must be one of: todo, in_progress, completed',
      owner_email: 'is not a field of tasks',
    });
  });

  it('does not apply defaults', () => {
    expect(checkUpdate(entities.tasks, {}).data).toEqual({});
  });
});

describe('bodySchema', () => {
  it('is derived from the fields', () => {
    const schema = bodySchema(entities.tasks, 'create') as { required: string[]; properties: Record<string, unknown>; additionalProperties: boolean };

    expect(schema.required).toEqual(['title']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.title).toEqual({ type: 'string', maxLength: 200, minLength: 1 });
    expect(schema.properties.status).toEqual({ enum: ['todo', 'in_progress', 'completed', null] });
    expect(Object.keys(schema.properties)).toEqual(['title', 'description', 'status', 'priority', 'assigneeId', 'tagIds', 'metadata', 'metas']);
  });
});

describe('checkCreate: what DynamoDB cannot store', () => {
  it('refuses with 422 unsafe numbers, empty keys and nesting over 30 levels', () => {
    const nested = (levels: number): Record<string, unknown> => (levels === 1 ? { a: 1 } : { a: nested(levels - 1) });

    expect(detailsOf(() => checkCreate(entities.products, { name: 'Lamp', price: 2 ** 60 }))).toHaveProperty('price');
    expect(detailsOf(() => checkCreate(entities.products, { name: 'Lamp', price: 1e-200 }))).toHaveProperty('price');
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 'x', metadata: { '': 1 } }))).toHaveProperty('metadata');
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 'x', metas: { '': 'v' } }))).toHaveProperty('metas');
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 'x', metadata: nested(31) }))).toHaveProperty('metadata');
    expect(detailsOf(() => checkCreate(entities.tasks, { title: 'x', metadata: JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) }))).toHaveProperty('metadata');
    expect(checkCreate(entities.tasks, { title: 'x', metadata: nested(30) }).metadata).toEqual(nested(30));
    expect(checkCreate(entities.products, { name: 'Lamp', price: 0.5 }).data.price).toBe(0.5);
  });

  it('drops __proto__ and constructor keys of metas, and names a __proto__ body key in details', () => {
    expect(checkCreate(entities.tasks, JSON.parse('{"title":"x","metas":{"constructor":"c","__proto__":"p","k":"v"}}')).metas).toEqual({ k: 'v' });
    expect(Object.keys(detailsOf(() => checkCreate(entities.tasks, JSON.parse('{"title":"x","__proto__":{"a":1}}'))))).toEqual(['__proto__']);
  });
});

describe('dates and date-times', () => {
  it('knows a calendar date from a date that does not exist', () => {
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('0001-01-01')).toBe(true);
    expect(isCalendarDate('2023-02-29')).toBe(false);
    expect(isCalendarDate('2024-04-31')).toBe(false);
    expect(isCalendarDate('2024-1-01')).toBe(false);
  });

  it('refuses a date-time whose day or time does not exist (Date.parse accepts February 30)', () => {
    expect(isDateTime('2024-02-29T23:59:59Z')).toBe(true);
    expect(isDateTime('2024-02-30T00:00:00Z')).toBe(false);
    expect(isDateTime('2024-02-01T24:00:00Z')).toBe(false);
    expect(isDateTime('2024-02-01T23:59:60Z')).toBe(false);
  });
});

describe('mergedProblems', () => {
  const gauge = validateDefinition({
    name: 'gauge',
    slug: 'gauges',
    tableName: 'gauges',
    idFormat: { type: 'uuid' },
    fields: {
      label: { type: 'string', maxLength: 5 },
      tier: { type: 'enum', values: ['a', 'b'], default: 'a' },
      site: { type: 'string', required: true },
      day: { type: 'date' },
    },
    access: { public: false, shared: true },
  });

  it('names every field the stored values break under the current definition', () => {
    expect(Object.keys(mergedProblems(gauge, { label: 'too long', tier: 'c', day: '2023-02-29' })).sort()).toEqual(['day', 'label', 'site', 'tier']);
  });

  it('counts a defaulted field left out as holding its default, and ignores fields no longer defined', () => {
    expect(mergedProblems(gauge, { site: 'x', removed: 42 })).toEqual({});
  });
});
