/**
 * Field type `date` (YYYY-MM-DD) through HTTP on DynamoDB Local, on a server that loads the
 * test-only entities of test/support/entities/ (ENTITIES_DIR): members.joinedOn (date) and
 * members.renewsOn (date, indexed). Validation, filters, ranges, sort and OPTIONS.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { keyOf } from './support.js';

const ENTITIES_DIR = fileURLToPath(new URL('../../support/entities/', import.meta.url));

let server: TestServer;
let key: string;

const get = (path: string) => api('GET', path, { apiKey: key, baseUrl: server.url });
const post = (body: unknown) => api('POST', '/api/v1/members', { apiKey: key, baseUrl: server.url, body });
const names = (response: { body: { data: { name: string }[] } }) => response.body.data.map((m) => m.name);

beforeAll(async () => {
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ENTITIES_DIR } });
  const tenant = await newTenant();
  key = await keyOf(tenant.admin.cookie);
  // In creation order; LIST's default order is newest first.
  for (const [name, joinedOn, renewsOn] of [
    ['Jan', '2024-01-31', '2025-01-01'],
    ['Leap', '2024-02-29', '2025-03-01'],
    ['March', '2024-03-01', '2025-01-01'],
    ['April', '2024-04-15', undefined],
  ] as const) {
    const response = await post({ name, joinedOn, ...(renewsOn ? { renewsOn } : {}) });
    expect(response.status, response.text).toBe(201);
  }
}, 90_000);

afterAll(async () => {
  await server?.stop();
});

describe('date fields: writes', () => {
  it('stores and returns a date as YYYY-MM-DD', async () => {
    const response = await post({ name: 'Stored', joinedOn: '2000-02-29' });

    expect(response.status, response.text).toBe(201);
    expect(response.body.data.joinedOn).toBe('2000-02-29');
    await api('DELETE', `/api/v1/members/${response.body.data.id}`, { apiKey: key, baseUrl: server.url });
  });

  it.each([
    ['a day that does not exist', '2023-02-29'],
    ['month 13', '2024-13-01'],
    ['day 32', '2024-01-32'],
    ['a date-time', '2024-01-01T00:00:00Z'],
    ['another form', '01/02/2024'],
    ['a number', 20240101],
  ])('refuses %s with 422 naming the field', async (_label, value) => {
    const response = await post({ name: 'Bad', joinedOn: value });

    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { joinedOn: expect.any(String) } });
  });

  it('refuses an invalid date on update too', async () => {
    const member = (await post({ name: 'Updated' })).body.data;

    const response = await api('PATCH', `/api/v1/members/${member.id}`, { apiKey: key, baseUrl: server.url, body: { joinedOn: '2023-04-31' } });

    expect(response.status).toBe(422);
    expect(response.body.details).toHaveProperty('joinedOn');
    await api('DELETE', `/api/v1/members/${member.id}`, { apiKey: key, baseUrl: server.url });
  });
});

describe('date fields: queries', () => {
  it('filters with comparison operators', async () => {
    const filter = encodeURIComponent(JSON.stringify({ joinedOn: { $gte: '2024-02-01', $lt: '2024-04-01' } }));

    expect(names(await get(`/api/v1/members?filter=${filter}&sort=joinedOn`))).toEqual(['Leap', 'March']);
  });

  it('filters by equality, also on an indexed date field', async () => {
    expect(names(await get('/api/v1/members?joinedOn=2024-02-29'))).toEqual(['Leap']);
    expect(names(await get('/api/v1/members?renewsOn=2025-01-01'))).toEqual(['March', 'Jan']);
  });

  it('applies startDate / endDate to a date field named by dateField, both days included', async () => {
    expect(names(await get('/api/v1/members?dateField=joinedOn&startDate=2024-02-29&endDate=2024-03-01&sort=joinedOn'))).toEqual(['Leap', 'March']);
    expect(names(await get('/api/v1/members?dateField=joinedOn&from=2024-03-02'))).toEqual(['April']);
    expect(names(await get('/api/v1/members?dateField=joinedOn&to=2024-01-31T12:00:00Z'))).toEqual(['Jan']);
  });

  it('sorts by a date field in either order', async () => {
    expect(names(await get('/api/v1/members?sort=joinedOn&order=asc'))).toEqual(['Jan', 'Leap', 'March', 'April']);
    expect(names(await get('/api/v1/members?sort=joinedOn&order=desc'))).toEqual(['April', 'March', 'Leap', 'Jan']);
  });

  it('refuses a filter value that is not a calendar date with 400 INVALID_FILTER', async () => {
    const filter = encodeURIComponent(JSON.stringify({ joinedOn: { $gt: '2024-02-30' } }));

    const response = await get(`/api/v1/members?filter=${filter}`);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_FILTER', details: { filter: expect.any(String) } });
  });

  it('describes the field as type date in OPTIONS', async () => {
    const response = await api('OPTIONS', '/api/v1/members', { apiKey: key, baseUrl: server.url });

    expect(response.body.data.schema.joinedOn).toMatchObject({ type: 'date', required: false });
  });
});
