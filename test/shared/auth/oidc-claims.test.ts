/** What the API reads from a verified token's claims through its issuer's mapping: audience, role, scopes, identity. */
import { describe, expect, it } from 'vitest';
import { oidcIssuers, type OidcIssuer } from '../../../shared/auth/oidc-config.js';
import { audienceMatches, identityOf, isApiScope, scopesOf } from '../../../shared/auth/oidc-claims.js';

const ISSUER = 'https://idp.example.com';

function issuer(extra: Record<string, unknown> = {}): OidcIssuer {
  return oidcIssuers([{ issuer: ISSUER, audience: 'api', ...extra }])[0];
}

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
