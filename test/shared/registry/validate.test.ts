import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { entityFileNames, loadDefinitions, RegistryError, validateDefinition, validateRegistry } from '../../../shared/registry/index.js';
import type { EntityDefinition } from '../../../shared/registry/types.js';

function widget(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'widget',
    slug: 'widgets',
    tableName: 'widgets',
    idFormat: { type: 'prefixed', prefix: 'wid' },
    fields: { title: { type: 'string', required: true, maxLength: 20 } },
    access: { public: false, shared: true },
    ...overrides,
  };
}

function problemsOf(def: unknown): string {
  try {
    validateDefinition(def, 'entities/widgets.ts');
  } catch (error) {
    expect(error).toBeInstanceOf(RegistryError);
    return (error as Error).message;
  }
  throw new Error('expected the definition to be refused');
}

describe('the built-in registry', () => {
  it('loads the six entities of CONTRACT.md, and every other definition file, from one file each', async () => {
    const entities = await loadDefinitions();

    // The project's own entities may come beside these: the registry is read, not listed here.
    expect(entityFileNames()).toEqual(expect.arrayContaining(['comments', 'customers', 'orders', 'products', 'tags', 'tasks']));
    expect(entities.map((e) => e.slug).sort()).toEqual(entities.map((e) => e.source.replace(/^.*\/(.+)\.ts$/, '$1')).sort());
    expect(entities.map((e) => e.source.replace(/^.*\/(.+)\.ts$/, '$1')).sort()).toEqual(entityFileNames());
  });

  it('has the configuration CONTRACT.md gives each entity', async () => {
    const bySlug = Object.fromEntries((await loadDefinitions()).map((e) => [e.slug, e]));

    expect(bySlug.tasks).toMatchObject({ access: { public: false, shared: false }, idFormat: { type: 'prefixed', prefix: 'tsk' } });
    expect(bySlug.tasks.fields.title).toMatchObject({ required: true, maxLength: 200, searchable: true });
    expect(bySlug.tasks.fields.description.searchable).toBe(true);
    expect(bySlug.tasks.relations).toMatchObject({ assignee: { type: 'belongsTo' }, comments: { type: 'hasMany' }, tags: { type: 'manyToMany' } });
    expect(bySlug.products).toMatchObject({ access: { public: true, shared: true }, softDelete: true, idFormat: { type: 'uuid' } });
    expect(bySlug.products.fields.price.validation).toEqual({ min: 0 });
    expect(bySlug.comments.fields.body.maxLength).toBe(5000);
    expect(bySlug.comments.fields.authorId.generated).toBe('caller');
    expect(bySlug.tags.access.shared).toBe(true);
    expect(bySlug.tags.fields.color.validation?.pattern).toBe('^#[0-9a-fA-F]{6}$');
    expect(bySlug.orders.operations.delete).toBe(false);
    expect(bySlug.orders.fields.status).toMatchObject({ values: ['pending', 'paid', 'shipped', 'cancelled'], default: 'pending' });
    expect(bySlug.customers).toMatchObject({ softDelete: true, access: { shared: false } });
  });

  it('indexes the fields the next issue serves equality filters from', async () => {
    const indexed = Object.fromEntries(
      (await loadDefinitions()).map((e) => [e.slug, Object.entries(e.fields).filter(([, f]) => f.indexed).map(([n]) => n)]),
    );

    expect(indexed).toMatchObject({
      tasks: ['status', 'priority', 'assigneeId'],
      products: ['status', 'category'],
      orders: ['customerId', 'status'],
      comments: ['taskId'],
    });
  });

  it('fills in defaults: every operation on, permissions <slug>:read|write|delete', () => {
    const loaded = validateDefinition(widget());

    expect(loaded.operations).toEqual({ list: true, create: true, read: true, update: true, delete: true });
    expect(loaded.permissions).toEqual({ create: ['widgets:write'], read: ['widgets:read'], update: ['widgets:write'], delete: ['widgets:delete'] });
    expect(loaded.softDelete).toBe(false);
    expect(Object.isFrozen(loaded.fields.title)).toBe(true);
  });
});

describe('validateDefinition', () => {
  it('names the file, the entity and the problem', () => {
    const message = problemsOf(widget({ fields: { size: { type: 'huge' } } }));

    expect(message).toBe("Invalid entity definition: entities/widgets.ts entity 'widgets': field 'size': type must be one of string, number, enum, datetime, date, boolean, uuid (got \"huge\")");
  });

  it('reports every problem of a definition at once', () => {
    const message = problemsOf(
      widget({
        slug: 'Widgets!',
        access: { public: 'yes' },
        operations: { list: true, purge: true },
        fields: { status: { type: 'enum' }, price: { type: 'number', validation: { min: 5, max: 1 } } },
      }),
    );

    expect(message).toContain('slug must be lower-case');
    expect(message).toContain('access must be {public: boolean, shared: boolean}');
    expect(message).toContain("operations: unknown operation 'purge'");
    expect(message).toContain("field 'status': an enum needs values");
    expect(message).toContain("field 'price': validation.min (5) is greater than validation.max (1)");
  });

  it.each([
    [{ fields: {} }, 'fields must be an object with at least one field'],
    [{ fields: { id: { type: 'string' } } }, "field 'id': 'id' is managed by the service"],
    [{ fields: { title: { type: 'string', requried: true } } }, "field 'title': unknown key 'requried'"],
    [{ fields: { color: { type: 'string', validation: { pattern: '([' } } } }, "field 'color': validation.pattern is not a valid regular expression"],
    [{ fields: { n: { type: 'number', default: 'x' } } }, "field 'n': default \"x\" is not a number"],
    [{ fields: { s: { type: 'enum', values: ['a'], default: 'b' } } }, "field 's': default \"b\" is not one of the values"],
    [{ fields: { on: { type: 'boolean', maxLength: 3 } } }, "field 'on': maxLength only applies to type string"],
    [{ slug: 'users' }, "slug 'users' is a core path"],
    [{ idFormat: { type: 'prefixed', prefix: 'W' } }, 'idFormat.prefix must be 2 to 8 lower-case letters'],
    [{ idFormat: { type: 'serial' } }, "idFormat.type must be 'prefixed' or 'uuid'"],
    [{ permissions: { read: ['widgets:peek'] } }, 'permissions.read must be an array of scopes'],
    [{ relations: { owner: { type: 'belongsTo', entity: 'users', foreignKey: 'ownerUserId' } } }, "relation 'owner': foreignKey 'ownerUserId' is not a field"],
    [{ relations: { parts: { type: 'oneToOne', entity: 'parts', foreignKey: 'widgetId' } } }, "relation 'parts': type must be one of belongsTo, hasMany, manyToMany"],
    [{ rateLimit: { limit: 0, window: '1h' } }, 'rateLimit must be'],
    [{ writeShards: 0 }, "writeShards must be 'auto' or an integer from 1 to 32"],
    [{ writeShards: 33 }, "writeShards must be 'auto' or an integer from 1 to 32"],
    [{ writeShards: 2.5 }, "writeShards must be 'auto' or an integer from 1 to 32"],
    [{ writeShards: 'AUTO' }, "writeShards must be 'auto' or an integer from 1 to 32"],
    [{ colour: 'red' }, "unknown key 'colour'"],
    [{ aggregates: { sum: ['title'] } }, "aggregates.sum: 'title' is not a number field (only number fields can be summed)"],
    [{ aggregates: { sum: ['weight'] } }, "aggregates.sum: 'weight' is not a field of this entity"],
    [{ aggregates: { sum: 'price' } }, 'aggregates.sum must be an array of field names'],
    [{ aggregates: { min: ['price'] } }, "aggregates: unknown key 'min' (known: sum, days)"],
    [{ aggregates: { days: ['title'] } }, "aggregates.days: 'title' is not a date or date-time field (only dates are counted per day)"],
    [{ aggregates: { days: ['createdAt', 'createdAt'] } }, "aggregates.days: 'createdAt' is named twice"],
    [{ fields: { price: { type: 'number' } }, aggregates: { sum: ['price', 'price'] } }, "aggregates.sum: 'price' is named twice"],
    [{ fields: { on: { type: 'boolean', unique: true } } }, "field 'on': type boolean cannot be unique"],
    [{ fields: { code: { type: 'string', unique: true, default: 'x' } } }, "field 'code': a unique field cannot have a default"],
    [{ fields: { code: { type: 'string', unique: 'yes' } } }, "field 'code': unique must be a boolean"],
    [{ fields: { day: { type: 'date', default: '2023-02-29' } } }, "field 'day': default \"2023-02-29\" is not a calendar date YYYY-MM-DD"],
  ])('refuses %j', (overrides, expected) => {
    expect(problemsOf(widget(overrides))).toContain(expected);
  });

  it('accepts number fields to sum', () => {
    expect(validateDefinition(widget({ fields: { price: { type: 'number' } }, aggregates: { sum: ['price'] } }), 'entities/widgets.ts').aggregates).toEqual({ sum: ['price'] });
  });

  it("accepts writeShards 'auto' and a pinned count", () => {
    expect(validateDefinition(widget({ writeShards: 'auto' }), 'entities/widgets.ts').writeShards).toBe('auto');
    expect(validateDefinition(widget({ writeShards: 32 }), 'entities/widgets.ts').writeShards).toBe(32);
  });

  it('accepts unique fields of the types that can be unique, and date fields with a default', () => {
    const entity = validateDefinition(
      widget({ fields: { code: { type: 'string', unique: true }, serial: { type: 'number', unique: true }, day: { type: 'date', default: '2024-02-29', indexed: true } } }),
      'entities/widgets.ts',
    );

    expect(entity.fields.code.unique).toBe(true);
    expect(entity.fields.day.type).toBe('date');
  });

  it('refuses something that is not an object', () => {
    expect(problemsOf(undefined)).toContain('the definition must be an object');
  });
});

describe('validateRegistry', () => {
  const tasks = (extra: Partial<EntityDefinition> = {}) =>
    validateDefinition({ ...widget({ name: 'job', slug: 'jobs', tableName: 'jobs' }), ...extra }, 'entities/jobs.ts');

  it('refuses two entities with one slug or table', () => {
    expect(() => validateRegistry([validateDefinition(widget()), validateDefinition(widget({ name: 'other' }))])).toThrow(/slug 'widgets' is also used by/);
  });

  it('refuses a relation to an entity that is not registered', () => {
    const jobs = tasks({ relations: { parts: { type: 'hasMany', entity: 'parts', foreignKey: 'jobId' } } });

    expect(() => validateRegistry([jobs])).toThrow("entities/jobs.ts entity 'jobs': relation 'parts' targets unknown entity 'parts'");
  });

  it('refuses a hasMany whose foreign key is not indexed on the child', () => {
    const jobs = tasks({ relations: { widgets: { type: 'hasMany', entity: 'widgets', foreignKey: 'title' } } });

    expect(() => validateRegistry([jobs, validateDefinition(widget())])).toThrow("'widgets.title' must be indexed");
  });

  it('refuses a reference to an unknown entity', () => {
    const jobs = tasks({ fields: { partId: { type: 'string', references: 'parts' } } });

    expect(() => validateRegistry([jobs])).toThrow("field 'partId' references unknown entity 'parts'");
  });
});

describe('loading a directory', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  function directory(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'registry-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  }

  it('registers every definition file of the directory (adding an entity is adding a file)', async () => {
    const dir = directory({
      'widgets.ts': `export default ${JSON.stringify(widget())};`,
      'gadgets.ts': `export default ${JSON.stringify(widget({ name: 'gadget', slug: 'gadgets', tableName: 'gadgets' }))};`,
      '_draft.ts': 'export default 1;',
      'notes.md': 'not a definition',
    });

    const entities = await loadDefinitions({ dir });

    expect(entities.map((e) => e.slug)).toEqual(['gadgets', 'widgets']);
  });

  it('stops with a message naming the entity and the problem when one definition is bad', async () => {
    const dir = directory({
      'widgets.ts': `export default ${JSON.stringify(widget({ fields: { title: { type: 'string', maxLength: -1 } } }))};`,
    });

    await expect(loadDefinitions({ dir })).rejects.toThrow("shared/registry/entities/widgets.ts entity 'widgets': field 'title': maxLength must be a positive integer");
  });

  it('stops when a definition file cannot even be imported', async () => {
    const dir = directory({ 'broken.ts': 'export default {' });

    await expect(loadDefinitions({ dir })).rejects.toThrow(/broken\.ts: cannot be loaded/);
  });
});
