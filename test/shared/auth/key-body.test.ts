/** What a key body's schema cannot say, checked by the service (shared/auth/key-management.ts keyBodyProblems). */
import { describe, expect, it } from 'vitest';
import { keyBodyProblems } from '../../../shared/auth/key-management.js';

describe('keyBodyProblems', () => {
  it('answers the scope hint for scopes the schema refused as missing or empty', async () => {
    const missing = await keyBodyProblems({ name: 'x' }, 'api-keys', { scopes: 'is required' });
    const empty = await keyBodyProblems({ name: 'x', scopes: [] }, 'keys', { scopes: 'must have at least 1 item' });

    expect(missing.scopes).toMatch(/tasks:read/);
    expect(empty.scopes).toMatch(/read, write, delete.*POST \/api\/v1\/api-keys/);
  });

  it('names a scope of an unknown entity or action, and an expiry that is past or not on the calendar', async () => {
    const details = await keyBodyProblems({ name: 'x', scopes: ['widgets:read'], expiresAt: '2001-01-01T00:00:00Z' }, 'api-keys');
    const rolled = await keyBodyProblems({ name: 'x', scopes: ['tasks:read'], expiresAt: '2030-02-30' }, 'api-keys');

    expect(Object.keys(details).sort()).toEqual(['expiresAt', 'scopes']);
    expect(details.expiresAt).toBe('must be in the future');
    expect(rolled).toEqual({ expiresAt: 'must be an ISO 8601 datetime or null' });
  });

  it('leaves alone a field the schema refused for another reason, and finds nothing in a good body', async () => {
    const refused = await keyBodyProblems({ scopes: ['tasks:read', 5], expiresAt: 5 }, 'api-keys', { scopes: 'must be a string', expiresAt: 'must be a string' });
    const good = await keyBodyProblems({ name: 'x', scopes: ['tasks:read'], expiresAt: '2999-01-01' }, 'api-keys');

    expect(refused).toEqual({});
    expect(good).toEqual({});
  });
});
