import { describe, expect, it } from 'vitest';
import { inheritedAuth, inheritedAuthOf, withInheritedAuth } from '../../../shared/http/inherited-auth.js';
import type { AuthContext } from '../../../shared/http/types.js';

const auth: AuthContext = { type: 'session', user: { id: 'usr_1', email: 'a@b.c', role: 'user' }, tenantId: 'ten_1', scopes: ['*'] };

function run(context: object, routeAuth: string) {
  const api = { route: { auth: routeAuth }, auth: undefined as AuthContext | undefined };
  (inheritedAuth().before as (r: unknown) => void)({ context: Object.assign(context, { api }) });
  return api.auth;
}

describe('inherited authentication', () => {
  it('hands a copy of the outer caller to the sub-request, invisible to serialisation', () => {
    const context = withInheritedAuth({}, auth);

    expect(Object.keys(context)).toEqual([]);
    expect(JSON.stringify(context)).toBe('{}');
    expect(inheritedAuthOf(context)).not.toBe(auth);
    expect(run(context, 'required')).toEqual(auth);
  });

  it('cannot be set by a look-alike property, as anything parsed from JSON would be', () => {
    const context = JSON.parse('{"inherited-auth": {"type": "session"}, "Symbol(inherited-auth)": {}}');

    expect(run(context, 'required')).toBeUndefined();
  });

  it('is ignored on public routes, which take no credentials', () => {
    expect(run(withInheritedAuth({}, auth), 'public')).toBeUndefined();
  });
});
