import { describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser } from '../../support/identity.js';

describe('finding one\'s way in the API', () => {
  it('GET /api/v1 lists the entities a signed-in user may use, with paths, operations and links', async () => {
    const { admin } = await newTenant();
    const user = await newUser(admin.cookie);

    const index = await api('GET', '/api/v1', { cookie: user.cookie });

    expect(index.status).toBe(200);
    const tasks = index.body.data.entities.find((e: { slug: string }) => e.slug === 'tasks');
    expect(tasks).toMatchObject({ name: 'task', path: '/api/v1/tasks', links: { options: '/api/v1/tasks', docs: '/api/docs#/tasks' } });
    expect(tasks.operations).toEqual(['list', 'read', 'create', 'update', 'delete']);
    const orders = index.body.data.entities.find((e: { slug: string }) => e.slug === 'orders');
    expect(orders.operations).not.toContain('delete');
    expect(index.body.data.links).toMatchObject({ docs: '/api/docs', openapi: '/api/v1/openapi.json' });
    expect(index.body.data.caller).toMatchObject({ email: user.email, role: 'user' });
  });

  it('GET /api/v1 shows an anonymous caller the public entities only, and says how to see more', async () => {
    const index = await api('GET', '/api/v1');

    expect(index.status).toBe(200);
    const slugs = index.body.data.entities.map((e: { slug: string }) => e.slug);
    expect(slugs).toContain('products');
    expect(slugs).not.toContain('tasks');
    expect(index.body.data.entities.find((e: { slug: string }) => e.slug === 'products').operations).toEqual(['list', 'read']);
    expect(index.body.message).toMatch(/sign in/i);
  });

  it('GET /api/v1 lists only what an API key\'s scopes open', async () => {
    const { admin } = await newTenant();
    const created = await api('POST', '/api/v1/api-keys', { cookie: admin.cookie, body: { name: 'read tasks', scopes: ['tasks:read'] } });

    const index = await api('GET', '/api/v1', { apiKey: created.body.data.key });

    const tasks = index.body.data.entities.find((e: { slug: string }) => e.slug === 'tasks');
    expect(tasks.operations).toEqual(['list', 'read']);
    expect(index.body.data.entities.map((e: { slug: string }) => e.slug)).not.toContain('orders');
  });

  it('a 201 carries the Location of the record it created', async () => {
    const { admin } = await newTenant();

    const created = await api('POST', '/api/v1/tasks', { cookie: admin.cookie, body: { title: 'Find me' } });

    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toMatch(new RegExp(`^http://[^/]+/api/v1/tasks/${created.body.data.id}$`));
    const again = await fetch(created.headers.get('location')!, { headers: { Cookie: admin.cookie } });
    expect(again.status).toBe(200);
  });
});
