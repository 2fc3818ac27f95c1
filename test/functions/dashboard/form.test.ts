/**
 * The editor's form generation from OPTIONS descriptors (dashboard/src/form.ts): pure, no browser.
 */
import { describe, expect, it } from 'vitest';
import { columns, formField, formFields, initialValues, parseMetadata, toBody, type EntityDescription } from '../../../dashboard/src/form.js';

const tasks: EntityDescription = {
  entity: 'task',
  slug: 'tasks',
  methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
  schema: {
    id: { type: 'string', required: false, generated: true, primaryKey: true },
    title: { type: 'string', required: true, generated: false, maxLength: 200 },
    description: { type: 'string', required: false, generated: false, validation: { max: 10000 } },
    status: { type: 'enum', required: false, generated: false, values: ['todo', 'in_progress', 'completed'], default: 'todo' },
    assigneeId: { type: 'string', required: false, generated: false, maxLength: 64, references: 'users' },
    tagIds: { type: 'array', items: { type: 'string' }, required: false, generated: false },
    createdAt: { type: 'datetime', required: false, generated: true },
    updatedAt: { type: 'datetime', required: false, generated: true },
  },
  relations: {
    assignee: { type: 'belongsTo', entity: 'users', foreignKey: 'assigneeId' },
    tags: { type: 'manyToMany', entity: 'tags', foreignKey: 'tagIds' },
  },
  permissions: { read: true, write: true, delete: true },
};

describe('formFields', () => {
  it('makes one input per writable field, in schema order, leaving out generated ones', () => {
    expect(formFields(tasks).map((f) => f.name)).toEqual(['title', 'description', 'status', 'assigneeId', 'tagIds']);
  });

  it('marks required fields and carries maxLength; long text gets a text area', () => {
    const [title, description] = formFields(tasks);
    expect(title).toEqual({ name: 'title', kind: 'text', required: true, maxLength: 200 });
    expect(description).toMatchObject({ kind: 'textarea', required: false, maxLength: 10000 });
  });

  it('turns an enum into a select of its values with its default', () => {
    expect(formFields(tasks)[2]).toEqual({ name: 'status', kind: 'select', required: false, options: ['todo', 'in_progress', 'completed'], default: 'todo' });
  });

  it('turns references and relation keys into pickers of the related entity', () => {
    const fields = formFields(tasks);
    expect(fields[3]).toMatchObject({ kind: 'relation', relatedEntity: 'users' });
    expect(fields[4]).toMatchObject({ kind: 'relations', relatedEntity: 'tags' });
  });

  it('finds a belongsTo relation by its foreign key when the field names no reference', () => {
    expect(formField('taskId', { type: 'string', required: true }, { task: { type: 'belongsTo', entity: 'tasks', foreignKey: 'taskId' } })).toMatchObject({ kind: 'relation', relatedEntity: 'tasks', required: true });
  });

  it('gives numbers their bounds, patterns to strings, and booleans a check box', () => {
    expect(formField('price', { type: 'number', required: true, validation: { min: 0, max: 10 } })).toEqual({ name: 'price', kind: 'number', required: true, min: 0, max: 10 });
    expect(formField('color', { type: 'string', validation: { pattern: '^#[0-9a-fA-F]{6}$' } })).toMatchObject({ kind: 'text', pattern: '^#[0-9a-fA-F]{6}$' });
    expect(formField('done', { type: 'boolean' }).kind).toBe('checkbox');
    expect(formField('due', { type: 'datetime' }).kind).toBe('datetime');
  });
});

describe('columns', () => {
  it('shows every field of the description in its order, lists of ids included', () => {
    expect(columns(tasks)).toEqual(Object.keys(tasks.schema));
    expect(columns(tasks)).toContain('tagIds');
  });

  it("are the admin CLI's export columns, for every entity of the registry", async () => {
    const { exportColumns } = await import('../../../bin/admin/transfer.js');
    const { describeEntity } = await import('../../../shared/registry/describe.js');
    const { loadDefinitions } = await import('../../../shared/registry/index.js');
    const caller = { type: 'session' as const, user: { id: 'usr_1', email: 'a@b.c', role: 'admin' as const }, tenantId: 'ten_1', scopes: ['*'] };

    for (const entity of await loadDefinitions()) {
      const description = describeEntity(entity, caller) as unknown as EntityDescription;
      expect(columns(description), entity.slug).toEqual(exportColumns(description.schema));
    }
  });
});

describe('toBody', () => {
  const fields = formFields(tasks);

  it('sends on create what was filled in, numbers as numbers, and leaves out empty fields', () => {
    const values = { ...initialValues(fields), title: 'Write', description: '' };
    expect(toBody(fields, values)).toEqual({ title: 'Write', status: 'todo' });
    expect(toBody([formField('price', { type: 'number' })], { price: '12.5' })).toEqual({ price: 12.5 });
  });

  it('sends on update only what changed, a cleared field as null', () => {
    const record = { id: 'tsk_1', title: 'Old', description: 'Text', status: 'todo', tagIds: ['tag_1'] };
    const original = initialValues(fields, record);
    const values = { ...original, title: 'New', description: '', tagIds: ['tag_1', 'tag_2'] };
    expect(toBody(fields, values, original)).toEqual({ title: 'New', description: null, tagIds: ['tag_1', 'tag_2'] });
  });

  it('keeps a number the server must judge (a negative price) rather than dropping it', () => {
    expect(toBody([formField('price', { type: 'number', validation: { min: 0 } })], { price: '-1' })).toEqual({ price: -1 });
  });
});

describe('parseMetadata', () => {
  it('accepts an object or nothing, and explains anything else', () => {
    expect(parseMetadata('')).toEqual({});
    expect(parseMetadata('{"a": 1}')).toEqual({ value: { a: 1 } });
    expect(parseMetadata('[1]').error).toBe('must be a JSON object');
    expect(parseMetadata('{').error).toMatch(/^is not valid JSON/);
  });
});

describe('import rows (dashboard/src/transfer.ts)', async () => {
  const { parseRows, toItem, toCsv, toNdjson } = await import('../../../dashboard/src/transfer.js');
  const products: EntityDescription = {
    entity: 'product', slug: 'products', methods: ['GET', 'POST'], relations: {}, permissions: { read: true, write: true, delete: true },
    schema: { id: { type: 'uuid', generated: true, primaryKey: true }, name: { type: 'string', required: true }, price: { type: 'number' }, tagIds: { type: 'array' }, createdAt: { type: 'datetime', generated: true } },
  };

  it('reads CSV with a header row, a JSON array and NDJSON', () => {
    expect(parseRows('p.csv', 'name,price\nLamp,"1,5"\n').rows).toEqual([{ name: 'Lamp', price: '1,5' }]);
    expect(parseRows('p.json', '[{"name":"Lamp"}]').rows).toEqual([{ name: 'Lamp' }]);
    expect(parseRows('p.ndjson', '{"name":"A"}\n{"name":"B"}\n').rows).toHaveLength(2);
    expect(parseRows('p.json', '[1]').error).toBe('the JSON must be an array of objects');
  });

  it('types CSV cells by the description, drops generated fields and empty cells, keeps what the server must judge', () => {
    expect(toItem({ id: 'x', name: 'Lamp', price: '19.5', tagIds: 'a; b', createdAt: 'now' }, products)).toEqual({ name: 'Lamp', price: 19.5, tagIds: ['a', 'b'] });
    expect(toItem({ name: '', price: 'cheap' }, products)).toEqual({ price: 'cheap' });
  });

  it('writes CSV and NDJSON', () => {
    expect(toCsv([{ id: '1', name: 'Lamp, big', tagIds: ['a', 'b'] }], ['id', 'name', 'tagIds'])).toBe('id,name,tagIds\r\n1,"Lamp, big",a;b');
    expect(toNdjson([{ a: 1 }, { b: 2 }])).toBe('{"a":1}\n{"b":2}\n');
  });
});

describe('export pages (dashboard/src/transfer.ts)', async () => {
  const { csvPage, exportRequests, importRequests, readUnits, toCsv } = await import('../../../dashboard/src/transfer.js');
  const columns = ['id', 'name'];
  const records = Array.from({ length: 5 }, (_, i) => ({ id: String(i), name: i === 2 ? 'has, comma\nand line' : `n${i}` }));

  it('writes pages of CSV that, one after another, make the CSV of all the records', () => {
    const pages = [records.slice(0, 2), records.slice(2, 4), records.slice(4)];
    const joined = pages.map((page, i) => csvPage(page, columns, i === 0)).join('');

    expect(joined).toBe(`${toCsv(records, columns)}\r\n`);
  });

  it('writes the header alone for an empty view, and nothing for an empty later page', () => {
    expect(csvPage([], columns, true)).toBe('id,name\r\n');
    expect(csvPage([], columns, false)).toBe('');
  });

  it('counts one request per 100 records exported (at least one) and per 100 rows imported', () => {
    expect([exportRequests(0), exportRequests(1050), exportRequests(250)]).toEqual([1, 11, 3]);
    expect([importRequests(0), importRequests(100), importRequests(101)]).toEqual([0, 1, 2]);
  });

  it('reads the read units of X-Request-Cost', () => {
    expect(readUnits('rcu=12.5, wcu=0.0')).toBe(12.5);
    expect(readUnits(null)).toBe(0);
  });
});
