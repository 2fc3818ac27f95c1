import { beforeAll, describe, expect, it } from 'vitest';
import type { LiveLayout } from '../../../shared/data/layout.js';
import { eventItem } from '../../../shared/data/change-events.js';
import { definitions, task } from './support.js';

let layouts: Record<string, LiveLayout>;

beforeAll(async () => {
  ({ layouts } = await definitions());
});

describe('events', () => {
  it('carries the type <name>.<change>, the record, tenant and owner, and expires after 24 hours', () => {
    const record = task();
    const item = eventItem(layouts.tasks, 'created', record, { id: 'tsk_A', title: 'T' }, { eventId: 'evt_1', suffix: 'abc', now: '2026-01-01T00:00:00.000Z' });

    expect(item).toEqual({
      pk: 'ten_1#tasks',
      sk: '2026-01-01T00:00:00.000Z#abc',
      id: 'evt_1',
      type: 'task.created',
      entity: 'tasks',
      recordId: 'tsk_A',
      tenantId: 'ten_1',
      ownerId: 'usr_1',
      data: { id: 'tsk_A', title: 'T' },
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: Date.parse('2026-01-02T00:00:00.000Z') / 1000,
    });
  });

  it('carries only the id for a delete', () => {
    const item = eventItem(layouts.tasks, 'deleted', task(), { id: 'tsk_A', title: 'T' }, { eventId: 'evt_2', suffix: 'x', now: '2026-01-01T00:00:00.000Z' });

    expect(item).toMatchObject({ type: 'task.deleted', data: { id: 'tsk_A' } });
  });
});
