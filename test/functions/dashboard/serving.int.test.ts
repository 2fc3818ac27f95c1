/**
 * The dashboard's files from the local gateway, as API Gateway serves them: the page revalidated
 * (ETag, 304), hashed assets cached for a year, the CSP on each, gzip for clients that take it,
 * and never counted against the caller's rate limit.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { readManifest } from '../../../dashboard/build.js';
import { api, baseUrl } from '../../support/http.js';
import { newTenant } from '../../support/identity.js';

/** A GET whose body stays as sent (fetch would decompress it). */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl()}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /dashboard', () => {
  it('answers the page to be revalidated, with a strict CSP and no inline script', async () => {
    const page = await api('GET', '/dashboard');
    const again = await api('GET', '/dashboard', { headers: { 'If-None-Match': page.headers.get('etag')! } });

    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'; script-src 'self'; style-src 'self'/);
    expect(page.text).toMatch(/<script type="module" src="dashboard\/main-[A-Z0-9]+\.js"><\/script>/);
    expect(page.text).not.toMatch(/<script>|<style>|style="/);
    expect(again.status).toBe(304);
  });

  it('answers the hashed assets cached for a year, and 404 for any other name', async () => {
    const { entry } = readManifest();
    const script = await api('GET', `/dashboard/${entry.script}`);
    const style = await api('GET', `/dashboard/${entry.style}`);
    const missing = await api('GET', '/dashboard/main-OLD.js');

    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(style.headers.get('content-type')).toMatch(/^text\/css/);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });

  it('compresses with gzip for a client that accepts it, and not otherwise', async () => {
    const { entry } = readManifest();
    const gzipped = await rawGet(`/dashboard/${entry.script}`, { 'Accept-Encoding': 'gzip, br' });
    const plain = await rawGet(`/dashboard/${entry.script}`, {});
    const { gunzipSync } = await import('node:zlib');

    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toContain('Accept-Encoding');
    expect(gzipped.bytes.length).toBeLessThan(plain.bytes.length / 2);
    expect(gunzipSync(gzipped.bytes).equals(plain.bytes)).toBe(true);
    expect(plain.headers['content-encoding']).toBeUndefined();
  });

  it('is not counted against the signed-in user\'s rate limit', async () => {
    const { admin } = await newTenant();
    const before = await api('GET', '/api/v1/users/me', { cookie: admin.cookie });
    for (let i = 0; i < 3; i++) await api('GET', '/dashboard', { cookie: admin.cookie });
    const after = await api('GET', '/api/v1/users/me', { cookie: admin.cookie });

    expect(Number(before.headers.get('x-ratelimit-remaining')) - Number(after.headers.get('x-ratelimit-remaining'))).toBe(1);
  });
});
