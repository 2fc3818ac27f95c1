import { beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { PDF, PNG, TEXT } from './files.js';

let tenant: TestTenant;
let user: TestUser;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
});

function presign(body: unknown, cookie = user.cookie) {
  return api('POST', '/api/v1/upload/presign', { cookie, body });
}

/** What a browser does with the presigned POST: a form with the fields, then the file last. */
async function postToStorage(presigned: { url: string; fields: Record<string, string> }, bytes: Buffer, type: string, fieldOverrides: Record<string, string> = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries({ ...presigned.fields, ...fieldOverrides })) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), 'upload');
  return fetch(presigned.url, { method: 'POST', body: form });
}

describe('POST /api/v1/upload/presign', () => {
  it('answers a presigned POST whose policy fixes the key, the type and the size range, valid 15 minutes', async () => {
    const response = await presign({ filename: 'scan.pdf', type: 'application/pdf', size: PDF.length });

    expect(response.status).toBe(201);
    const { url, fields, key, expiresAt } = response.body.data;
    expect(typeof url).toBe('string');
    expect(key).toMatch(new RegExp(`^pending/${tenant.tenantId}/${user.id}/[0-9a-f-]{36}/scan\\.pdf$`));
    expect(fields).toMatchObject({ key, 'Content-Type': 'application/pdf' });
    const policy = JSON.parse(Buffer.from(fields.Policy, 'base64').toString('utf8'));
    expect(policy.conditions).toEqual(expect.arrayContaining([['content-length-range', 1, PDF.length], { key }, { 'Content-Type': 'application/pdf' }]));
    const ttl = Date.parse(expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
  });

  it.each([
    [{ filename: 'big.pdf', type: 'application/pdf', size: 10 * 1024 * 1024 + 1 }, 400, 'FILE_TOO_LARGE'],
    [{ filename: 'page.html', type: 'text/html', size: 10 }, 400, 'FILE_TYPE_NOT_ALLOWED'],
    [{ filename: 'img.svg', type: 'image/svg+xml', size: 10 }, 400, 'FILE_TYPE_NOT_ALLOWED'],
    [{ filename: '', type: 'image/png', size: 0 }, 422, 'VALIDATION_FAILED'],
  ])('refuses %j', async (body, status, code) => {
    const response = await presign(body);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ success: false, code });
  });
});

describe('POST /api/v1/upload/complete', () => {
  it('records a file POSTed to storage and serves its bytes', async () => {
    const presigned = (await presign({ filename: 'Résumé photo.png', type: 'image/png', size: PNG.length })).body.data;
    expect((await postToStorage(presigned, PNG, 'image/png')).status).toBeLessThan(300);

    const completed = await api('POST', '/api/v1/upload/complete', { cookie: user.cookie, body: { key: presigned.key } });

    expect(completed.status).toBe(201);
    expect(completed.body.data).toMatchObject({ filename: 'Résumé photo.png', size: PNG.length, type: 'image/png' });
    const redirect = await fetch(`${baseUrl()}${completed.body.data.url}`, { headers: { Cookie: user.cookie }, redirect: 'manual' });
    const served = Buffer.from(await (await fetch(redirect.headers.get('location')!)).arrayBuffer());
    expect(served.equals(PNG)).toBe(true);
    // The pending object is gone: completing again finds nothing.
    expect((await api('POST', '/api/v1/upload/complete', { cookie: user.cookie, body: { key: presigned.key } })).status).toBe(404);
  });

  it.each([
    ['bytes of another type than presigned', TEXT, 'image/png', 'FILE_TYPE_NOT_ALLOWED'],
    ['a PNG sent as a PDF', PNG, 'application/pdf', 'FILE_TYPE_NOT_ALLOWED'],
    ['a PNG under its own type where a PDF was presigned', PNG, 'image/png', 'FILE_TYPE_NOT_ALLOWED'],
    ['an object larger than presigned', Buffer.concat([PDF, Buffer.alloc(4096)]), 'application/pdf', 'FILE_TOO_LARGE'],
  ])('deletes %s (the local store does not enforce the policy) and answers 400', async (_label, bytes, type, code) => {
    const presigned = (await presign({ filename: 'f.pdf', type: 'application/pdf', size: PDF.length })).body.data;
    expect((await postToStorage(presigned, bytes, type, { 'Content-Type': type })).status).toBeLessThan(300);

    const completed = await api('POST', '/api/v1/upload/complete', { cookie: user.cookie, body: { key: presigned.key } });

    expect(completed.status).toBe(400);
    expect(completed.body.code).toBe(code);
    expect((await api('POST', '/api/v1/upload/complete', { cookie: user.cookie, body: { key: presigned.key } })).status).toBe(404);
  });

  it("answers 404 for another user's or tenant's key and for keys the server did not make", async () => {
    const presigned = (await presign({ filename: 'a.png', type: 'image/png', size: PNG.length })).body.data;
    await postToStorage(presigned, PNG, 'image/png');
    const colleague = await newUser(tenant.admin.cookie);
    const stranger = (await newTenant()).admin;

    for (const cookie of [colleague.cookie, stranger.cookie]) {
      expect((await api('POST', '/api/v1/upload/complete', { cookie, body: { key: presigned.key } })).status).toBe(404);
    }
    const mine = `pending/${tenant.tenantId}/${user.id}`;
    for (const key of [`${mine}/../../x/a.png`, `${mine}/00000000-0000-0000-0000-000000000000/..`, `${tenant.tenantId}/x/a.png`, presigned.key.replace('pending/', '')]) {
      expect((await api('POST', '/api/v1/upload/complete', { cookie: user.cookie, body: { key } })).status).toBe(404);
    }
    expect((await api('POST', '/api/v1/upload/complete', { cookie: user.cookie, body: { key: 42 } })).status).toBe(422);
    // Still there for its owner.
    expect((await api('POST', '/api/v1/upload/complete', { cookie: user.cookie, body: { key: presigned.key } })).status).toBe(201);
  });
});
