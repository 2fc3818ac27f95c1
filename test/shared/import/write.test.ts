import { beforeAll, describe, expect, it } from 'vitest';
import { definitionLayout } from '../../../shared/data/layout.js';
import type { StoredRecord } from '../../../shared/data/record-item.js';
import { importRecordId } from '../../../shared/import/ids.js';
import { packTransactions, type PlannedRecord } from '../../../shared/import/write.js';
import { findEntity, loadRegistry } from '../../../shared/registry/index.js';
import type { LoadedEntity } from '../../../shared/registry/types.js';

let tasks: LoadedEntity;
let products: LoadedEntity;
const tables = { records: 'Records', events: 'Events', history: 'History' };

beforeAll(async () => {
  await loadRegistry();
  tasks = findEntity('tasks')!;
  products = findEntity('products')!;
});

function planned(n: number, withAssignee: boolean, withEvent: boolean): PlannedRecord[] {
  const now = '2026-01-01T00:00:00.000Z';
  return Array.from({ length: n }, (_, i) => {
    const record: StoredRecord = {
      entity: 'tasks',
      id: `tsk_${String(i).padStart(20, '0')}`,
      tenantId: 'ten_1',
      ownerId: 'usr_1',
      createdAt: now,
      updatedAt: now,
      version: 1,
      data: { title: `t${i}`, status: ['todo', 'in_progress', 'completed'][i % 3], priority: ['low', 'medium', 'high'][i % 3], ...(withAssignee ? { assigneeId: 'usr_2' } : {}) },
    };
    return { index: i, record, ...(withEvent ? { event: { pk: 'ten_1#tasks', sk: `${now}#${i}` } } : {}) };
  });
}

describe('packTransactions', () => {
  it('writes 100 tasks (assignee and event included) in at most 4 transactions per 25 records', () => {
    const chunks = packTransactions(definitionLayout(tasks), planned(100, true, true), tables);
    expect(chunks.length).toBeLessThanOrEqual(16);
    for (const chunk of chunks) expect(chunk.items.length).toBeLessThanOrEqual(100);
  });

  it('keeps each record whole in one transaction with one Update per counter item carrying the count of its records', () => {
    const chunks = packTransactions(definitionLayout(tasks), planned(30, false, false), tables);
    expect(chunks.flatMap((c) => c.records.map((r) => r.index))).toEqual([...Array(30).keys()]);
    for (const chunk of chunks) {
      const counters = chunk.items.filter((i) => i.Update);
      const keys = counters.map((c) => `${String(c.Update!.Key!.pk)} ${String(c.Update!.Key!.sk).replace(/#\d+$/, '')}`);
      expect(new Set(keys).size).toBe(keys.length);
      const tenantCounter = counters.find((c) => c.Update!.Key!.pk === 'ten_1#tasks' && String(c.Update!.Key!.sk).startsWith('#count'))!;
      expect(tenantCounter.Update!.ExpressionAttributeNames!['#a0']).toBe('count');
      expect(tenantCounter.Update!.ExpressionAttributeValues![':d0']).toBe(chunk.records.length);
      // Every counter Update of a transaction on its one counter shard.
      expect(new Set(counters.map((c) => String(c.Update!.Key!.sk).split('#').pop())).size).toBe(1);
      const recordPuts = chunk.items.filter((i) => i.Put?.ConditionExpression === 'attribute_not_exists(pk)');
      expect(recordPuts).toHaveLength(chunk.records.length);
    }
  });
});

describe('importRecordId', () => {
  it('derives the same id for the same key, index and item, and differs otherwise', () => {
    const seed = { scope: 't:1#u:1', idempotencyKey: 'k' };
    const a = importRecordId(tasks, 0, { title: 'x' }, seed, 0);
    expect(a).toMatch(/^tsk_[0-9A-Za-z]{20}$/);
    expect(importRecordId(tasks, 0, { title: 'x' }, seed, 0)).toBe(a);
    expect(importRecordId(tasks, 1, { title: 'x' }, seed, 0)).not.toBe(a);
    expect(importRecordId(tasks, 0, { title: 'y' }, seed, 0)).not.toBe(a);
    expect(importRecordId(tasks, 0, { title: 'x' }, { ...seed, idempotencyKey: 'other' }, 0)).not.toBe(a);
    expect(importRecordId(products, 0, { name: 'x' }, seed, 0)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(importRecordId(tasks, 0, { title: 'x' }, undefined, 0)).not.toBe(importRecordId(tasks, 0, { title: 'x' }, undefined, 0));
  });
});
