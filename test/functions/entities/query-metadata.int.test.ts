/**
 * Merged metadata views (mergeMetadata, mergeStrategy) over the four sources, lowest to highest:
 * METADATA_DEFAULTS, tenant settings, user preferences, the record's metadata. A server of its own
 * carries METADATA_DEFAULTS (same engine).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { keyOf } from './support.js';

const DEFAULTS = { theme: { color: 'grey', density: 'compact' }, lang: 'en', level: 'default' };

let server: TestServer;
let key: string;
let userCookie: string;
let taskId: string;

beforeAll(async () => {
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { METADATA_DEFAULTS: JSON.stringify(DEFAULTS) } });
  const tenant = await newTenant();
  const user = await newUser(tenant.admin.cookie);
  const settings = await api('PATCH', '/api/v1/tenants/me', { cookie: tenant.admin.cookie, body: { settings: { theme: { color: 'blue' }, level: 'tenant', tz: 'UTC' } } });
  expect(settings.status, settings.text).toBe(200);
  const preferences = await api('PATCH', '/api/v1/users/me', { cookie: user.cookie, body: { preferences: { theme: { font: 'serif' }, level: 'user' } } });
  expect(preferences.status, preferences.text).toBe(200);
  userCookie = user.cookie;
  key = await keyOf(user.cookie);
  const task = await api('POST', '/api/v1/tasks', { apiKey: key, baseUrl: server.url, body: { title: 'Merged', metadata: { level: 'record', theme: { density: 'comfortable' } } } });
  expect(task.status, task.text).toBe(201);
  taskId = task.body.data.id;
});

afterAll(async () => {
  await server?.stop();
});

const get = (path: string) => api('GET', path, { apiKey: key, baseUrl: server.url });

describe('merged metadata', () => {
  it('deep (default): defaults < tenant settings < user preferences < record, nested objects merged key by key', async () => {
    const expected = { theme: { color: 'blue', density: 'comfortable', font: 'serif' }, lang: 'en', level: 'record', tz: 'UTC' };

    expect((await get(`/api/v1/tasks/${taskId}?mergeMetadata=true`)).body.data.metadata).toEqual(expected);
    expect((await get(`/api/v1/tasks?ids=${taskId}&mergeMetadata=true&mergeStrategy=deep`)).body.data[0].metadata).toEqual(expected);
  });

  it('shallow: a later top-level key replaces the earlier value whole', async () => {
    const response = await get(`/api/v1/tasks?ids=${taskId}&mergeMetadata=true&mergeStrategy=shallow`);

    expect(response.body.data[0].metadata).toEqual({ theme: { density: 'comfortable' }, lang: 'en', level: 'record', tz: 'UTC' });
  });

  it('narrows the merged view with metadataFields; without mergeMetadata only the record\'s own metadata shows', async () => {
    expect((await get(`/api/v1/tasks/${taskId}?mergeMetadata=true&metadataFields=lang,tz`)).body.data.metadata).toEqual({ lang: 'en', tz: 'UTC' });
    expect((await get(`/api/v1/tasks/${taskId}?includeMetadata=true`)).body.data.metadata).toEqual({ level: 'record', theme: { density: 'comfortable' } });
  });

  it('shows a preference change at once in the container that made it (the sources cache is dropped)', async () => {
    await get(`/api/v1/tasks/${taskId}?mergeMetadata=true`);
    const changed = await api('PATCH', '/api/v1/users/me', { cookie: userCookie, baseUrl: server.url, body: { preferences: { lang: 'fr' } } });

    const merged = (await get(`/api/v1/tasks/${taskId}?mergeMetadata=true`)).body.data.metadata;

    expect(changed.status, changed.text).toBe(200);
    expect(merged.lang).toBe('fr');
  });

  it('refuses an unknown strategy', async () => {
    const response = await get(`/api/v1/tasks/${taskId}?mergeMetadata=true&mergeStrategy=sideways`);

    expect(response.status).toBe(400);
    expect(response.body.details).toHaveProperty('mergeStrategy');
  });
});
