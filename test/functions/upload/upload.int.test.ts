import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { JPEG, multipart, PDF, PNG, TEXT, type Part } from './files.js';

let tenant: TestTenant;
let user: TestUser;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
});

function upload(parts: Part[], options: { cookie?: string; apiKey?: string; path?: string } = {}) {
  const { body, contentType } = multipart(parts);
  return api('POST', options.path ?? '/api/v1/upload', { rawBody: body, headers: { 'Content-Type': contentType }, cookie: options.cookie ?? (options.apiKey ? undefined : user.cookie), apiKey: options.apiKey });
}

/**
 * A request declaring a body over 6 MB: the gateway answers before reading it (and closes the
 * connection), so the body is not sent at all — a client still writing it could see the socket
 * close before the answer.
 */
function declaredOver6MB(cookie: string): Promise<{ status: number; body: string }> {
  const { contentType } = multipart([]);
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl()}/api/v1/upload`, { method: 'POST', headers: { Cookie: cookie, 'Content-Type': contentType, 'Content-Length': String(6 * 1024 * 1024 + 1) } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

async function download(url: string, cookie = user.cookie) {
  return fetch(`${baseUrl()}${url}`, { headers: { Cookie: cookie }, redirect: 'manual' });
}

async function fetchBytes(url: string, cookie = user.cookie): Promise<{ bytes: Buffer; type: string | null; disposition: string | null }> {
  const redirect = await download(url, cookie);
  expect(redirect.status).toBe(302);
  expect(redirect.headers.get('x-content-type-options')).toBe('nosniff');
  const object = await fetch(redirect.headers.get('location')!);
  expect(object.status).toBe(200);
  return { bytes: Buffer.from(await object.arrayBuffer()), type: object.headers.get('content-type'), disposition: object.headers.get('content-disposition') };
}

describe('POST /api/v1/upload', () => {
  it.each([
    ['photo.png', 'image/png', PNG],
    ['photo.jpg', 'image/jpeg', JPEG],
    ['report.pdf', 'application/pdf', PDF],
  ])('stores %s and serves the same bytes through data.url', async (filename, type, bytes) => {
    const response = await upload([{ name: 'file', filename, type, data: bytes }]);

    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ filename, size: bytes.length, type });
    expect(response.body.data.url).toMatch(/^\/api\/v1\/files\/upl_[0-9a-f]{32}$/);
    const served = await fetchBytes(response.body.data.url);
    expect(served.bytes.equals(bytes)).toBe(true);
    expect(served.type).toBe(type);
    expect(served.disposition).toMatch(type === 'application/pdf' ? /^attachment;/ : /^inline;/);
  });

  it('judges the type from the bytes when the declared type says nothing', async () => {
    const response = await upload([{ name: 'file', filename: 'no-extension', type: 'application/octet-stream', data: PNG }]);
    expect(response.status).toBe(201);
    expect(response.body.data.type).toBe('image/png');
  });

  it.each([
    ['a text file named .png', [{ name: 'file', filename: 'evil.png', type: 'image/png', data: TEXT }], 'FILE_TYPE_NOT_ALLOWED'],
    ['a PNG declared as PDF', [{ name: 'file', filename: 'doc.pdf', type: 'application/pdf', data: PNG }], 'FILE_TYPE_NOT_ALLOWED'],
    ['an empty file', [{ name: 'file', filename: 'empty.png', type: 'image/png', data: Buffer.alloc(0) }], 'EMPTY_FILE'],
    ['no file part', [{ name: 'title', data: 'just a field' }], 'NO_FILE'],
    ['a file in another part', [{ name: 'upload', filename: 'a.png', type: 'image/png', data: PNG }], 'NO_FILE'],
  ] as [string, Part[], string][])('refuses %s with 400 and an error string', async (_label, parts, code) => {
    const response = await upload(parts);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code });
    expect(typeof response.body.error).toBe('string');
  });

  it('refuses a body that is not multipart', async () => {
    const response = await api('POST', '/api/v1/upload', { cookie: user.cookie, body: { file: 'x' } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_REQUEST');
  });

  it('answers 413 over the 6 MB request ceiling, and over what a function accepts as multipart', async () => {
    const overGateway = await declaredOver6MB(user.cookie);
    expect(overGateway.status).toBe(413);
    expect(JSON.parse(overGateway.body).code).toBe('PAYLOAD_TOO_LARGE');
    const overFunction = await upload([{ name: 'file', filename: 'big.png', type: 'image/png', data: Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]) }]);
    expect(overFunction.status).toBe(413);
    expect(overFunction.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(overFunction.body.error).toContain('/api/v1/upload/presign');
  });

  it('keeps a traversal-looking filename out of the key', async () => {
    const response = await upload([{ name: 'file', filename: '../../other-tenant/x/..%2f.png', type: 'image/png', data: PNG }]);
    expect(response.status).toBe(201);
    const listed = await api('GET', '/api/v1/uploads?limit=100', { cookie: user.cookie });
    const record = listed.body.data.find((r: { id: string }) => response.body.data.url.endsWith(r.id));
    expect(record.key).toMatch(new RegExp(`^${tenant.tenantId}/[0-9a-f-]{36}/[A-Za-z0-9][A-Za-z0-9._-]*$`));
    expect(record.key).not.toContain('..');
  });
});

describe('POST /api/v1/upload/multiple', () => {
  it('stores up to ten files and answers each', async () => {
    const response = await upload(
      [
        { name: 'files', filename: 'a.png', type: 'image/png', data: PNG },
        { name: 'files', filename: 'b.pdf', type: 'application/pdf', data: PDF },
      ],
      { path: '/api/v1/upload/multiple' },
    );
    expect(response.status).toBe(201);
    expect(response.body.data.files.map((f: { filename: string; type: string }) => [f.filename, f.type])).toEqual([
      ['a.png', 'image/png'],
      ['b.pdf', 'application/pdf'],
    ]);
  });

  it('refuses eleven files and stores none of them', async () => {
    const before = (await api('GET', '/api/v1/uploads', { cookie: user.cookie })).body.pagination.total;
    const parts = Array.from({ length: 11 }, (_, i) => ({ name: 'files', filename: `f${i}.png`, type: 'image/png', data: PNG }));
    const response = await upload(parts, { path: '/api/v1/upload/multiple' });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('TOO_MANY_FILES');
    expect((await api('GET', '/api/v1/uploads', { cookie: user.cookie })).body.pagination.total).toBe(before);
  });

  it('stores nothing when one file of several is refused', async () => {
    const before = (await api('GET', '/api/v1/uploads', { cookie: user.cookie })).body.pagination.total;
    const response = await upload(
      [
        { name: 'files', filename: 'ok.png', type: 'image/png', data: PNG },
        { name: 'files', filename: 'bad.png', type: 'image/png', data: TEXT },
      ],
      { path: '/api/v1/upload/multiple' },
    );
    expect(response.status).toBe(400);
    expect((await api('GET', '/api/v1/uploads', { cookie: user.cookie })).body.pagination.total).toBe(before);
  });
});

describe('who may upload and read', () => {
  it('needs credentials (401) and the uploads:write scope (403 for an entity-only key)', async () => {
    const { body, contentType } = multipart([{ name: 'file', filename: 'a.png', type: 'image/png', data: PNG }]);
    const anonymous = await api('POST', '/api/v1/upload', { rawBody: body, headers: { 'Content-Type': contentType } });
    expect(anonymous.status).toBe(401);

    const key = await api('POST', '/api/v1/api-keys', { cookie: user.cookie, body: { name: 'tasks only', scopes: ['tasks:read', 'tasks:write'] } });
    expect(key.status).toBe(201);
    const refused = await upload([{ name: 'file', filename: 'a.png', type: 'image/png', data: PNG }], { apiKey: key.body.data.key });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('INSUFFICIENT_PERMISSIONS');

    const uploadKey = await api('POST', '/api/v1/api-keys', { cookie: user.cookie, body: { name: 'uploads', scopes: ['uploads:write'] } });
    const accepted = await upload([{ name: 'file', filename: 'a.png', type: 'image/png', data: PNG }], { apiKey: uploadKey.body.data.key });
    expect(accepted.status).toBe(201);
  });

  it("answers 404 for another user's or another tenant's file, and for traversal-looking ids", async () => {
    const mine = await upload([{ name: 'file', filename: 'mine.png', type: 'image/png', data: PNG }]);
    const id = mine.body.data.url.split('/').pop();
    const colleague = await newUser(tenant.admin.cookie);
    const stranger = (await newTenant()).admin;

    for (const cookie of [colleague.cookie, stranger.cookie]) {
      expect((await download(mine.body.data.url, cookie)).status).toBe(404);
      expect((await api('DELETE', `/api/v1/uploads/${id}`, { cookie })).status).toBe(404);
    }
    for (const path of ['/api/v1/files/..%2F..%2Fetc%2Fpasswd', '/api/v1/files/upl_..', `/api/v1/files/${id}%2F..`, '/api/v1/files/%2e%2e']) {
      expect((await api('GET', path, { cookie: user.cookie })).status).toBe(404);
    }
    expect((await download(mine.body.data.url)).status).toBe(302);
  });
});

describe('GET and DELETE /api/v1/uploads', () => {
  it('lists the caller\'s uploads newest first with cursor pagination, and deletes one with its object', async () => {
    const owner = await newUser(tenant.admin.cookie);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await upload([{ name: 'file', filename: `n${i}.png`, type: 'image/png', data: PNG }], { cookie: owner.cookie });
      ids.push(response.body.data.id);
    }
    const first = await api('GET', '/api/v1/uploads?limit=2', { cookie: owner.cookie });
    expect(first.status).toBe(200);
    expect(first.body.pagination).toMatchObject({ page: 1, limit: 2, total: 3, totalPages: 2, hasNext: true, hasPrev: false });
    expect(first.headers.get('x-total-count')).toBe('3');
    expect(first.body.data.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.data[0]).toMatchObject({ filename: 'n2.png', size: PNG.length, type: 'image/png', ownerId: owner.id, tenantId: tenant.tenantId });

    const second = await api('GET', `/api/v1/uploads?limit=2&cursor=${first.body.pagination.nextCursor}`, { cookie: owner.cookie });
    expect(second.body.data.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    expect(second.body.pagination).toMatchObject({ page: 2, hasNext: false, nextCursor: null });
    expect((await api('GET', '/api/v1/uploads?cursor=bm9wZQ', { cookie: owner.cookie })).status).toBe(400);

    const url = first.body.data[0].url;
    const location = (await download(url, owner.cookie)).headers.get('location')!;
    const removed = await api('DELETE', `/api/v1/uploads/${ids[2]}`, { cookie: owner.cookie });
    expect(removed.status).toBe(200);
    expect((await download(url, owner.cookie)).status).toBe(404);
    expect((await fetch(location)).status).toBe(404);
    expect((await api('GET', '/api/v1/uploads', { cookie: owner.cookie })).body.pagination.total).toBe(2);
  });
});
