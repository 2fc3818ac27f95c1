/** The typed client against the running API: create, list with a filter, update, delete. */
import { createClient, type Schemas } from '@entity-record-api/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl } from '../../support/http.js';
import { newTenant } from '../../support/identity.js';

let apiKey: string;

beforeAll(async () => {
  const { admin } = await newTenant();
  const key = await api('POST', '/api/v1/api-keys', { cookie: admin.cookie, body: { name: 'client', scopes: ['tasks:*'] } });
  apiKey = key.body.data.key;
});

describe('@entity-record-api/client', () => {
  it('creates, lists with a filter, updates and deletes a task through typed calls', async () => {
    const client = createClient({ baseUrl: baseUrl(), apiKey });

    const created = await client.POST('/api/v1/tasks', { body: { title: 'Typed task', priority: 'high' } });
    expect(created.response.status).toBe(201);
    const task: Schemas['Task'] = created.data!.data;
    expect(task).toMatchObject({ title: 'Typed task', priority: 'high', status: 'todo' });

    const listed = await client.GET('/api/v1/tasks', {
      params: { query: { filter: JSON.stringify({ priority: { $in: ['high'] }, title: { $startsWith: 'Typed' } }), limit: 10 } },
    });
    expect(listed.response.status).toBe(200);
    expect(listed.data!.data.map((t) => t.id)).toEqual([task.id]);
    expect(listed.data!.pagination).toMatchObject({ page: 1, total: 1, hasNext: false });

    const updated = await client.PATCH('/api/v1/tasks/{id}', { params: { path: { id: task.id } }, body: { status: 'completed' } });
    expect(updated.data!.data.status).toBe('completed');

    const deleted = await client.DELETE('/api/v1/tasks/{id}', { params: { path: { id: task.id } } });
    expect(deleted.response.status).toBe(200);
    const gone = await client.GET('/api/v1/tasks/{id}', { params: { path: { id: task.id } } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });

  it('aggregates tasks by status through a typed call, the functions among the typed query parameters', async () => {
    const client = createClient({ baseUrl: baseUrl(), apiKey });
    for (const priority of ['high', 'high', 'low'] as const) await client.POST('/api/v1/tasks', { body: { title: `Counted ${priority}`, priority } });

    const counted = await client.GET('/api/v1/tasks/aggregate', { params: { query: { count: '', groupBy: 'priority', interval: 'month', search: 'Counted' } } });

    expect(counted.response.status).toBe(200);
    const month = `${new Date().toISOString().slice(0, 7)}-01`;
    expect(counted.data!.data).toEqual([
      { key: { priority: 'high', createdAt: month }, count: 2 },
      { key: { priority: 'low', createdAt: month }, count: 1 },
    ]);
    expect(counted.data!.meta).toEqual({ groups: 2, source: 'scan' });
  });

  it('returns the error envelope, typed, for a body the API refuses', async () => {
    const client = createClient({ baseUrl: baseUrl(), apiKey });

    const refused = await client.POST('/api/v1/tasks', { body: { title: '' } });

    expect(refused.response.status).toBe(422);
    expect(refused.error).toMatchObject({ success: false, code: 'VALIDATION_FAILED', details: { title: expect.any(String) } });
  });
});
