import { describe, expect, it } from 'vitest';
import { api, baseUrl } from '../../support/http.js';

describe('GET /api/v1/openapi.json', () => {
  it('serves the OpenAPI 3.1 document publicly, cacheable, with an ETag', async () => {
    const res = await api('GET', '/api/v1/openapi.json');

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('etag')).toBeTruthy();
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/api/v1/tasks', '/api/v1/tasks/{id}', '/api/health', '/api/docs']));
  });

  it('answers 304 to If-None-Match with the current ETag', async () => {
    const first = await api('GET', '/api/v1/openapi.json');

    const again = await api('GET', '/api/v1/openapi.json', { headers: { 'If-None-Match': first.headers.get('etag')! } });

    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('is the same document on every request (deterministic)', async () => {
    const [a, b] = await Promise.all([api('GET', '/api/v1/openapi.json'), api('GET', '/api/v1/openapi.json')]);

    expect(a.text).toBe(b.text);
  });
});

describe('GET /api/docs', () => {
  it('serves the reference page with a strict content security policy and its assets on the same origin', async () => {
    const res = await api('GET', '/api/docs');

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.text).toContain('<script src="/api/docs/swagger-ui-bundle.js"></script>');
    expect(res.text).not.toMatch(/https?:\/\//);
  });

  it('serves the page assets from the API itself', async () => {
    const [bundle, css, init] = await Promise.all([
      fetch(`${baseUrl()}/api/docs/swagger-ui-bundle.js`),
      fetch(`${baseUrl()}/api/docs/swagger-ui.css`),
      fetch(`${baseUrl()}/api/docs/init.js`),
    ]);

    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await init.text()).toContain("new URL('../v1/openapi.json'");
  });

  it('answers 404 in the error envelope for an asset it does not have', async () => {
    const res = await api('GET', '/api/docs/..%2Fpackage.json');

    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });
});
