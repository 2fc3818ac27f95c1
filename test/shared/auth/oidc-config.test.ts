/** AUTH_OIDC_ISSUERS: the contract's defaults filled in, every mistake refused with its field named. */
import { describe, expect, it } from 'vitest';
import { oidcIssuers, type OidcIssuer } from '../../../shared/auth/oidc-config.js';

const ISSUER = 'https://idp.example.com';

function issuer(extra: Record<string, unknown> = {}): OidcIssuer {
  return oidcIssuers([{ issuer: ISSUER, audience: 'api', ...extra }])[0];
}

describe('AUTH_OIDC_ISSUERS', () => {
  it('fills in the contract defaults and a stable id', () => {
    const parsed = issuer();

    expect(parsed).toMatchObject({
      issuer: ISSUER,
      audience: ['api'],
      claims: { tenant: 'tenant', role: 'role', email: 'email', name: 'name', scopes: 'scope' },
      adminRole: 'admin',
      createTenants: false,
      name: 'idp.example.com',
    });
    expect(parsed.id).toMatch(/^[0-9a-f]{16}$/);
    expect(issuer().id).toBe(parsed.id);
  });

  it('takes claim names, several audiences and console sign-in settings', () => {
    const parsed = issuer({ audience: ['a', 'b'], claims: { tenant: 'custom:tenant', role: 'cognito:groups', scopes: null }, clientId: 'c', clientSecret: 's', name: 'Okta' });

    expect(parsed.audience).toEqual(['a', 'b']);
    expect(parsed.claims).toMatchObject({ tenant: 'custom:tenant', role: 'cognito:groups', scopes: null });
    expect(parsed).toMatchObject({ clientId: 'c', clientSecret: 's', name: 'Okta' });
  });

  it.each([
    [{ issuer: 'http://idp.example.com', audience: 'api' }, /https/],
    [{ issuer: ISSUER }, /audience/],
    [{ issuer: ISSUER, audience: [] }, /audience/],
    [{ issuer: ISSUER, audience: 'api', clientSecret: 's' }, /clientId/],
    [{ issuer: ISSUER, audience: 'api', tenantClaim: 'x' }, /unknown field tenantClaim/],
    [{ issuer: ISSUER, audience: 'api', claims: { group: 'x' } }, /unknown group/],
    [{ issuer: ISSUER, audience: 'api', createTenants: 'yes' }, /createTenants/],
  ])('refuses %j, naming the mistake', (entry, message) => {
    expect(() => oidcIssuers([entry])).toThrow(message);
  });

  it('allows http only on a loopback address (a development provider)', () => {
    expect(oidcIssuers([{ issuer: 'http://127.0.0.1:3001', audience: 'api' }])[0].issuer).toBe('http://127.0.0.1:3001');
  });

  it('refuses an issuer listed twice and a value that is not a list', () => {
    expect(() => oidcIssuers([{ issuer: ISSUER, audience: 'a' }, { issuer: ISSUER, audience: 'b' }])).toThrow(/twice/);
    expect(() => oidcIssuers({ issuer: ISSUER })).toThrow(/array/);
  });
});
