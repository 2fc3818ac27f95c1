import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeQueryCursor, encodeQueryCursor } from '../../../shared/query/cursor.js';

const key = randomBytes(32);

describe('query cursors', () => {
  it('carries the total of a walk on write shards, so the next page reads no counters', () => {
    const cursor = { h: 'shape', p: 2, s: '8234567890123#prd_1', t: 1234 };

    expect(decodeQueryCursor(encodeQueryCursor(cursor, key), key)).toEqual(cursor);
    expect(decodeQueryCursor(encodeQueryCursor({ h: 'shape', p: 2, s: '8234567890123#prd_1' }, key), key)).not.toHaveProperty('t');
  });

  it('refuses a total that is not a count, even signed', () => {
    for (const t of [-1, 1.5, '12']) expect(decodeQueryCursor(encodeQueryCursor({ h: 'shape', p: 2, s: '8234567890123#prd_1', t } as never, key), key)).toBeUndefined();
  });

  it('refuses a cursor signed with another key', () => {
    expect(decodeQueryCursor(encodeQueryCursor({ h: 'shape', p: 2, t: 5 }, key), randomBytes(32))).toBeUndefined();
  });
});
