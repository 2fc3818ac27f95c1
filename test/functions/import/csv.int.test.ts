import { describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant } from '../../support/identity.js';

describe('POST /api/v1/import/{entity} with a CSV body', () => {
  it('imports the rows as the same JSON items would be imported', async () => {
    const { admin } = await newTenant();
    const csv = 'name,price,status,category\nLamp,19.5,active,home\n"Desk, oak",240,inactive,\n';

    const fromCsv = await api('POST', '/api/v1/import/products', { cookie: admin.cookie, rawBody: csv, headers: { 'Content-Type': 'text/csv' } });
    const fromJson = await api('POST', '/api/v1/import/products', {
      cookie: admin.cookie,
      body: { items: [{ name: 'Lamp', price: 19.5, status: 'active', category: 'home' }, { name: 'Desk, oak', price: 240, status: 'inactive' }] },
    });

    expect(fromCsv.status).toBe(201);
    const strip = (items: Record<string, unknown>[]) => items.map(({ id, createdAt, updatedAt, ...rest }) => rest);
    expect(strip(fromCsv.body.data.items)).toEqual(strip(fromJson.body.data.items));
    expect(fromCsv.body.data.created).toBe(2);
  });

  it('reports a bad cell like a bad JSON value, options from the query string', async () => {
    const { admin } = await newTenant();
    const csv = 'title,priority\nGood,high\nBad,urgent\n';

    const response = await api('POST', '/api/v1/import/tasks?notify=false', { cookie: admin.cookie, rawBody: csv, headers: { 'Content-Type': 'text/csv' } });
    const generic = await api('POST', '/api/v1/import/customers?skipInvalid=true&returnFailures=true', {
      cookie: admin.cookie,
      rawBody: 'name,email\nAda,ada@example.com\n,nobody@example.com\n',
      headers: { 'Content-Type': 'text/csv; charset=utf-8' },
    });

    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ imported: 1, failed: 1, errors: [{ index: 1, details: { priority: expect.any(String) } }] });
    expect(generic.status).toBe(201);
    expect(generic.body.data).toMatchObject({ created: 1, failed: 1, failures: [{ index: 1, details: { name: expect.any(String) } }] });
  });

  it('refuses a CSV body that cannot be read with 400', async () => {
    const { admin } = await newTenant();

    const response = await api('POST', '/api/v1/import/products', { cookie: admin.cookie, rawBody: 'name,price\n"unclosed,1\n', headers: { 'Content-Type': 'text/csv' } });

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_REQUEST');
  });
});
