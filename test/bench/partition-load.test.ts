import { describe, expect, it } from 'vitest';
import { ceiling, isListingKey, KeyLoad, shardedPartition, shownKey, summarizeLoad } from '../../bench/partition-load.js';

const tables = { records: 'Records', events: 'Events', history: 'History' };

describe('KeyLoad', () => {
  it('adds WRU per table and partition key, leaving out other tables', () => {
    const load = new KeyLoad();

    load.add(
      [
        { table: 'Records', pk: 'products', wru: 2 },
        { table: 'Records', pk: 'products', wru: 2 },
        { table: 'Events', pk: 'products', wru: 2 },
        { table: 'Limits', pk: 'key#1', wru: 1 },
      ],
      tables,
    );

    expect(Object.fromEntries(load.wru)).toEqual({ 'records products': 4, 'events products': 2 });
    expect(load.total()).toBe(6);
  });
});

describe('keys', () => {
  it('shows tenant, user and record ids abbreviated, and events keys marked', () => {
    expect(shownKey('records ten_AbC123#tasks#owner=usr_XyZ9#~3/16')).toBe('<tenant>#tasks#owner=<user>#~3/16');
    expect(shownKey('records products#0b7e5a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b')).toBe('products#<id>');
    expect(shownKey('events ten_AbC123#products')).toBe('events: <tenant>#products');
  });

  it("names the listing partition a shard belongs to", () => {
    expect(shardedPartition('ten_a#tasks#~12/16')).toBe('ten_a#tasks');
    expect(shardedPartition('products#status=active')).toBe('products#status=active');
  });

  it("tells an entity's listing keys from its records' own keys and its unique values' keys", () => {
    expect(isListingKey('products', 'products')).toBe(true);
    expect(isListingKey('products#~4/16', 'products')).toBe(true);
    expect(isListingKey('products#category=c1', 'products')).toBe(true);
    expect(isListingKey('ten_a#tasks#owner=usr_b', 'tasks')).toBe(true);
    expect(isListingKey('products#0b7e5a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', 'products')).toBe(false);
    expect(isListingKey('ten_a#members#unique#email=a%40b', 'members')).toBe(false);
    expect(isListingKey('ten_a#tasks', 'products')).toBe(false);
  });
});

describe('summarizeLoad', () => {
  it('reports the hottest key of either table and the WCU per record of all keys', () => {
    const load = new KeyLoad();
    load.add([{ table: 'Records', pk: 'ten_a#tasks', wru: 400 }, { table: 'Events', pk: 'ten_a#tasks', wru: 200 }, { table: 'Records', pk: 'ten_a#tasks#status=todo', wru: 200 }], tables);

    const summary = summarizeLoad(load, 100, 'tasks');

    expect(summary.wcuPerRecord).toBe(8);
    expect(summary.hottest).toEqual({ key: '<tenant>#tasks', wcuPerRecord: 4 });
    expect(summary.hottestListing).toEqual({ key: '<tenant>#tasks', wcuPerRecord: 4, keys: 1, meanWcuPerRecord: 4 });
  });

  it("gives the mean of the hottest shard's sibling shards, those written to nothing counting as 0", () => {
    const load = new KeyLoad();
    load.add(
      [
        { table: 'Records', pk: 'products#~0/4', wru: 30 },
        { table: 'Records', pk: 'products#~1/4', wru: 20 },
        { table: 'Records', pk: 'products#~2/4', wru: 10 },
        { table: 'Records', pk: 'products#status=active#~0/4', wru: 8 },
        { table: 'Events', pk: 'ten_a#products', wru: 40 },
      ],
      tables,
    );

    const summary = summarizeLoad(load, 10, 'products', 4);

    expect(summary.hottest).toEqual({ key: 'events: <tenant>#products', wcuPerRecord: 4 });
    expect(summary.hottestListing).toEqual({ key: 'products#~0/4', wcuPerRecord: 3, keys: 4, meanWcuPerRecord: 1 });
  });
});

describe('ceiling', () => {
  it('is the records per second a key takes at 1,000 WCU/s', () => {
    expect(ceiling(4)).toBe(250);
    expect(ceiling(0)).toBe(Infinity);
  });
});
