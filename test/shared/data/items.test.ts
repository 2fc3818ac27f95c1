import { beforeAll, describe, expect, it } from 'vitest';
import type { LiveLayout } from '../../../shared/data/layout.js';
import type { LoadedEntity } from '../../../shared/registry/index.js';
import { COPY_MAX_BYTES, copyItem, fromItem, isPartialCopy, itemSize } from '../../../shared/data/items.js';
import { listingSortKey } from '../../../shared/data/partitions.js';
import { createTransaction } from '../../../shared/data/transactions.js';
import { definitions, tables, task } from './support.js';

let entities: Record<string, LoadedEntity>;
let layouts: Record<string, LiveLayout>;

beforeAll(async () => {
  ({ entities, layouts } = await definitions());
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
    const { sm: _counted, ...record } = task({}, { description: 'short' });
    const copy = copyItem(entities.tasks, 'ten_1#tasks', record);

    // What the record is counted under (`sm`) is the record item's bookkeeping, not a copy's.
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
    expect(fromItem(layouts.tasks, copy)).not.toHaveProperty('partial');
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
    const items = createTransaction(layouts.tasks, record, { pk: 'e', sk: 'e' }, tables, 0);
    const copies = items.filter((i) => i.Put?.Item?.kind === 'index').map((i) => i.Put!.Item!);

    expect(copies).toHaveLength(6);
    for (const c of copies) {
      expect(isPartialCopy(c)).toBe(true);
      expect(itemSize(c)).toBeLessThanOrEqual(COPY_MAX_BYTES);
    }
  });
});
