import { describe, expect, it } from 'vitest';
import { familyOfPath, findRoute, matchPath, pathTemplates, routes } from '../../shared/routes.js';

describe('route table', () => {
  it('resolves a static core path before a parameter at the same depth', () => {
    const match = matchPath('GET', '/api/v1/users/me');

    expect(match?.path).toBe('/api/v1/users/me');
    expect(match?.route?.family).toBe('auth');
  });

  it('fills path parameters and decodes them', () => {
    const match = matchPath('GET', '/api/v1/users/usr_a%20b');

    expect(match?.path).toBe('/api/v1/users/{id}');
    expect(match?.params).toEqual({ id: 'usr_a b' });
  });

  it('reports a known path with an unknown method as a path without a route', () => {
    const match = matchPath('PUT', '/api/v1/users/me');

    expect(match?.path).toBe('/api/v1/users/me');
    expect(match?.route).toBeUndefined();
    expect(familyOfPath('/api/v1/users/me')).toBe('auth');
  });

  it('finds no template for a path outside the table', () => {
    expect(matchPath('GET', '/api/v1/a/b/c/d/e')).toBeUndefined();
    expect(matchPath('GET', '/nothing')).toBeUndefined();
  });

  it('answers CORS preflights on every path through the path family', () => {
    for (const path of pathTemplates().keys()) {
      expect(findRoute('OPTIONS', path)?.family).toBe(familyOfPath(path));
    }
  });

  it('uses one parameter name per path depth, as API Gateway requires', () => {
    const namesByParent = new Map<string, Set<string>>();
    for (const { path } of routes) {
      const segments = path.split('/');
      segments.forEach((segment, i) => {
        if (!segment.startsWith('{')) return;
        const parent = segments.slice(0, i).join('/');
        const names = namesByParent.get(parent) ?? new Set();
        names.add(segment);
        namesByParent.set(parent, names);
      });
    }
    for (const [parent, names] of namesByParent) expect([parent, names.size]).toEqual([parent, 1]);
  });
});
