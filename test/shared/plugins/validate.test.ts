/** Plugin declarations are checked when they load; every problem is named. */
import { describe, expect, it } from 'vitest';
import { assertPluginDeclarations, pluginDeclarations, pluginRoutes, toRoute } from '../../../shared/plugins/declarations.js';
import { definitionProblems, windowSeconds } from '../../../shared/plugins/validate.js';
import { routes } from '../../../shared/routes.js';

const good = {
  name: 'weather',
  routes: [{ method: 'GET', path: '/api/v1/weather/{city}', handler: 'forecast', auth: 'optional', scopes: ['weather:read'], rateLimit: { limit: 5, window: '15m' } }],
};

describe('plugin declarations', () => {
  it('accepts a well-formed declaration', () => {
    expect(definitionProblems(good, 'weather')).toEqual([]);
  });

  it('names every problem of a bad declaration', () => {
    const problems = definitionProblems(
      {
        name: 'Weather',
        colour: 'blue',
        routes: [
          { method: 'FETCH', path: '/weather', handler: 'no such', auth: 'sometimes', scopes: ['weather'], rateLimit: { limit: -1, window: 'hourly' } },
          { method: 'GET', path: '/api/v1/{x}/y', handler: 'h', auth: 'none', scopes: ['x:read'], body: { type: 'object' } },
        ],
      },
      'weather',
    );

    expect(problems).toEqual([
      "unknown key 'colour'",
      'name: must be lower-case letters, digits or -, starting with a letter',
      'routes[0].path: must be a string starting with /api/v1/',
      'routes[0].method: must be one of GET, POST, PATCH, PUT, DELETE',
      "routes[0].handler: must name an exported function of the plugin's handlers module",
      'routes[0].auth: must be one of required, optional, none',
      "routes[0].scopes: 'weather' is not a scope (<resource>:<read|write|delete|*>, read, write, delete or *)",
      'routes[0].rateLimit.limit: must be a non-negative integer (0 turns it off)',
      'routes[0].rateLimit.window: must be a number and a unit s, m, h or d (e.g. 1h)',
      'routes[1].path: the first segment after /api/v1/ must be fixed text, not a parameter',
      "routes[1].scopes: a route with auth 'none' cannot require scopes",
      'routes[1].body: a GET route has no body',
    ]);
  });

  it('wants the name to match the file and at least one route', () => {
    expect(definitionProblems({ ...good, name: 'climate' }, 'weather')).toEqual(["name: 'climate' must match the file name 'weather'"]);
    expect(definitionProblems({ name: 'weather', routes: [] }, 'weather')).toEqual(['routes: must be a non-empty array']);
    expect(definitionProblems(undefined, 'weather')).toEqual(['the default export must be a plugin object (export default definePlugin({...}))']);
  });

  it('reads rate-limit windows', () => {
    expect([windowSeconds('30s'), windowSeconds('15m'), windowSeconds('1h'), windowSeconds('2d'), windowSeconds('0h'), windowSeconds(3600)]).toEqual([30, 900, 3600, 172800, undefined, undefined]);
  });

  it('turns a declared route into a route-table entry of the plugins family', () => {
    expect(toRoute(good as never, good.routes[0] as never)).toEqual({
      method: 'GET',
      path: '/api/v1/weather/{city}',
      operation: 'weather.forecast',
      family: 'plugins',
      auth: 'optional',
      scope: 'weather:read',
      rateLimit: { name: 'plugin:weather.forecast', limit: 5, windowSeconds: 900 },
      plugin: 'weather',
    });
    expect(toRoute(good as never, { ...good.routes[0], auth: 'none', scopes: undefined, rateLimit: undefined } as never).auth).toBe('public');
  });

  it('puts the routes of the plugins folder into the route table, clashing with no core route', () => {
    expect(pluginDeclarations.map((d) => d.source)).toEqual(['plugins/ai.plugin.ts', 'plugins/greetings.plugin.ts']);
    for (const route of pluginRoutes) expect(routes).toContainEqual(route);
    expect(routes.find((r) => r.path === '/api/v1/ai/generate')).toMatchObject({ family: 'plugins', scope: 'ai:write', rateLimit: { limit: 20, windowSeconds: 3600 } });
    expect(() => assertPluginDeclarations(routes)).not.toThrow();
  });

  it('refuses a plugin route that takes a core route’s place', () => {
    const core = [...routes, { method: 'POST' as const, path: '/api/v1/greetings', operation: 'greet', family: 'auth' as const, auth: 'required' as const }];

    expect(() => assertPluginDeclarations(core)).toThrow('Plugin plugins/greetings.plugin.ts is invalid: POST /api/v1/greetings is a core route');
  });
});
