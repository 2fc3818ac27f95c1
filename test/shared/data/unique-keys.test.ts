import { describe, expect, it } from 'vitest';
import { buildLayout, definitionLayout } from '../../../shared/data/layout.js';
import { ApiError } from '../../../shared/errors.js';
import type { StoredRecord, TransactItem } from '../../../shared/data/record-item.js';
import { createTransaction, deleteTransaction, updateTransaction } from '../../../shared/data/transactions.js';
import {
  buildingAcquisitions,
  oversizedUniques,
  PUBLIC_SCOPE,
  UNIQUE_SK,
  uniqueDelete,
  uniqueFields,
  uniqueItem,
  uniqueKey,
  uniquePut,
  uniquePutField,
  uniqueWrites,
  withUniques,
} from '../../../shared/data/unique-keys.js';
import { validateDefinition } from '../../../shared/registry/index.js';

const TABLE = 'Records';
const tables = { records: TABLE, events: 'Events', history: 'History' };

const members = validateDefinition({
  name: 'member',
  slug: 'members',
  tableName: 'members',
  idFormat: { type: 'prefixed', prefix: 'mem' },
  fields: {
    name: { type: 'string' },
    email: { type: 'string', unique: true },
    badge: { type: 'number', unique: true },
  },
  access: { public: false, shared: true },
  softDelete: true,
});

const listings = validateDefinition({
  name: 'listing',
  slug: 'listings',
  tableName: 'listings',
  idFormat: { type: 'uuid' },
  fields: { sku: { type: 'string', unique: true } },
  access: { public: true, shared: true },
});

function member(data: Record<string, unknown>, overrides: Partial<StoredRecord> = {}): StoredRecord {
  return {
    entity: 'members',
    id: 'mem_A',
    tenantId: 'ten_1',
    ownerId: 'usr_1',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    version: 1,
    data,
    ...overrides,
  };
}

const puts = (items: TransactItem[]) => items.filter((i) => uniquePutField(i) !== undefined).map((i) => i.Put!.Item!.pk);
const deletes = (items: TransactItem[]) => items.filter((i) => i.Delete && String(i.Delete.Key!.pk).includes('#unique#')).map((i) => i.Delete!.Key!.pk);

describe('uniqueKey', () => {
  it('scopes a value to the tenant, with the agreed layout', () => {
    expect(uniqueKey(members, 'ten_1', 'email', 'ada@example.com')).toEqual({ pk: 'ten_1#members#unique#email=ada%40example.com', sk: UNIQUE_SK });
  });

  it('scopes a public entity’s value to every tenant', () => {
    expect(uniqueKey(listings, 'ten_1', 'sku', 'A 1')).toEqual({ pk: `${PUBLIC_SCOPE}#listings#unique#sku=A%201`, sk: '#unique' });
    expect(uniqueKey(listings, 'ten_2', 'sku', 'A 1')).toEqual(uniqueKey(listings, 'ten_1', 'sku', 'A 1'));
  });

  it('encodes the value with encodeURIComponent(String(value)), so # and = cannot collide', () => {
    expect(uniqueKey(members, 't', 'badge', 42).pk).toBe('t#members#unique#badge=42');
    expect(uniqueKey(members, 't', 'email', 'a#b=c').pk).toBe(`t#members#unique#email=${encodeURIComponent('a#b=c')}`);
  });

  it('keeps a lone surrogate distinct instead of throwing', () => {
    expect(uniqueKey(members, 't', 'email', '\uD800').pk).toBe('t#members#unique#email=%uD800');
  });
});

describe('uniqueness items', () => {
  it('builds the item with kind, entity, field, recordId and tenantId', () => {
    expect(uniqueItem(members, { id: 'mem_A', tenantId: 'ten_1' }, 'email', 'a@b.c')).toEqual({
      pk: 'ten_1#members#unique#email=a%40b.c',
      sk: '#unique',
      kind: 'unique',
      entity: 'members',
      field: 'email',
      recordId: 'mem_A',
      tenantId: 'ten_1',
    });
  });

  it('acquires with a conditional Put and releases with a Delete', () => {
    const item = uniqueItem(members, { id: 'mem_A', tenantId: 'ten_1' }, 'email', 'a@b.c');

    expect(uniquePut(TABLE, item)).toEqual({ Put: { TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } });
    expect(uniqueDelete(TABLE, item)).toEqual({ Delete: { TableName: TABLE, Key: { pk: item.pk, sk: item.sk } } });
    expect(uniquePutField(uniquePut(TABLE, item))).toBe('email');
    expect(uniquePutField(uniqueDelete(TABLE, item))).toBeUndefined();
  });

  it('lists the unique fields in definition order', () => {
    expect(uniqueFields(members)).toEqual(['email', 'badge']);
  });
});

describe('uniqueWrites', () => {
  it('acquires every value of a new record, none for null or absent values', () => {
    const writes = uniqueWrites(members, TABLE, undefined, member({ email: 'a@b.c', badge: null }));

    expect(writes.holds).toEqual(['email']);
    expect(puts(writes.items)).toEqual(['ten_1#members#unique#email=a%40b.c']);
  });

  it('keeps a held value that does not change: nothing written', () => {
    const before = member({ email: 'a@b.c' }, { uniques: ['email'] });

    const writes = uniqueWrites(members, TABLE, before, member({ email: 'a@b.c', name: 'x' }, { uniques: ['email'] }));

    expect(writes).toEqual({ holds: ['email'], items: [] });
  });

  it('releases the old value and acquires the new one when the value changes', () => {
    const before = member({ email: 'old@b.c' }, { uniques: ['email'] });

    const writes = uniqueWrites(members, TABLE, before, member({ email: 'new@b.c' }));

    expect(writes.holds).toEqual(['email']);
    expect(deletes(writes.items)).toEqual(['ten_1#members#unique#email=old%40b.c']);
    expect(puts(writes.items)).toEqual(['ten_1#members#unique#email=new%40b.c']);
  });

  it('leaves an unchanged value the record does not hold (a duplicate from before the rule) unheld', () => {
    const before = member({ email: 'dup@b.c' });

    expect(uniqueWrites(members, TABLE, before, member({ email: 'dup@b.c', name: 'renamed' }))).toEqual({ holds: [], items: [] });
  });

  it('acquires a new value on a record that held none, and never deletes what it does not hold', () => {
    const writes = uniqueWrites(members, TABLE, member({ email: 'dup@b.c' }), member({ email: 'own@b.c' }));

    expect(deletes(writes.items)).toEqual([]);
    expect(puts(writes.items)).toEqual(['ten_1#members#unique#email=own%40b.c']);
  });

  it('releases everything held on delete and on soft delete', () => {
    const before = member({ email: 'a@b.c', badge: 7 }, { uniques: ['email', 'badge'] });

    const hard = uniqueWrites(members, TABLE, before, undefined);
    const soft = uniqueWrites(members, TABLE, before, { ...before, deletedAt: '2026-02-01T00:00:00.000Z' });

    expect(hard.holds).toEqual([]);
    expect(deletes(hard.items).sort()).toEqual(['ten_1#members#unique#badge=7', 'ten_1#members#unique#email=a%40b.c']);
    expect(soft).toEqual(hard);
  });

  it('releases a value whose field is no longer unique', () => {
    const before = member({ name: 'Ada' }, { uniques: ['name'] });

    const writes = uniqueWrites(members, TABLE, before, member({ name: 'Ada' }));

    expect(writes.holds).toEqual([]);
    expect(deletes(writes.items)).toEqual(['ten_1#members#unique#name=Ada']);
  });
});

describe('uniqueness in the write transactions', () => {
  const event = { pk: 'e', sk: 'e' };
  const layout = definitionLayout(members);

  it('puts the record with `uniques` and each value in the create transaction', () => {
    const items = createTransaction(layout, member({ email: 'a@b.c', badge: 3 }), event, tables);

    expect(items[0].Put!.Item!.uniques).toEqual(['email', 'badge']);
    expect(puts(items)).toHaveLength(2);
  });

  it('never puts `uniques` on a listing copy', () => {
    const items = createTransaction(layout, member({ email: 'a@b.c' }), event, tables);

    const copies = items.filter((i) => i.Put?.Item?.kind === 'index');
    expect(copies.every((c) => !('uniques' in c.Put!.Item!))).toBe(true);
  });

  it('moves the value in the update transaction and records what the record holds', () => {
    const before = member({ email: 'old@b.c' }, { uniques: ['email'] });
    const after = member({ email: 'new@b.c' }, { uniques: ['email'], version: 2 });

    const items = updateTransaction(layout, before, after, event, tables);

    expect(items[0].Put!.Item!.uniques).toEqual(['email']);
    expect(puts(items)).toHaveLength(1);
    expect(deletes(items)).toHaveLength(1);
  });

  it('drops `uniques` from a soft-deleted record and releases its values', () => {
    const before = member({ email: 'a@b.c' }, { uniques: ['email'] });

    const items = updateTransaction(layout, before, { ...before, deletedAt: '2026-02-01T00:00:00.000Z', version: 2 }, event, tables);

    const record = items.find((i) => i.Put?.Item?.kind === 'record')!;
    expect('uniques' in record.Put!.Item!).toBe(false);
    expect(deletes(items)).toEqual(['ten_1#members#unique#email=a%40b.c']);
  });

  it('releases only the held values in the delete transaction', () => {
    const before = member({ email: 'a@b.c', badge: 5 }, { uniques: ['badge'] });

    expect(deletes(deleteTransaction(layout, before, event, tables))).toEqual(['ten_1#members#unique#badge=5']);
  });
});

describe('helpers', () => {
  it('withUniques sets the list, or removes it when empty', () => {
    expect(withUniques(member({}), ['email']).uniques).toEqual(['email']);
    expect('uniques' in withUniques(member({}, { uniques: ['email'] }), [])).toBe(false);
  });

  it('oversizedUniques names a new value whose key would pass 2048 bytes', () => {
    const long = '\u{1F600}'.repeat(200);

    expect(oversizedUniques(members, undefined, member({ email: long }))).toEqual(['email']);
    expect(oversizedUniques(members, undefined, member({ email: 'short@b.c' }))).toEqual([]);
  });
});

describe('while a field\'s uniqueness is being built', () => {
  const event = { pk: 'e', sk: 'e' };
  const building = buildLayout(members, { indexes: [], legacy: [], defaults: {}, settled: false, writeShards: 1, uniqueBuilding: ['email'] }, 0);
  const refusal = (write: () => unknown) => {
    try {
      write();
    } catch (error) {
      return error as ApiError;
    }
    return undefined;
  };

  it('refuses a create that sets the field: 503 SERVICE_UNAVAILABLE with Retry-After, naming it', () => {
    const error = refusal(() => createTransaction(building, member({ email: 'a@b.c', badge: 3 }), event, tables));

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '5' }, details: { email: expect.any(String) } });
    expect(Object.keys(error!.details!)).toEqual(['email']);
  });

  it('lets a create that leaves the field out through, acquiring the complete fields\' values', () => {
    const items = createTransaction(building, member({ badge: 3 }), event, tables);

    expect(items[0].Put!.Item!.uniques).toEqual(['badge']);
    expect(puts(items)).toHaveLength(1);
  });

  it('lets updates through that take no new value of it: other fields, a held value kept, an unheld value kept, the value cleared', () => {
    const held = member({ email: 'a@b.c', name: 'x' }, { uniques: ['email'] });
    const unheld = member({ email: 'a@b.c', name: 'x' });

    expect(puts(updateTransaction(building, held, { ...held, data: { ...held.data, name: 'y' }, version: 2 }, event, tables))).toEqual([]);
    expect(puts(updateTransaction(building, unheld, { ...unheld, data: { ...unheld.data, name: 'y' }, version: 2 }, event, tables))).toEqual([]);
    expect(deletes(updateTransaction(building, held, { ...held, data: { name: 'x' }, version: 2 }, event, tables))).toHaveLength(1);
    expect(deletes(deleteTransaction(building, held, event, tables))).toHaveLength(1);
  });

  it('refuses an update that sets a new value of it, held before or not', () => {
    const held = member({ email: 'a@b.c' }, { uniques: ['email'] });
    const unheld = member({ email: 'a@b.c' });

    expect(refusal(() => updateTransaction(building, held, { ...held, data: { email: 'new@b.c' }, version: 2 }, event, tables))).toMatchObject({ status: 503 });
    expect(refusal(() => updateTransaction(building, unheld, { ...unheld, data: { email: 'new@b.c' }, version: 2 }, event, tables))).toMatchObject({ status: 503 });
    expect(refusal(() => updateTransaction(building, member({}), { ...member({ email: 'a@b.c' }), version: 2 }, event, tables))).toMatchObject({ status: 503 });
  });

  it('names the keys a write would acquire in the fields being built (to tell a held value from an unknown one)', () => {
    const record = member({ email: 'a@b.c', badge: 3 });

    expect(buildingAcquisitions(members, building.uniqueBuilding, undefined, record)).toEqual([{ field: 'email', key: uniqueKey(members, 'ten_1', 'email', 'a@b.c') }]);
    expect(buildingAcquisitions(members, new Set(), undefined, record)).toEqual([]);
    expect(definitionLayout(members).uniqueBuilding.size).toBe(0);
  });
});
