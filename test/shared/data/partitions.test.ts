import { beforeAll, describe, expect, it } from 'vitest';
import type { LiveLayout } from '../../../shared/data/layout.js';
import type { LoadedEntity } from '../../../shared/registry/index.js';
import { definitionLayout } from '../../../shared/data/layout.js';
import { createTransaction } from '../../../shared/data/transactions.js';
import { eventItem } from '../../../shared/data/change-events.js';
import { COUNTER_SK, totalSource } from '../../../shared/data/counters.js';
import { listingPartitionFor, listingPartitions } from '../../../shared/data/listings.js';
import { dayPartition, homeCounts, homeKey, homeShards, invertedTime, isDayPartition, keyShardCount, listingSortKey, movedKeys, recordKey, recordKeys, shardKey, shardKeys, shardOf } from '../../../shared/data/partitions.js';
import { encodeKeyValue, type StoredRecord } from '../../../shared/data/record-item.js';
import { newRecordId } from '../../../shared/ids.js';
import { changingShards, definitions, kinds, shardsChanged, tables, task } from './support.js';

let entities: Record<string, LoadedEntity>;
let layouts: Record<string, LiveLayout>;

beforeAll(async () => {
  ({ entities, layouts } = await definitions());
});

describe('keys', () => {
  it('encodes key values like encodeURIComponent, and a lone surrogate as %uXXXX instead of throwing', () => {
    expect(encodeKeyValue('a#b=c é 😀')).toBe(encodeURIComponent('a#b=c é 😀'));
    expect(encodeKeyValue('x\ud800y\udc00')).toBe('x%uD800y%uDC00');
    expect(encodeKeyValue('\ud800')).not.toBe(encodeKeyValue('\ufffd'));
  });

  it('stores a record whose id carries no time under <table>#<id>', () => {
    expect(recordKey(layouts.tasks, 'tsk_A', 'ten_1')).toEqual({ pk: 'tasks#tsk_A', sk: '#record' });
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
    expect(listingPartitions(layouts.tasks, task({}, { assigneeId: 'usr_2' }))).toEqual([
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

    expect(listingPartitions(layouts.tags, tag)).toEqual(['ten_1#tags']);
    const k = shardOf(product.id, 20);
    expect(listingPartitions(layouts.products, product)).toEqual(['products', 'products#status=active', 'products#category=a%23b%3Dc']);
    expect(listingPartitions(definitionLayout({ ...entities.products, writeShards: 20 }), product)).toEqual([`products#~${k}/20`, `products#status=active#~${k}/20`, `products#category=a%23b%3Dc#~${k}/20`]);
  });

  it('lists a soft-deleted record nowhere', () => {
    expect(listingPartitions(layouts.customers, { ...task(), entity: 'customers', deletedAt: '2026-01-02T00:00:00.000Z', data: { name: 'c' } })).toEqual([]);
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

describe('write shards', () => {
  const sharded = (shards: number): LoadedEntity => ({ ...entities.tasks, writeShards: shards });

  it('puts a record, its copies, its counters and its event on the one shard its id picks', () => {
    const layout = definitionLayout(sharded(8));
    const id = newRecordId(layout.entity.idFormat, Date.parse('2026-01-01T00:00:00.000Z'));
    const record = task({ id });
    const k = shardOf(id, 8);

    const items = kinds(createTransaction(layout, record, eventItem(layout, 'created', record, record.data, { eventId: 'evt_1', suffix: 'a', now: record.createdAt }), tables, 0));

    expect(recordKey(layout, id, 'ten_1').pk).toBe(`ten_1#tasks#~${k}/8`);
    expect(items).toEqual([
      `Put Records ten_1#tasks#~${k}/8 ${listingSortKey(record)}`,
      `Put Records ten_1#tasks#owner=usr_1#~${k}/8 ${listingSortKey(record)}`,
      `Put Records ten_1#tasks#status=todo#~${k}/8 ${listingSortKey(record)}`,
      `Put Records ten_1#tasks#owner=usr_1#status=todo#~${k}/8 ${listingSortKey(record)}`,
      expect.stringMatching(/^Put Records ten_1#tasks#priority=medium#~/),
      expect.stringMatching(/^Put Records ten_1#tasks#owner=usr_1#priority=medium#~/),
      expect.stringMatching(new RegExp(`^Update ten_1#tasks#~${k}/8 #count#0 `)),
      `Update ten_1#tasks#days#~${k}/8 createdAt#2026-01#0 2026-01-01 1`,
      expect.stringMatching(new RegExp(`^Update ten_1#tasks#owner=usr_1#~${k}/8 #count#0 `)),
      `Update ten_1#tasks#owner=usr_1#days#~${k}/8 createdAt#2026-01#0 2026-01-01 1`,
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
    // products: writeShards 'auto', on 1 shard until the controller splits it.
    expect(totalSource(layouts.products, 'products').shards).toBe(1);
    expect(totalSource(definitionLayout({ ...entities.products, writeShards: 8 }), 'products').shards).toBe(8);
    expect(totalSource(layouts.tags, 'ten_1#tags').shards).toBe(1);
  });
});

describe('day counter partitions', () => {
  it('put a listing shard\'s day counters on a key of their own, named before the shard suffix, so a shard count is read from it', () => {
    expect(dayPartition('ten_1#tasks')).toBe('ten_1#tasks#days');
    expect(dayPartition(shardKey('products', 3, 8))).toBe('products#days#~3/8');
    expect(shardKeys(dayPartition('products'), 8)[3]).toBe(dayPartition(shardKey('products', 3, 8)));
    expect(keyShardCount(dayPartition(shardKey('products', 3, 8)))).toBe(8);
  });

  it('are told apart from listing partitions, an indexed field named days among them', () => {
    expect([isDayPartition('products#days'), isDayPartition('products#days#~0/2'), isDayPartition('products#days=x'), isDayPartition('products')]).toEqual([true, true, false, false]);
  });
});

describe('the record item while write shards change', () => {
  const createdAt = '2026-11-23T04:00:00.123Z';
  let id: string;
  const timed = (ws?: number[]): StoredRecord => task({ id, createdAt, updatedAt: createdAt, ...(ws ? { ws } : {}) });
  beforeAll(() => {
    id = newRecordId(entities.tasks.idFormat, Date.parse(createdAt));
  });

  it('stands under the last shard count its record is listed under: the write count once it is listed under it', () => {
    const layout = changingShards(entities.tasks, 1, 4);
    const sk = listingSortKey(timed());
    const k = shardOf(timed().id, 4);

    expect(homeShards(timed())).toBe(1);
    expect(homeShards(timed([1, 4]))).toBe(4);
    expect(homeShards(timed([4, 2]))).toBe(2);
    expect(homeKey(layout, timed())).toEqual({ pk: 'ten_1#tasks', sk });
    expect(homeKey(layout, timed([1, 4]))).toEqual({ pk: `ten_1#tasks#~${k}/4`, sk });
    expect(homeKey(layout, timed([4]))).toEqual({ pk: `ten_1#tasks#~${k}/4`, sk });
    expect(homeKey(layout, { ...timed([1, 4]), deletedAt: createdAt })).toEqual({ pk: `tasks#${timed().id}`, sk: '#record' });
  });

  it('is looked for under both counts while the pass runs, and under the write count alone otherwise (one GetItem)', () => {
    const k = shardOf(id, 4);
    const sk = listingSortKey(timed());

    expect(recordKeys(changingShards(entities.tasks, 1, 4), id, 'ten_1')).toEqual([
      { pk: `ten_1#tasks#~${k}/4`, sk },
      { pk: 'ten_1#tasks', sk },
    ]);
    expect(homeCounts(changingShards(entities.tasks, 1, 4, true))).toEqual([4]);
    expect(recordKeys(changingShards(entities.tasks, 1, 4, true), id, 'ten_1')).toEqual([{ pk: `ten_1#tasks#~${k}/4`, sk }]);
    expect(recordKeys(shardsChanged(entities.tasks, 1, 4), id, 'ten_1')).toEqual([{ pk: `ten_1#tasks#~${k}/4`, sk }]);
    expect(recordKeys(layouts.tasks, id, 'ten_1')).toEqual([{ pk: 'ten_1#tasks', sk }]);
  });

  it('is looked for under the doubled and halved counts when a listing copy stood where the layout put it (a change this process has not read yet)', () => {
    const sk = listingSortKey(timed());

    expect(movedKeys(layouts.tasks, id, 'ten_1')).toEqual([{ pk: `ten_1#tasks#~${shardOf(id, 2)}/2`, sk }]);
    expect(movedKeys(shardsChanged(entities.tasks, 1, 4), id, 'ten_1')).toEqual([
      { pk: `ten_1#tasks#~${shardOf(id, 8)}/8`, sk },
      { pk: `ten_1#tasks#~${shardOf(id, 2)}/2`, sk },
    ]);
    expect(movedKeys(layouts.tasks, 'tsk_A', 'ten_1')).toEqual([]);
  });

  it('keeps a public entity\'s record, and one whose id carries no time, detached: one key whatever the shards', () => {
    const layout = changingShards(entities.tasks, 1, 4);
    const publicLayout = changingShards(entities.products, 1, 4);
    const product = newRecordId(entities.products.idFormat, Date.parse(createdAt));

    expect(recordKeys(layout, 'tsk_A', 'ten_1')).toEqual([{ pk: 'tasks#tsk_A', sk: '#record' }]);
    expect(recordKeys(publicLayout, product, 'ten_1')).toEqual([{ pk: `products#${product}`, sk: '#record' }]);
  });
});
