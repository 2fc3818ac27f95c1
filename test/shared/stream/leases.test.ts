import { describe, expect, it } from 'vitest';
import { freeSlots, slotKey, TooManyStreamsError } from '../../../shared/stream/leases.js';

describe('open-stream leases', () => {
  it('counts live leases only: an expired lease (a dead container) frees its slot', () => {
    const items = [
      { sk: 'slot#0', expiresAt: 200 },
      { sk: 'slot#1', expiresAt: 50 },
      { sk: 'slot#3', expiresAt: 200 },
    ];

    expect(freeSlots(items, 5, 100)).toEqual([1, 2, 4]);
    expect(freeSlots(items, 2, 100)).toEqual([1]);
    expect(freeSlots([...items, { sk: 'slot#1', expiresAt: 300 }, { sk: 'slot#2', expiresAt: 300 }, { sk: 'slot#4', expiresAt: 300 }], 5, 100)).toEqual([]);
  });

  it("keeps a user's slots in one partition of the limits table", () => {
    expect(slotKey('usr_1', 3)).toEqual({ pk: 'STREAMS#usr_1', sk: 'slot#3' });
  });

  it('refuses with 429 TOO_MANY_STREAMS naming the limit', () => {
    const error = new TooManyStreamsError(5);

    expect(error.status).toBe(429);
    expect(error.toJSON()).toMatchObject({ success: false, code: 'TOO_MANY_STREAMS', details: { limit: 5 } });
    expect(error.headers['Retry-After']).toBeDefined();
  });
});
