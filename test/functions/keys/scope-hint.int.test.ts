import { describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant } from '../../support/identity.js';

describe('a key asked for without scopes', () => {
  it('POST /api/v1/api-keys says which scopes exist and which form each family takes', async () => {
    const { admin } = await newTenant();

    const response = await api('POST', '/api/v1/api-keys', { cookie: admin.cookie, body: { name: 'my key' } });

    expect(response.status).toBe(422);
    expect(response.body.details.scopes).toMatch(/tasks:read/);
    expect(response.body.details.scopes).toMatch(/resources: .*products.*tasks/);
    expect(response.body.details.scopes).toMatch(/\/api\/v1\/keys takes only bare read, write, delete/);
  });

  it('POST /api/v1/keys points to /api/v1/api-keys for per-entity scopes', async () => {
    const { admin } = await newTenant();

    const response = await api('POST', '/api/v1/keys', { cookie: admin.cookie, body: { name: 'my key', scopes: [] } });

    expect(response.status).toBe(422);
    expect(response.body.details.scopes).toMatch(/read, write, delete.*POST \/api\/v1\/api-keys/);
  });
});
