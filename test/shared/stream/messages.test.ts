import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../shared/stream/events.js';
import { changeMessage, connectedMessage, HEARTBEAT, inReadOrder, resetMessage, retryHint, sseMessage } from '../../../shared/stream/messages.js';

const tasks = { slug: 'tasks', fields: { title: {}, status: {} } } as never;
const customers = { slug: 'customers', fields: { name: {} } } as never;

function event(change: StreamEvent['change'], data: Record<string, unknown>): StreamEvent {
  return { position: '2026-01-01T00:00:00.000Z#abc', type: `x.${change}`, change, recordId: 'r1', tenantId: 't', ownerId: 'u', data, createdAt: '2026-01-01T00:00:00.000Z' };
}

describe('SSE messages', () => {
  it('writes id, event and one data line of JSON, ended by a blank line', () => {
    expect(sseMessage({ a: 'line\nbreak' }, { id: '1', event: 'reset' })).toBe('id: 1\nevent: reset\ndata: {"a":"line\\nbreak"}\n\n');
    expect(sseMessage({ a: 1 })).toBe('data: {"a":1}\n\n');
  });

  it('opens with connected carrying the start position, and has retry, reset and heartbeat lines', () => {
    expect(connectedMessage('P')).toBe('id: P\ndata: {"type":"connected"}\n\n');
    expect(retryHint(3000)).toBe('retry: 3000\n');
    expect(resetMessage('P')).toMatch(/^id: P\nevent: reset\ndata: \{"type":"reset"/);
    expect(HEARTBEAT).toBe(': ping\n\n');
  });

  it('puts a task in task and record, a deleted task id in taskId, with the event position as id', () => {
    const created = changeMessage(tasks, { ...event('created', { id: 'r1', title: 'T' }), type: 'task.created' });
    const deleted = changeMessage(tasks, { ...event('deleted', { id: 'r1' }), type: 'task.deleted' });

    expect(created).toBe('id: 2026-01-01T00:00:00.000Z#abc\ndata: {"type":"task.created","record":{"id":"r1","title":"T"},"task":{"id":"r1","title":"T"}}\n\n');
    expect(JSON.parse(deleted.split('data: ')[1])).toEqual({ type: 'task.deleted', record: { id: 'r1' }, taskId: 'r1' });
  });

  it('gives other entities the record only', () => {
    const message = JSON.parse(changeMessage(customers, { ...event('updated', { id: 'r1', name: 'N' }), type: 'customer.updated' }).split('data: ')[1]);

    expect(message).toEqual({ type: 'customer.updated', record: { id: 'r1', name: 'N' } });
  });

  it("orders a stored record's keys as READ does", () => {
    const ordered = inReadOrder(tasks, { updatedAt: 'u', tagIds: [], status: 's', createdAt: 'c', id: 'i', title: 't' });

    expect(Object.keys(ordered)).toEqual(['id', 'title', 'status', 'tagIds', 'createdAt', 'updatedAt']);
  });
});
