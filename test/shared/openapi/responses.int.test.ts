/**
 * Real requests through the running API, at least one per route of the route table, each
 * response checked against the document the API serves: a mismatch between the API and its
 * description fails here. Routes without a sample below are still probed (without credentials)
 * and their answer checked, so a route added to the table is never left out.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { matchPath, routeKey, routes } from '../../../shared/routes.js';
import { api, baseUrl, type CallOptions } from '../../support/http.js';
import { loginAsOperator, newTenant, newUser, uniqueEmail } from '../../support/identity.js';
import { ResponseValidator } from '../../support/openapi.js';

let validator: ResponseValidator;
const covered = new Set<string>();
const failures: string[] = [];

async function call(method: string, path: string, options: CallOptions & { redirect?: 'manual' } = {}) {
  const res = options.redirect ? await redirectOf(method, path) : await api(method, path, options);
  const match = matchPath(method, path.split('?')[0]);
  if (match?.route) covered.add(routeKey(match.route.method, match.route.path));
  try {
    validator.check(method, path, res.status, res.headers.get('content-type'), res.status === 304 ? undefined : res.body);
  } catch (error) {
    failures.push((error as Error).message);
  }
  return res;
}

/** A redirect as the API answers it (api() follows redirects, as a browser does). */
async function redirectOf(method: string, path: string) {
  const response = await fetch(`${baseUrl()}${path}`, { method, redirect: 'manual' });
  return { status: response.status, headers: response.headers, body: (await response.text()) || undefined };
}

beforeAll(async () => {
  const res = await api('GET', '/api/v1/openapi.json');
  validator = new ResponseValidator(res.body);
});

describe('the running API answers as its OpenAPI document says', () => {
  it('on a sample of requests covering every route', async () => {
    const { admin } = await newTenant();
    const session = admin.cookie;
    const operator = await loginAsOperator();

    // System: health, docs, auth, users, tenants.
    await call('GET', '/api/health');
    const doc = await call('GET', '/api/v1/openapi.json');
    await call('GET', '/api/v1/openapi.json', { headers: { 'If-None-Match': doc.headers.get('etag')! } });
    await call('GET', '/api/docs');
    await call('GET', '/api/docs/init.js');
    await call('GET', '/api/docs/missing.js');
    await call('POST', '/api/v1/auth/login', { body: { email: admin.email, password: admin.password } });
    await call('POST', '/api/v1/auth/login', { body: { email: admin.email, password: 'wrong password' } });
    await call('POST', '/api/v1/auth/login', { rawBody: '{not json', headers: { 'Content-Type': 'application/json' } });
    // Console sign-in through an identity provider (none configured here): a browser's redirects, not followed.
    await call('GET', '/api/v1/auth/oidc');
    await call('GET', '/api/v1/auth/oidc/callback?code=probe&state=probe', { redirect: 'manual' });
    await call('GET', '/api/v1/users/me', { cookie: session });
    await call('GET', '/api/v1/users/me');
    await call('PATCH', '/api/v1/users/me', { cookie: session, body: { preferences: { theme: 'dark' } } });
    await call('GET', '/api/v1/users', { cookie: session });
    await call('GET', '/api/v1/users', { cookie: (await newUser(session)).cookie });
    const created = await call('POST', '/api/v1/users', { cookie: session, body: { email: uniqueEmail('doc'), name: 'Doc User', password: 'a long password 1', role: 'user' } });
    await call('POST', '/api/v1/users', { cookie: session, body: { email: 'not an email', name: '' } });
    const userId = created.body.data.id;
    await call('GET', `/api/v1/users/${userId}`, { cookie: session });
    await call('PATCH', `/api/v1/users/${userId}`, { cookie: session, body: { name: 'Renamed' } });
    await call('DELETE', `/api/v1/users/${userId}`, { cookie: session });
    await call('GET', '/api/v1/users/usr_missing', { cookie: session });
    await call('GET', '/api/v1/tenants/me', { cookie: session });
    await call('PATCH', '/api/v1/tenants/me', { cookie: session, body: { settings: { locale: 'en' } } });
    await call('POST', '/api/v1/tenants', { cookie: operator, body: { name: 'Doc tenant', admin: { email: uniqueEmail('docadmin'), name: 'Doc Admin', password: 'a long password 2' } } });
    await call('POST', '/api/v1/tenants', { cookie: session, body: { name: 'Not allowed', admin: { email: uniqueEmail('x'), name: 'X', password: 'a long password 3' } } });

    // API keys.
    const bare = await call('POST', '/api/v1/keys', { cookie: session, body: { name: 'bare', scopes: ['read'] } });
    await call('GET', '/api/v1/keys', { cookie: session });
    await call('DELETE', `/api/v1/keys/${bare.body.data.id}`, { cookie: session });
    const full = await call('POST', '/api/v1/api-keys', { cookie: session, body: { name: 'everything', scopes: ['*'] } });
    const apiKey: string = full.body.data.key;
    const keyId: string = full.body.data.id;
    const spare = await call('POST', '/api/v1/api-keys', { cookie: session, body: { name: 'spare', scopes: ['tasks:read'] } });
    await call('POST', '/api/v1/api-keys', { cookie: session, body: { name: 'bad', scopes: ['nope:read'] } });
    await call('GET', '/api/v1/api-keys', { cookie: session });
    await call('GET', '/api/v1/api-keys', { apiKey });
    await call('GET', `/api/v1/api-keys/${keyId}`, { cookie: session });
    await call('PATCH', `/api/v1/api-keys/${spare.body.data.id}`, { cookie: session, body: { name: 'spare renamed' } });
    await call('GET', `/api/v1/api-keys/${keyId}/audit`, { cookie: session });
    await call('DELETE', `/api/v1/api-keys/${spare.body.data.id}`, { cookie: session });
    await call('GET', '/api/v1/tasks', { apiKey: 'sk_live_' + 'x'.repeat(40) });

    // Entities, with the key.
    const task = await call('POST', '/api/v1/tasks', { apiKey, body: { title: 'Documented', priority: 'high' } });
    const taskId: string = task.body.data.id;
    await call('POST', '/api/v1/tasks', { apiKey, body: { priority: 'urgent', color: 1 } });
    await call('GET', `/api/v1/tasks?filter=${encodeURIComponent(JSON.stringify({ priority: { $in: ['high'] } }))}&limit=5`, { apiKey });
    await call('GET', `/api/v1/tasks?filter=${encodeURIComponent('{"nope":1}')}`, { apiKey });
    await call('GET', '/api/v1/tasks?sort=nope', { apiKey });
    await call('GET', '/api/v1/tasks?limit=0', { apiKey });
    await call('GET', '/api/v1/tasks');
    await call('OPTIONS', '/api/v1/tasks', { apiKey });
    await call('GET', `/api/v1/tasks/${taskId}?include=assignee`, { apiKey });
    await call('GET', '/api/v1/tasks/tsk_missing', { apiKey });
    await call('PATCH', `/api/v1/tasks/${taskId}`, { apiKey, body: { status: 'completed', metadata: { stage: 'done' } } });
    await call('PATCH', `/api/v1/tasks/${taskId}`, { apiKey, body: { title: null } });
    await call('POST', `/api/v1/tasks/${taskId}/comments`, { apiKey, body: { body: 'A comment' } });
    await call('GET', `/api/v1/tasks/${taskId}/comments`, { apiKey });
    await call('POST', `/api/v1/tasks/${taskId}/tags`, { apiKey, body: { name: 'docs', color: '#3366ff' } });
    await call('GET', `/api/v1/tasks/${taskId}/tags`, { apiKey });
    await call('PATCH', '/api/v1/tasks', { apiKey, body: { updates: [{ id: taskId, priority: 'low' }, { id: 'tsk_missing', priority: 'low' }] } });
    const second = await call('POST', '/api/v1/tasks', { apiKey, body: { title: 'Second' } });
    await call('DELETE', '/api/v1/tasks', { apiKey, body: { ids: [second.body.data.id] } });
    await call('DELETE', `/api/v1/tasks/${taskId}`, { apiKey });
    const product = await call('POST', '/api/v1/products', { apiKey, body: { name: 'Lamp', price: 12.5, status: 'active' } });
    await call('GET', '/api/v1/products?limit=2');
    await call('GET', `/api/v1/products/${product.body.data.id}`);
    await call('OPTIONS', '/api/v1/products');
    await call('DELETE', `/api/v1/products/${product.body.data.id}`, { apiKey });
    await call('POST', '/api/v1/orders', { apiKey, body: { total: 10 } });
    await call('GET', '/api/v1/orders', { apiKey });
    await call('POST', '/api/v1/customers', { apiKey, body: { name: 'Ada', email: 'ada@example.com' } });

    // Import, batch, GraphQL.
    await call('POST', '/api/v1/import/tasks', { apiKey, body: { tasks: [{ title: 'Imported' }, { title: '' }] } });
    await call('POST', '/api/v1/import/products', { apiKey, body: { items: [{ name: 'Chair', price: 30 }], options: { skipInvalid: true, returnFailures: true } } });
    await call('POST', '/api/v1/batch', { apiKey, body: { requests: [{ id: 'a', method: 'POST', path: '/tasks', body: { title: 'In a batch' } }, { id: 'b', method: 'GET', path: '/tasks/tsk_missing' }] } });
    await call('POST', '/api/v1/graphql', { apiKey, body: { query: '{ tasks(limit: 2) { edges { node { id title } } } }' } });
    await call('POST', '/api/v1/graphql', { apiKey, body: { query: '{ nope' } });
    await call('GET', `/api/v1/graphql?query=${encodeURIComponent('{ tasks(limit: 1) { edges { node { id } } } }')}`, { apiKey });

    // Sessions last: refresh replaces the session, logout ends it.
    const refreshed = await call('POST', '/api/v1/auth/refresh', { cookie: session });
    const again = await call('POST', '/api/v1/auth', { cookie: refreshed.headers.getSetCookie()[0].split(';')[0] });
    await call('POST', '/api/v1/auth/logout', { cookie: again.headers.getSetCookie()[0].split(';')[0] });

    // Any route of the table without a sample above: probed without credentials.
    for (const route of routes) {
      const key = routeKey(route.method, route.path);
      if (covered.has(key)) continue;
      // An entity whose path the template itself serves (stream/tasks is a static route of its own).
      const concrete = (entity: string) => route.path.replace('{entity}', entity).replace(/\{[^}]+\}/g, 'probe');
      const path = ['tasks', 'customers'].map(concrete).find((p) => matchPath(route.method, p)?.path === route.path) ?? concrete('tasks');
      await call(route.method, path, ['POST', 'PATCH', 'PUT'].includes(route.method) ? { body: {} } : {});
    }

    expect(failures).toEqual([]);
    expect(routes.map((r) => routeKey(r.method, r.path)).filter((k) => !covered.has(k))).toEqual([]);
    expect(validator.checked.length).toBeGreaterThanOrEqual(routes.length);
    const statuses = new Set(validator.checked.map((c) => c.status));
    for (const status of [200, 201, 304, 400, 401, 403, 404, 422]) expect(statuses).toContain(status);
  }, 120_000);
});
