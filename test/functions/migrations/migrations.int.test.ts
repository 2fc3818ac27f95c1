/** GET /api/v1/migrations: the platform operator's view of each entity's layout and migration state. */
import { describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { loginAsOperator, newTenant } from '../../support/identity.js';

describe('GET /api/v1/migrations', () => {
  it('shows the operator every entity with its layout, state and report', async () => {
    const operator = await loginAsOperator();

    const response = await api('GET', '/api/v1/migrations', { cookie: operator });

    expect(response.status).toBe(200);
    const tasks = response.body.data.find((s: { entity: string }) => s.entity === 'tasks');
    expect(tasks).toMatchObject({ state: 'done', layout: { hash: expect.stringMatching(/^[0-9a-f]{16}$/) }, report: { count: 0, entries: [] }, processed: expect.any(Number) });
  });

  it('refuses a tenant admin (403) and an anonymous caller (401)', async () => {
    const tenant = await newTenant();

    const asAdmin = await api('GET', '/api/v1/migrations', { cookie: tenant.admin.cookie });
    const anonymous = await api('GET', '/api/v1/migrations');

    expect(asAdmin.status).toBe(403);
    expect(asAdmin.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    expect(anonymous.status).toBe(401);
  });
});
