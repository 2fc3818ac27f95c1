import { beforeAll, describe, expect, it } from 'vitest';
import {
  COUNTER_SK,
  consolidatedFields,
  COPY_MAX_BYTES,
  copyItem,
  createTransaction,
  deleteTransaction,
  encodeKeyValue,
  eventItem,
  fromItem,
  invertedTime,
  isPartialCopy,
  itemSize,
  listingPartitionFor,
  listingPartitions,
  listingSortKey,
  recordKey,
  reshard,
  shardKeys,
  shardOf,
  totalSource,
  updateTransaction,
  type StoredRecord,
  type TransactItem,
} from '../../../shared/data/records-keys.js';
import { newRecordId } from '../../../shared/ids.js';
import { DEFAULT_PUBLIC_WRITE_SHARDS, loadDefinitions, type LoadedEntity } from '../../../shared/registry/index.js';

let entities: Record<string, LoadedEntity>;
const tables = { records: 'Records', events: 'Events' };

beforeAll(async () => {
  entities = Object.fromEntries((await loadDefinitions()).map((e) => [e.slug, e]));
});

function task(overrides: Partial<StoredRecord> = {}, data: Record<string, unknown> = {}): StoredRecord {
  return {
    entity: 'tasks',
    id: 'tsk_A',
    tenantId: 'ten_1',
    ownerId: 'usr_1',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    version: 1,
    data: { title: 'T', status: 'todo', priority: 'medium', ...data },
    ...overrides,
  };
}

const event = { pk: 'ten_1#tasks', sk: 'e' };

function kinds(items: TransactItem[]): string[] {
  return items.map((i) => {
    if (i.Put) return `Put ${i.Put.TableName} ${String(i.Put.Item!.pk)} ${String(i.Put.Item!.sk)}`;
    if (i.Delete) return `Delete ${String(i.Delete.Key!.pk)} ${String(i.Delete.Key!.sk)}`;
    if (i.Update) {
      const names = i.Update.ExpressionAttributeNames!;
      const values = i.Update.ExpressionAttributeValues!;
      const adds = Object.keys(values)
        .filter((k) => k.startsWith(':d'))
        .map((k) => `${names[`#a${k.slice(2)}`]} ${String(values[k])}`);
      return `Update ${String(i.Update.Key!.pk)} ${String(i.Update.Key!.sk)} ${adds.join(', ')}`;
    }
    return 'other';
  });
}

describe('keys', () => {
  it('encodes key values like encodeURIComponent, and a lone surrogate as %uXXXX instead of throwing', () => {
    expect(encodeKeyValue('a#b=c é 😀')).toBe(encodeURIComponent('a#b=c é 😀'));
    expect(encodeKeyValue('x\ud800y\udc00')).toBe('x%uD800y%uDC00');
    expect(encodeKeyValue('\ud800')).not.toBe(encodeKeyValue('\ufffd'));
  });

  it('stores a record whose id carries no time under <table>#<id>', () => {
    expect(recordKey(entities.tasks, 'tsk_A', 'ten_1')).toEqual({ pk: 'tasks#tsk_A', sk: '#record' });
  });

  it('inverts createdAt so that an ascending Query gives newest first, then id ascending', () => {
    const older = listingSortKey({ createdAt: '2026-01-01T00:00:00.000Z', id: 'tsk_B' });
    const newer = listingSortKey({ createdAt: '2026-01-01T00:00:00.001Z', id: 'tsk_Z' });
    const sameTimeA = listingSortKey({ createdAt: '2026-01-01T00:00:00.001Z', id: 'tsk_A' });

    expect(invertedTime('1970-01-01T00:00:00.000Z')).toBe('9999999999999');
    expect(invertedTime('2026-01-01T00:00:00.000Z')).toHaveLength(13);
    expect([older, newer, sameTimeA].sort()).toEqual([sameTimeA, newer, older]);
    expect(COUNTER_SK < sameTimeA).toBe(true);
  });

  it('lists a private record in the tenant and owner partitions, and per indexed field value', () => {
    expect(listingPartitions(entities.tasks, task({}, { assigneeId: 'usr_2' }))).toEqual([
      'ten_1#tasks',
      'ten_1#tasks#owner=usr_1',
      'ten_1#tasks#status=todo',
      'ten_1#tasks#owner=usr_1#status=todo',
      'ten_1#tasks#priority=medium',
      'ten_1#tasks#owner=usr_1#priority=medium',
      'ten_1#tasks#assigneeId=usr_2',
      'ten_1#tasks#owner=usr_1#assigneeId=usr_2',
    ]);
  });

  it('lists a shared record in the tenant partition only, a public one in the global partition', () => {
    const tag: StoredRecord = { ...task(), entity: 'tags', data: { name: 'x' } };
    const product: StoredRecord = { ...task(), entity: 'products', data: { name: 'p', price: 1, status: 'active', category: 'a#b=c' } };

    expect(listingPartitions(entities.tags, tag)).toEqual(['ten_1#tags']);
    const k = shardOf(product.id, DEFAULT_PUBLIC_WRITE_SHARDS);
    expect(listingPartitions(entities.products, product)).toEqual([`products#~${k}/20`, `products#status=active#~${k}/20`, `products#category=a%23b%3Dc#~${k}/20`]);
  });

  it('lists a soft-deleted record nowhere', () => {
    expect(listingPartitions(entities.customers, { ...task(), entity: 'customers', deletedAt: '2026-01-02T00:00:00.000Z', data: { name: 'c' } })).toEqual([]);
  });

  it('picks the partition a caller lists: own for users, the tenant for admins and shared entities, global for public', () => {
    const user = { tenantId: 'ten_1', userId: 'usr_1', admin: false };
    const admin = { tenantId: 'ten_1', userId: 'usr_9', admin: true };

    expect(listingPartitionFor(entities.tasks, user)).toBe('ten_1#tasks#owner=usr_1');
    expect(listingPartitionFor(entities.tasks, admin)).toBe('ten_1#tasks');
    expect(listingPartitionFor(entities.tags, user)).toBe('ten_1#tags');
    expect(listingPartitionFor(entities.products, { admin: false })).toBe('products');
    expect(listingPartitionFor(entities.comments, user, { field: 'taskId', value: 'tsk_A' })).toBe('ten_1#comments#owner=usr_1#taskId=tsk_A');
    expect(() => listingPartitionFor(entities.tasks, { admin: false })).toThrow();
  });
});

describe('transactions', () => {
  it('create: the record only if new, a copy and +1 per partition, then the event', () => {
    const items = createTransaction(entities.tags, { ...task(), entity: 'tags', id: 'tag_A', data: { name: 'x' } }, event, tables, 4);

    expect(kinds(items)).toEqual([
      'Put Records tags#tag_A #record',
      `Put Records ten_1#tags ${listingSortKey({ createdAt: '2026-01-01T00:00:00.000Z', id: 'tag_A' })}`,
      'Update ten_1#tags #count#4 count 1',
      'Put Events ten_1#tasks e',
    ]);
    expect(items[0].Put!.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(items[1].Put!.Item).toMatchObject({ kind: 'index', id: 'tag_A', tenantId: 'ten_1', data: { name: 'x' } });
  });

  it('create of a task writes 8 copies and 4 counter items: status and priority are counted in the base partitions\' items, the assignee has its own', () => {
    const items = createTransaction(entities.tasks, task({}, { assigneeId: 'usr_2' }), event, tables, 0);

    expect(items).toHaveLength(1 + 8 + 4 + 1);
    expect(kinds(items).filter((k) => k.startsWith('Update'))).toEqual([
      'Update ten_1#tasks #count#0 count 1, #status=todo 1, #priority=medium 1',
      'Update ten_1#tasks#owner=usr_1 #count#0 count 1, #status=todo 1, #priority=medium 1',
      'Update ten_1#tasks#assigneeId=usr_2 #count#0 count 1',
      'Update ten_1#tasks#owner=usr_1#assigneeId=usr_2 #count#0 count 1',
    ]);
  });

  it('counts enum and boolean fields in the base counters while they fit, references and free text apart', () => {
    expect([...consolidatedFields(entities.tasks)]).toEqual(['status', 'priority']);
    expect([...consolidatedFields(entities.products)]).toEqual(['status']);
    const many = { fields: { a: { type: 'enum' as const, indexed: true, values: Array.from({ length: 200 }, (_, i) => `value-${i}`) }, b: { type: 'boolean' as const, indexed: true } } };
    expect([...consolidatedFields(many)]).toEqual(['b']);
  });

  it('a retry moves every counter Update to another shard and leaves the rest alone', () => {
    const items = createTransaction(entities.tasks, task(), event, tables, 2);

    const moved = reshard(items, 9);

    expect(kinds(moved).filter((k) => k.startsWith('Update')).map((k) => k.split(' ')[2])).toEqual(['#count#9', '#count#9']);
    expect(moved.filter((i) => !i.Update)).toEqual(items.filter((i) => !i.Update));
  });

  it('update: guarded by version, fresh copies everywhere, copies and counters moved for changed indexed values', () => {
    const before = task();
    const after = task({ version: 2, updatedAt: '2026-01-01T00:00:01.000Z' }, { status: 'completed' });
    const sk = listingSortKey(before);

    const items = updateTransaction(entities.tasks, before, after, event, tables, 1);

    expect(items[0].Put!.ConditionExpression).toContain('#version = :version');
    expect(items[0].Put!.ExpressionAttributeValues).toEqual({ ':version': 1 });
    expect(kinds(items)).toEqual([
      'Put Records tasks#tsk_A #record',
      `Put Records ten_1#tasks ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1 ${sk}`,
      `Put Records ten_1#tasks#status=completed ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1#status=completed ${sk}`,
      `Put Records ten_1#tasks#priority=medium ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1#priority=medium ${sk}`,
      `Delete ten_1#tasks#status=todo ${sk}`,
      `Delete ten_1#tasks#owner=usr_1#status=todo ${sk}`,
      'Update ten_1#tasks #count#1 #status=completed 1, #status=todo -1',
      'Update ten_1#tasks#owner=usr_1 #count#1 #status=completed 1, #status=todo -1',
      'Put Events ten_1#tasks e',
    ]);
  });

  it('update of a field that is in no partition key: the copies and the record, no counter', () => {
    const before = task();
    const after = task({ version: 2, updatedAt: '2026-01-01T00:00:01.000Z' }, { title: 'U' });

    expect(updateTransaction(entities.tasks, before, after, event, tables).filter((i) => i.Update)).toEqual([]);
  });

  it('soft delete (an update to deletedAt): every copy removed, every counter -1', () => {
    const before: StoredRecord = { ...task(), entity: 'customers', data: { name: 'c' } };
    const after = { ...before, version: 2, deletedAt: '2026-01-02T00:00:00.000Z' };

    expect(kinds(updateTransaction(entities.customers, before, after, event, tables, 3))).toEqual([
      'Put Records customers#tsk_A #record',
      `Delete ten_1#customers ${listingSortKey(before)}`,
      `Delete ten_1#customers#owner=usr_1 ${listingSortKey(before)}`,
      'Update ten_1#customers #count#3 count -1',
      'Update ten_1#customers#owner=usr_1 #count#3 count -1',
      'Put Events ten_1#tasks e',
    ]);
  });

  it('hard delete: the record if unchanged, every copy, every counter -1, the event', () => {
    const items = deleteTransaction(entities.tags, { ...task(), entity: 'tags', data: { name: 'x' } }, event, tables, 5);

    expect(kinds(items)).toEqual(['Delete tags#tsk_A #record', `Delete ten_1#tags ${listingSortKey(task())}`, 'Update ten_1#tags #count#5 count -1', 'Put Events ten_1#tasks e']);
    expect(items[0].Delete!.ConditionExpression).toContain('#version = :version');
  });
});

describe('a record that stands as its own copy in the tenant listing (an id that carries its time)', () => {
  const createdAt = '2026-11-23T04:00:00.123Z';
  const timed = (entity: LoadedEntity, overrides: Partial<StoredRecord> = {}): StoredRecord =>
    task({ entity: entity.slug, id: newRecordId(entity.idFormat, Date.parse(createdAt)), createdAt, updatedAt: createdAt, ...overrides });

  it('is stored at its place in the tenant partition, found from the id and the tenant alone', () => {
    const record = timed(entities.tasks);

    expect(recordKey(entities.tasks, record.id, 'ten_1')).toEqual({ pk: 'ten_1#tasks', sk: listingSortKey(record) });
    expect(recordKey(entities.tasks, record.id, 'ten_2').pk).toBe('ten_2#tasks');
    expect(recordKey(entities.tasks, record.id, undefined)).toEqual({ pk: `tasks#${record.id}`, sk: '#record' });
  });

  it('is not, for a public entity: every tenant\'s records would share one partition', () => {
    const id = newRecordId(entities.products.idFormat, Date.parse(createdAt));

    expect(recordKey(entities.products, id, 'ten_1')).toEqual({ pk: `products#${id}`, sk: '#record' });
  });

  it('create: the record in the tenant partition and no copy there; the other copies, counters and event as before', () => {
    const record = timed(entities.tasks);
    const items = createTransaction(entities.tasks, record, event, tables, 0);
    const sk = listingSortKey(record);

    expect(kinds(items)).toEqual([
      `Put Records ten_1#tasks ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1 ${sk}`,
      `Put Records ten_1#tasks#status=todo ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1#status=todo ${sk}`,
      `Put Records ten_1#tasks#priority=medium ${sk}`,
      `Put Records ten_1#tasks#owner=usr_1#priority=medium ${sk}`,
      'Update ten_1#tasks #count#0 count 1, #status=todo 1, #priority=medium 1',
      'Update ten_1#tasks#owner=usr_1 #count#0 count 1, #status=todo 1, #priority=medium 1',
      'Put Events ten_1#tasks e',
    ]);
    expect(items[0].Put!).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)', Item: { kind: 'record', id: record.id, copiesVersion: 1 } });
  });

  it('update: the record rewritten in place under the version guard, the other copies rewritten', () => {
    const before = timed(entities.tasks);
    const after = { ...before, version: 2, updatedAt: '2026-11-23T05:00:00.000Z', data: { ...before.data, title: 'U' } };
    const items = updateTransaction(entities.tasks, before, after, event, tables);

    expect(kinds(items)).toHaveLength(1 + 5 + 1);
    expect(kinds(items)[0]).toBe(`Put Records ten_1#tasks ${listingSortKey(before)}`);
    expect(items[0].Put!.ConditionExpression).toContain('#version = :version');
  });

  it('soft delete: the record leaves the listing (guarded Delete) for its detached key; the other copies go', () => {
    const before = { ...timed(entities.customers), data: { name: 'c' } };
    const after = { ...before, version: 2, deletedAt: '2026-11-24T00:00:00.000Z' };
    const items = updateTransaction(entities.customers, before, after, event, tables, 3);

    expect(kinds(items)).toEqual([
      `Delete ten_1#customers ${listingSortKey(before)}`,
      `Put Records customers#${before.id} #record`,
      `Delete ten_1#customers#owner=usr_1 ${listingSortKey(before)}`,
      'Update ten_1#customers #count#3 count -1',
      'Update ten_1#customers#owner=usr_1 #count#3 count -1',
      'Put Events ten_1#tasks e',
    ]);
    expect(items[0].Delete!.ConditionExpression).toContain('#version = :version');
    expect(items[1].Put!.Item).toMatchObject({ kind: 'record', deletedAt: after.deletedAt });
  });

  it('hard delete: the record (guarded) and the other copies', () => {
    const before = { ...timed(entities.tags), data: { name: 'x' } };

    expect(kinds(deleteTransaction(entities.tags, before, event, tables, 5))).toEqual([
      `Delete ten_1#tags ${listingSortKey(before)}`,
      'Update ten_1#tags #count#5 count -1',
      'Put Events ten_1#tasks e',
    ]);
  });

  it('refuses a record whose createdAt is not the time its id carries (it would be listed twice)', () => {
    const record = timed(entities.tasks, { createdAt: '2026-11-23T04:00:00.124Z' });

    expect(() => createTransaction(entities.tasks, record, event, tables)).toThrow(/not the time its id carries/);
  });
});

describe('events', () => {
  it('carries the type <name>.<change>, the record, tenant and owner, and expires after 24 hours', () => {
    const record = task();
    const item = eventItem(entities.tasks, 'created', record, { id: 'tsk_A', title: 'T' }, { eventId: 'evt_1', suffix: 'abc', now: '2026-01-01T00:00:00.000Z' });

    expect(item).toEqual({
      pk: 'ten_1#tasks',
      sk: '2026-01-01T00:00:00.000Z#abc',
      id: 'evt_1',
      type: 'task.created',
      entity: 'tasks',
      recordId: 'tsk_A',
      tenantId: 'ten_1',
      ownerId: 'usr_1',
      data: { id: 'tsk_A', title: 'T' },
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: Date.parse('2026-01-02T00:00:00.000Z') / 1000,
    });
  });

  it('carries only the id for a delete', () => {
    const item = eventItem(entities.tasks, 'deleted', task(), { id: 'tsk_A', title: 'T' }, { eventId: 'evt_2', suffix: 'x', now: '2026-01-01T00:00:00.000Z' });

    expect(item).toMatchObject({ type: 'task.deleted', data: { id: 'tsk_A' } });
  });
});

describe('item size (as DynamoDB counts it)', () => {
  it('counts UTF-8 bytes of names and string values', () => {
    expect(itemSize({ pk: 'abc', é: 'ü€' })).toBe(2 + 3 + 2 + 5);
  });

  it('counts a number as 1 byte per two significant digits + 1, leading and trailing zeroes trimmed', () => {
    expect(itemSize({ n: 7 })).toBe(1 + 2);
    expect(itemSize({ n: 12345 })).toBe(1 + 4);
    expect(itemSize({ n: 1000 })).toBe(1 + 2);
    expect(itemSize({ n: -0.25 })).toBe(1 + 2);
  });

  it('counts null and booleans as 1 byte, lists and maps as 3 + 1 per element (+ key bytes), and leaves undefined out', () => {
    expect(itemSize({ a: null, b: true, c: undefined })).toBe(2 + 2);
    expect(itemSize({ l: ['ab', 'c'] })).toBe(1 + 3 + (1 + 2) + (1 + 1));
    expect(itemSize({ m: { k: 'v', kk: 1 } })).toBe(1 + 3 + (1 + 1 + 1) + (1 + 2 + 2));
    expect(itemSize({ m: {} })).toBe(1 + 3);
  });
});

describe('listing copies', () => {
  const long = 'a long description. '.repeat(100);

  it('is the whole record when the item fits in 1 KB', () => {
    const record = task({}, { description: 'short' });
    const copy = copyItem(entities.tasks, 'ten_1#tasks', record);

    expect(copy).toEqual({ pk: 'ten_1#tasks', sk: listingSortKey(record), kind: 'index', ...record });
    expect(isPartialCopy(copy)).toBe(false);
  });

  it('over 1 KB, keeps keys, bookkeeping and indexed fields, drops the largest other values first, and marks the copy partial', () => {
    const record = task(
      { deletedAt: undefined, metadata: { small: 1 }, metas: { m: 'x'.repeat(300) } },
      { description: long, assigneeId: 'usr_2', tagIds: ['tag_1'] },
    );
    const copy = copyItem(entities.tasks, 'ten_1#tasks#status=todo', record);

    expect(isPartialCopy(copy)).toBe(true);
    expect(itemSize(copy)).toBeLessThanOrEqual(COPY_MAX_BYTES);
    expect(copy).toMatchObject({ pk: 'ten_1#tasks#status=todo', sk: listingSortKey(record), kind: 'index', id: 'tsk_A', entity: 'tasks', tenantId: 'ten_1', ownerId: 'usr_1', version: 1 });
    expect(copy.createdAt).toBe(record.createdAt);
    expect(copy.updatedAt).toBe(record.updatedAt);
    // The description alone is over 1 KB: dropping it is enough, the metas (smaller) stay.
    expect(copy.data).toEqual({ title: 'T', status: 'todo', priority: 'medium', assigneeId: 'usr_2', tagIds: ['tag_1'] });
    expect(copy.metadata).toEqual({ small: 1 });
    expect(copy.metas).toEqual(record.metas);
    expect(fromItem(copy)).not.toHaveProperty('partial');
  });

  it('drops metadata and several fields when needed, indexed fields last', () => {
    const record = task({ metadata: { blob: 'm'.repeat(600) } }, { description: 'd'.repeat(700), title: 't'.repeat(200), assigneeId: 'usr_2' });
    const copy = copyItem(entities.tasks, 'ten_1#tasks', record);

    expect(itemSize(copy)).toBeLessThanOrEqual(COPY_MAX_BYTES);
    expect(copy).not.toHaveProperty('metadata');
    expect(copy.data).toEqual({ title: 't'.repeat(200), status: 'todo', priority: 'medium', assigneeId: 'usr_2' });
  });

  it('never passes 1 KB, even when indexed values alone would', () => {
    const record = task({}, { assigneeId: 'u'.repeat(900), description: long });
    const copy = copyItem(entities.tasks, 'ten_1#tasks', record);

    expect(itemSize(copy)).toBeLessThanOrEqual(COPY_MAX_BYTES);
    expect(copy.data).toEqual({ title: 'T', status: 'todo', priority: 'medium' });
  });

  it('create and update transactions write the capped copies', () => {
    const record = task({}, { description: long });
    const items = createTransaction(entities.tasks, record, { pk: 'e', sk: 'e' }, tables, 0);
    const copies = items.filter((i) => i.Put?.Item?.kind === 'index').map((i) => i.Put!.Item!);

    expect(copies).toHaveLength(6);
    for (const c of copies) {
      expect(isPartialCopy(c)).toBe(true);
      expect(itemSize(c)).toBeLessThanOrEqual(COPY_MAX_BYTES);
    }
  });
});

describe('updates that leave partial copies as they stand', () => {
  const long = 'a long description. '.repeat(100);
  const stored = (r: StoredRecord): StoredRecord => ({ ...r, copiesVersion: r.version });
  const copyPuts = (items: TransactItem[]) => items.filter((i) => i.Put?.Item?.kind === 'index').map((i) => String(i.Put!.Item!.pk));

  it('writes no copy when only a value the partial copies leave out changed', () => {
    const before = stored(task({}, { description: long }));
    const after = { ...before, data: { ...before.data, description: `${long} edited` }, updatedAt: '2026-01-02T00:00:00.000Z', version: 2 };

    const items = updateTransaction(entities.tasks, before, after, { pk: 'e', sk: 'e' }, tables, 0);

    expect(copyPuts(items)).toEqual([]);
    expect(items[0].Put!.Item).toMatchObject({ kind: 'record', version: 2, copiesVersion: 2, data: { description: `${long} edited` } });
  });

  it('rewrites every copy when a value they hold changed, when they were full, or when the record is of an earlier layout', () => {
    const before = stored(task({}, { description: long }));
    const retitled = { ...before, data: { ...before.data, title: 'New' }, version: 2 };
    const short = stored(task({}, { description: 'short' }));
    const edited = (r: StoredRecord) => ({ ...r, data: { ...r.data, description: `${String(r.data.description)} edited` }, version: 2 });

    expect(copyPuts(updateTransaction(entities.tasks, before, retitled, { pk: 'e', sk: 'e' }, tables, 0))).toHaveLength(6);
    expect(copyPuts(updateTransaction(entities.tasks, short, edited(short), { pk: 'e', sk: 'e' }, tables, 0))).toHaveLength(6);
    const earlier = { ...before, copiesVersion: undefined };
    expect(copyPuts(updateTransaction(entities.tasks, earlier, edited(earlier), { pk: 'e', sk: 'e' }, tables, 0))).toHaveLength(6);
    const lagging = { ...before, version: 3 };
    expect(copyPuts(updateTransaction(entities.tasks, lagging, edited(lagging), { pk: 'e', sk: 'e' }, tables, 0))).toHaveLength(6);
  });

  it('still moves copies between partitions when an indexed value changes', () => {
    const before = stored(task({}, { description: long }));
    const after = { ...before, data: { ...before.data, description: 'x'.repeat(2000), status: 'completed' }, version: 2 };

    const items = updateTransaction(entities.tasks, before, after, { pk: 'e', sk: 'e' }, tables, 0);

    // Every copy holds the status: all rewritten, the two in status=todo removed.
    expect(copyPuts(items).filter((pk) => pk.includes('status=completed'))).toHaveLength(2);
    expect(copyPuts(items)).toHaveLength(6);
    expect(items.filter((i) => i.Delete).map((i) => String(i.Delete!.Key!.pk))).toEqual(['ten_1#tasks#status=todo', 'ten_1#tasks#owner=usr_1#status=todo']);
  });

  it('never puts copiesVersion on a copy', () => {
    const record = stored(task({}, { description: 'short' }));

    expect(copyItem(entities.tasks, 'ten_1#tasks', record)).not.toHaveProperty('copiesVersion');
    expect(copyItem(entities.tasks, 'ten_1#tasks', { ...record, data: { ...record.data, description: long } })).not.toHaveProperty('copiesVersion');
  });
});

describe('write shards', () => {
  const sharded = (shards: number): LoadedEntity => ({ ...entities.tasks, writeShards: shards });

  it('puts a record, its copies, its counters and its event on the one shard its id picks', () => {
    const entity = sharded(8);
    const id = newRecordId(entity.idFormat, Date.parse('2026-01-01T00:00:00.000Z'));
    const record = task({ id });
    const k = shardOf(id, 8);

    const items = kinds(createTransaction(entity, record, eventItem(entity, 'created', record, record.data, { eventId: 'evt_1', suffix: 'a', now: record.createdAt }), tables, 0));

    expect(recordKey(entity, id, 'ten_1').pk).toBe(`ten_1#tasks#~${k}/8`);
    expect(items).toEqual([
      `Put Records ten_1#tasks#~${k}/8 ${listingSortKey(record)}`,
      `Put Records ten_1#tasks#owner=usr_1#~${k}/8 ${listingSortKey(record)}`,
      `Put Records ten_1#tasks#status=todo#~${k}/8 ${listingSortKey(record)}`,
      `Put Records ten_1#tasks#owner=usr_1#status=todo#~${k}/8 ${listingSortKey(record)}`,
      expect.stringMatching(/^Put Records ten_1#tasks#priority=medium#~/),
      expect.stringMatching(/^Put Records ten_1#tasks#owner=usr_1#priority=medium#~/),
      expect.stringMatching(new RegExp(`^Update ten_1#tasks#~${k}/8 #count#0 `)),
      expect.stringMatching(new RegExp(`^Update ten_1#tasks#owner=usr_1#~${k}/8 #count#0 `)),
      `Put Events ten_1#tasks#~${k}/8 ${record.createdAt}#a`,
    ]);
  });

  it('spreads ids evenly over the shards, and always gives an id the same one', () => {
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[shardOf(newRecordId(entities.tasks.idFormat, Date.now()), 16)] += 1;

    expect(Math.min(...counts)).toBeGreaterThan(850);
    expect(Math.max(...counts)).toBeLessThan(1150);
    expect(shardOf('tsk_A', 16)).toBe(shardOf('tsk_A', 16));
    expect(shardOf('tsk_A', 1)).toBe(0);
  });

  it('names every shard of a partition, and leaves an unsharded one as it is', () => {
    expect(shardKeys('products', 3)).toEqual(['products#~0/3', 'products#~1/3', 'products#~2/3']);
    expect(shardKeys('ten_1#tags', 1)).toEqual(['ten_1#tags']);
    expect(totalSource(entities.products, 'products').shards).toBe(DEFAULT_PUBLIC_WRITE_SHARDS);
    expect(totalSource(entities.tags, 'ten_1#tags').shards).toBe(1);
  });
});
