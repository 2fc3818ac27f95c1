/**
 * What the API reads from an identity provider's configuration (AUTH_OIDC_ISSUERS) and from a
 * verified token's claims: defaults and mistakes of the configuration, audience, role, scopes.
 */
import { describe, expect, it } from 'vitest';
import { oidcIssuers, type OidcIssuer } from '../../../shared/config.js';
import { audienceMatches, identityOf, isApiScope, scopesOf } from '../../../shared/auth/oidc-claims.js';

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

describe('a token’s claims', () => {
  it('name the audience in aud, or in client_id when aud is absent (Cognito access tokens)', () => {
    expect(audienceMatches({ aud: 'api' }, ['api'])).toBe(true);
    expect(audienceMatches({ aud: ['other', 'api'] }, ['api'])).toBe(true);
    expect(audienceMatches({ aud: 'other', client_id: 'api' }, ['api'])).toBe(false);
    expect(audienceMatches({ client_id: 'api' }, ['api'])).toBe(true);
    expect(audienceMatches({}, ['api'])).toBe(false);
  });

  it('make an admin only when the role claim is or lists the admin role', () => {
    expect(identityOf({ sub: 's', role: 'admin' }, issuer()).role).toBe('admin');
    expect(identityOf({ sub: 's', groups: ['staff', 'api-admins'] }, issuer({ claims: { role: 'groups' }, adminRole: 'api-admins' })).role).toBe('admin');
    expect(identityOf({ sub: 's', role: 'administrator' }, issuer()).role).toBe('user');
    expect(identityOf({ sub: 's' }, issuer()).role).toBe('user');
  });

  it('give the role’s scopes when the scope claim names none of this API', () => {
    expect(scopesOf({}, issuer(), 'user')).toEqual(['read', 'write', 'delete']);
    expect(scopesOf({ scope: 'openid profile email' }, issuer(), 'admin')).toEqual(['*']);
    expect(scopesOf({ scope: 'tasks:read' }, issuer({ claims: { scopes: null } }), 'user')).toEqual(['read', 'write', 'delete']);
  });

  it('narrow to the scope claim’s scopes of this API, within the role', () => {
    expect(scopesOf({ scope: 'openid tasks:read orders:*' }, issuer(), 'user')).toEqual(['tasks:read', 'orders:*']);
    expect(scopesOf({ scp: ['tasks:write'] }, issuer({ claims: { scopes: 'scp' } }), 'user')).toEqual(['tasks:write']);
    // `*` is an admin's: a user's token holding only it holds nothing.
    expect(scopesOf({ scope: '*' }, issuer(), 'user')).toEqual([]);
    expect(scopesOf({ scope: '*' }, issuer(), 'admin')).toEqual(['*']);
  });

  it('tell this API’s scopes from the provider’s own', () => {
    expect(['*', 'read', 'tasks:read', 'orders:*', 'my-entity:delete'].every(isApiScope)).toBe(true);
    expect(['openid', 'offline_access', 'tasks:reed', 'https://api/tasks:read', 'a:b:c'].some(isApiScope)).toBe(false);
  });

  it('read e-mail (lower-case), name and tenant through the mapping', () => {
    const identity = identityOf({ sub: 'u1', mail: 'Ada@Example.com', display: 'Ada', 'custom:tenant': 'ten_1' }, issuer({ claims: { email: 'mail', name: 'display', tenant: 'custom:tenant' } }));

    expect(identity).toMatchObject({ subject: 'u1', email: 'ada@example.com', name: 'Ada', tenant: 'ten_1' });
  });
});
