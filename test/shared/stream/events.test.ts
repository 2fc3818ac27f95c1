import { describe, expect, it } from 'vitest';
import { beyondRetention, eventPartition, eventsQuery, isPosition, mergeEventPages, positionAt, toStreamEvent, type StreamEvent } from '../../../shared/stream/events.js';

function at(position: string): StreamEvent {
  return { position, type: 'task.created', change: 'created', recordId: position, tenantId: 't1', ownerId: 'u1', data: {}, createdAt: position };
}

describe('change events for the stream', () => {
  it('reads the stored item through one function', () => {
    const item = { pk: 't1#tasks', sk: '2026-01-01T00:00:00.000Z#abc', id: 'evt_1', type: 'task.deleted', entity: 'tasks', recordId: 'tsk_1', tenantId: 't1', ownerId: 'u1', data: { id: 'tsk_1' }, createdAt: '2026-01-01T00:00:00.000Z', expiresAt: 1 };

    expect(toStreamEvent(item)).toEqual({
      position: '2026-01-01T00:00:00.000Z#abc',
      type: 'task.deleted',
      change: 'deleted',
      recordId: 'tsk_1',
      tenantId: 't1',
      ownerId: 'u1',
      data: { id: 'tsk_1' },
      createdAt: '2026-01-01T00:00:00.000Z',
    });
  });

  it("queries the tenant's partition after the position, oldest first, consistently, never a scan", () => {
    const query = eventsQuery('Events', eventPartition('t1', { tableName: 'tasks' }), 'P');

    expect(query).toMatchObject({
      TableName: 'Events',
      KeyConditionExpression: 'pk = :pk AND sk > :after',
      ExpressionAttributeValues: { ':pk': 't1#tasks', ':after': 'P' },
      ScanIndexForward: true,
      ConsistentRead: true,
    });
  });

  it('accepts only positions it sends, and knows when one is older than the 24 h retention', () => {
    const now = Date.parse('2026-06-01T12:00:00.000Z');

    expect(isPosition('2026-06-01T11:00:00.000Z#a1B2_-')).toBe(true);
    expect(isPosition(positionAt(now))).toBe(true);
    expect(isPosition('2026-06-01T11:00:00Z')).toBe(false);
    expect(isPosition('2026-13-45T11:00:00.000Z')).toBe(false);
    expect(isPosition('x#y')).toBe(false);
    expect(beyondRetention('2026-05-31T11:59:59.000Z', now)).toBe(true);
    expect(beyondRetention('2026-05-31T12:00:01.000Z', now)).toBe(false);
  });

  it('merges the pages of write shards in position order, stopping where a shard with more stops', () => {
    const page = mergeEventPages([
      { events: [at('P1'), at('P4')], more: true },
      { events: [at('P2'), at('P3'), at('P5')], more: false },
      { events: [], more: false },
    ]);

    expect(page.events.map((e) => e.position)).toEqual(['P1', 'P2', 'P3', 'P4']);
    expect(page.more).toBe(true);
  });

  it('returns every event of the shards when none has more', () => {
    const page = mergeEventPages([{ events: [at('P3')], more: false }, { events: [at('P1'), at('P2')], more: false }]);

    expect(page).toEqual({ events: [at('P1'), at('P2'), at('P3')], more: false });
  });
});
