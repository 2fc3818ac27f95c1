import { describe, expect, it } from 'vitest';
import { HANDOFF_MAX_POSITIONS, HANDOFF_SECONDS, handoffGet, handoffKey, handoffOf, handoffPut } from '../../../shared/stream/handoff.js';

const owner = { tenantId: 't1', userId: 'alice', table: 'tasks' };
const now = Date.parse('2026-06-01T12:00:00.000Z');

describe('stream hand-off', () => {
  it('is kept per tenant, user and entity, under the last id sent', () => {
    expect(handoffKey(owner, '2026-06-01T11:59:59.000Z#a')).toEqual({ pk: 'STREAMRESUME#t1#alice#tasks', sk: '2026-06-01T11:59:59.000Z#a' });
    expect(handoffGet('Limits', owner, 'x')).toEqual({ TableName: 'Limits', Key: { pk: 'STREAMRESUME#t1#alice#tasks', sk: 'x' }, ConsistentRead: true });
  });

  it('keeps the positions after its start up to the last id, sorted, for an hour', () => {
    const put = handoffPut('Limits', owner, 'p5', { from: 'p1', sent: new Set(['p6', 'p3', 'p1', 'p0', 'p5', 'p2']) }, now);

    expect(put?.Item).toEqual({ pk: 'STREAMRESUME#t1#alice#tasks', sk: 'p5', from: 'p1', sent: ['p2', 'p3', 'p5'], expiresAt: now / 1000 + HANDOFF_SECONDS });
  });

  it('keeps nothing when there are too many positions (the next connection takes its window as sent)', () => {
    const sent = new Set(Array.from({ length: HANDOFF_MAX_POSITIONS + 1 }, (_, i) => `p${String(i).padStart(5, '0')}`));

    expect(handoffPut('Limits', owner, 'q', { from: 'p', sent }, now)).toBeUndefined();
  });

  it('reads a stored hand-off back, and none when absent, malformed or expired', () => {
    const item = { from: 'p1', sent: ['p2', 'p3'], expiresAt: now / 1000 + 10 };

    expect(handoffOf(item, now)).toEqual({ from: 'p1', sent: new Set(['p2', 'p3']) });
    expect(handoffOf(undefined, now)).toBeUndefined();
    expect(handoffOf({ from: 'p1', sent: 'p2' }, now)).toBeUndefined();
    expect(handoffOf({ ...item, expiresAt: now / 1000 - 1 }, now)).toBeUndefined();
  });
});
