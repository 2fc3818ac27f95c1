import { describe, expect, it } from 'vitest';
import { billBatchWrite, billTransaction, itemWru, type StoredItemLookup } from '../../bench/billing.js';

/** A lookup over a fixed set of stored items, keyed `<table> <pk> <sk>`. */
function storedItems(items: Record<string, Record<string, unknown>>): StoredItemLookup {
  return async (table, key) => items[`${table} ${String(key.pk)} ${String(key.sk)}`];
}

describe('itemWru', () => {
  it('bills at least one KB, and each started KB of the larger of the stored and written sizes', () => {
    expect(itemWru(0, 10, 2)).toBe(2);
    expect(itemWru(1024, 0, 2)).toBe(2);
    expect(itemWru(1025, 300, 2)).toBe(4);
    expect(itemWru(300, 2100, 1)).toBe(3);
  });
});

describe('billTransaction', () => {
  it('bills each item 2 WRU per KB, under its table and partition key', async () => {
    const counter = { pk: 'ten_a#tasks', sk: '#count#3', kind: 'counter', count: 4 };
    const stored = storedItems({ 'Records ten_a#tasks #count#3': counter });
    const items = [
      { Put: { TableName: 'Records', Item: { pk: 'ten_a#tasks', sk: '1#tsk_1', data: { text: 'x'.repeat(1500) } } } },
      { Update: { TableName: 'Records', Key: { pk: 'ten_a#tasks', sk: '#count#3' }, UpdateExpression: 'ADD #c :one' } },
      { Put: { TableName: 'Events', Item: { pk: 'ten_a#tasks', sk: 't#1', type: 'task.created' } } },
    ];

    const writes = await billTransaction(items, stored);

    expect(writes).toEqual([
      { table: 'Records', pk: 'ten_a#tasks', wru: 4 },
      { table: 'Records', pk: 'ten_a#tasks', wru: 2 },
      { table: 'Events', pk: 'ten_a#tasks', wru: 2 },
    ]);
  });

  it("bills a delete by the size of the item it removes", async () => {
    const stored = storedItems({ 'Records products#p1 #record': { pk: 'products#p1', sk: '#record', text: 'y'.repeat(2100) } });

    const writes = await billTransaction([{ Delete: { TableName: 'Records', Key: { pk: 'products#p1', sk: '#record' } } }], stored);

    expect(writes).toEqual([{ table: 'Records', pk: 'products#p1', wru: 6 }]);
  });
});

describe('billBatchWrite', () => {
  it('bills each put and delete 1 WRU per KB, under its table and partition key', async () => {
    const stored = storedItems({ 'Records a #record': { pk: 'a', sk: '#record', text: 'z'.repeat(1100) } });

    const writes = await billBatchWrite(
      {
        Records: [{ DeleteRequest: { Key: { pk: 'a', sk: '#record' } } }, { PutRequest: { Item: { pk: 'b', sk: '#record' } } }],
        Events: [{ PutRequest: { Item: { pk: 'c', sk: 't#1' } } }],
      },
      stored,
    );

    expect(writes).toEqual([
      { table: 'Records', pk: 'a', wru: 2 },
      { table: 'Records', pk: 'b', wru: 1 },
      { table: 'Events', pk: 'c', wru: 1 },
    ]);
  });
});
